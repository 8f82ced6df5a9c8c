#include "k8s/multi_node_manifests.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "k8s/router_manifests.h"

namespace gw {
namespace {

// Whether the groups are scaled (between min and max replicas, never from zero here).
bool autoscaled(const ManifestInput& in) { return in.max_replicas > in.min_replicas && in.min_replicas > 0; }

// One pod of a group: the leader (Ray head and vLLM's server, probed on /health) or a worker
// (joins the leader's Ray cluster); both fetch the weights, as each node loads its stages.
std::string pod_template(const ManifestInput& in, const std::string& name, bool leader, const std::string& uri, const std::string& target) {
  const std::string image = in.image.empty() ? kVllmImage : in.image;
  const std::string helper = "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh";
  // $(LWS_GROUP_SIZE) and $(LWS_LEADER_ADDRESS): set by the LeaderWorkerSet controller in every
  // container, expanded by the kubelet in args.
  const std::string command =
      leader ? fmt::format("{} leader --ray_cluster_size=$(LWS_GROUP_SIZE) && exec vllm serve {} --served-model-name {} --port 8000 "
                           "--tensor-parallel-size {} --pipeline-parallel-size {} --max-num-seqs {} --max-num-batched-tokens {} "
                           "--gpu-memory-utilization {:.2f}",
                           helper, target, in.model_name.empty() ? name : in.model_name, in.gpus_per_replica, in.nodes_per_replica,
                           in.max_batch, in.token_budget, in.gpu_memory_utilization)
             : fmt::format("{} worker --ray_address=$(LWS_LEADER_ADDRESS)", helper);
  const std::string probes =
      !leader ? ""
              : fmt::format("            startupProbe:\n"
                            "              httpGet: {{path: /health, port: http}}\n"
                            "              periodSeconds: {}\n"
                            "              failureThreshold: {}\n"
                            "            readinessProbe:\n"
                            "              httpGet: {{path: /health, port: http}}\n"
                            "              periodSeconds: 5\n"
                            "              failureThreshold: 3\n",
                            kStartupProbePeriodS, startup_probe_failures(in));
  return fmt::format(
      "      metadata:\n"
      "        labels: {{gpuwise.dev/service: {0}, gpuwise.dev/role: {1}}}\n"
      "      spec:\n"
      "        terminationGracePeriodSeconds: {2}\n"
      "{10}"
      "{3}"
      "        containers:\n"
      "          - name: {1}\n"
      "            image: {4}\n"
      "            command: [sh, -c]\n"
      "            args: [{5}]\n"
      "{6}"
      "{7}"
      "{8}"
      "{9}",
      name, leader ? "leader" : "worker", static_cast<long long>(std::ceil(in.termination_grace_s)), weights_init_container(uri, target, 8),
      yaml_quoted(image), yaml_quoted(command), leader ? "            ports: [{name: http, containerPort: 8000}]\n" : "",
      container_resources(in, 12), probes, pod_volumes(in, 8), node_placement(in, 8));
}

std::string leaderworkerset(const ManifestInput& in, const std::string& name) {
  const std::string model = dns_label(in.model_name.empty() ? in.service : in.model_name);
  const std::string uri = weights_uri(in, model);
  const std::string target = "/models/" + model;
  std::string out = manifest_header(in, "LeaderWorkerSet (leaderworkerset.x-k8s.io/v1)");
  out += fmt::format(
      "# A replica spans {0} nodes: a group of {0} pods, one per node with its {1} GPUs. The leader starts the Ray head\n"
      "# and vLLM's server (tensor parallel {1} within a node, pipeline parallel {0} across nodes); the workers join it.\n"
      "# Source: {2}.\n"
      "# Needs the LeaderWorkerSet controller in the cluster. A pod that fails restarts its whole group\n"
      "# (RecreateGroupOnPodRestart): a replica without one of its stages serves nothing.\n"
      "# {3}\n",
      in.nodes_per_replica, in.gpus_per_replica, kLeaderWorkerSetSource,
      autoscaled(in)
          ? fmt::format("Starts at the plan's {} replicas; the KEDA ScaledObject scales whole groups, {}..{}, on the leaders' queue "
                        "depth (its scale subresource).",
                        in.replicas, in.min_replicas, in.max_replicas)
          : fmt::format("Replicas fixed at the plan's {}.", in.replicas));
  out += fmt::format("# Weights: {} copied to {} on every pod of a group ({}).\n", uri, target,
                     in.model_uri.empty() ? "a placeholder: set services[].scaling.model_uri to the versioned path"
                                          : "services[].scaling.model_uri");
  if (!in.why_resources.empty()) out += fmt::format("# Requests per pod: {}.\n", in.why_resources);
  out += fmt::format(
      "apiVersion: leaderworkerset.x-k8s.io/v1\n"
      "kind: LeaderWorkerSet\n"
      "metadata:\n"
      "  name: {0}\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, gpuwise.dev/service: {0}}}\n"
      "spec:\n"
      "  replicas: {1}\n"
      "  startupPolicy: LeaderCreated\n"
      "  rolloutStrategy:\n"
      "    type: RollingUpdate\n"
      "    rollingUpdateConfiguration: {{maxUnavailable: 1, maxSurge: 0}}\n"
      "  leaderWorkerTemplate:\n"
      "    size: {2}\n"
      "    restartPolicy: RecreateGroupOnPodRestart\n"
      "    leaderTemplate:\n"
      "{3}"
      "    workerTemplate:\n"
      "{4}",
      name, in.replicas, in.nodes_per_replica, pod_template(in, name, true, uri, target), pod_template(in, name, false, uri, target));
  return out;
}

}  // namespace

std::vector<Manifest> multi_node_manifests(const ManifestInput& in) {
  const std::string name = dns_label(in.service);
  const int replicas = std::max(in.replicas, in.max_replicas);  // the most the nodes must hold
  const int gpu_limit = replicas * in.nodes_per_replica * in.gpus_per_replica;
  std::vector<Manifest> out = {
      {name + "-leaderworkerset.yaml", leaderworkerset(in, name),
       fmt::format("{} replica(s) of {} pods x {} x {} (a group per replica, one pod per node); requests per pod {:.1f} CPU, {:.0f} GiB",
                   in.replicas, in.nodes_per_replica, in.gpus_per_replica, in.accelerator, in.cpu_per_replica,
                   std::floor(in.memory_gib_per_replica))},
  };
  // Clients reach the leaders through the vLLM Router where the plan was verified behind it, else
  // through their Service.
  if (router_in_front(in))
    for (auto& m : router_manifests(in, name)) out.push_back(std::move(m));
  else
    out.push_back({name + "-service.yaml", service_manifest(in, "leader"), "ClusterIP Service on port 8000, the groups' leaders"});
  // Only the leader runs vLLM's server, so the queue gauges are the group's; KEDA and the HPA
  // scale the LeaderWorkerSet through its scale subresource (whole groups). Never to zero here.
  if (autoscaled(in))
    for (auto& m : autoscaler_manifests(in, ScaleTarget{"leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"})) out.push_back(std::move(m));
  out.push_back(nodes_manifest(in, gpu_limit,
                               fmt::format("{} replicas x {} nodes x {} {}", replicas, in.nodes_per_replica, in.gpus_per_replica,
                                           accelerator_words(in)),
                               name, fmt::format("nodes of {} for {} {}", yaml_quoted_list(in.instance_types), gpu_limit, accelerator_words(in))));
  return out;
}

}  // namespace gw
