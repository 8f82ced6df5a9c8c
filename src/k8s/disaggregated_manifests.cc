#include "k8s/disaggregated_manifests.h"

#include <fmt/format.h>

#include <algorithm>

namespace gw {
namespace {

std::string header(const DisaggregatedManifestInput& in, const std::string& what) {
  return fmt::format(
      "# {} for service {}, written by gpuwise plan --emit-k8s.\n"
      "# Disaggregated: {} prefill replica(s) of {} x {} and {} decode replica(s) of {} x {}; KV over {}.\n",
      what, yaml_quoted(in.prefill.service), in.prefill.replicas, in.prefill.gpus_per_replica, in.prefill.accelerator, in.decode.replicas,
      in.decode.gpus_per_replica, in.decode.accelerator, in.link);
}

std::string labels(const std::string& service, const std::string& role) {
  return fmt::format("gpuwise.dev/service: {}, gpuwise.dev/role: {}", service, role);
}

// The pool's Deployment, its plan, scaling and link said after the header.
std::string pool_deployment(const DisaggregatedManifestInput& in, ManifestInput pool) {
  const std::string name = workload_name(pool);
  const std::string scaling =
      in.autoscaled ? fmt::format("Starts at the plan's {} replicas; {}-keda-scaledobject.yaml (or {}-hpa.yaml) scales it {}..{} on {}",
                                  pool.replicas, name, name, pool.min_replicas, pool.max_replicas,
                                  pool.duty_cycle_target_pct > 0 ? "its GPUs' duty cycle" : "its queue depth")
                    : fmt::format("Replicas fixed at its {}", pool.replicas);
  pool.pool_note = fmt::format("# The plan: {}.\n# {}: {}.\n"
                               "# KV: the plan assumed {} between the pools; without the fabric in the pods (on EKS the EFA device\n"
                               "# plugin's vpc.amazonaws.com/efa devices) NIXL sends over the pod network and the transfers take longer.\n",
                               in.why_layout, scaling, in.why_scaling, in.link);
  if (in.planned_kv_pulled_between_steps)
    // NixlConnector's transfers are asynchronous (vLLM's NixlConnector usage guide, read
    // 2026-12-06): the decode pod keeps stepping its other requests while a prompt's KV arrives.
    pool.pool_note += "# KV transfer: the plan was sized for an engine that pulls each prompt's KV between its decode steps\n"
                      "# (disaggregation.kv_transfer: between_steps); the vLLM here receives it asynchronously through\n"
                      "# NixlConnector while its other requests step, so its decode pods spend less time than planned.\n"
                      "# To run the engine the spec describes, put its image and arguments in place of vLLM's.\n";
  return deployment_manifest(pool);
}

// A pool's pods as one scrape target: headless, as clients call the router and the router finds
// pods through the API; a ServiceMonitor on it labels the pool's vLLM series with its name.
std::string pool_service(const DisaggregatedManifestInput& in, const ManifestInput& pool) {
  const std::string service = dns_label(pool.service), name = workload_name(pool);
  std::string out = header(in, fmt::format("Service (v1): the {} pool's pods, for their metrics", pool.role));
  out += fmt::format(
      "# Headless and not for clients (they call the router's Service, {0}). Scraped through a ServiceMonitor (Prometheus\n"
      "# Operator), the pool's vLLM series carry service=\"{1}\", which {1}-keda-scaledobject.yaml's query selects.\n",
      service, name);
  out += service_yaml(name, labels(service, pool.role), labels(service, pool.role), true);
  return out;
}

// The vLLM Router in its disaggregated mode: a prompt to a prefill pod, its decoding to a decode pod.
VllmRouterInput router_of(const DisaggregatedManifestInput& in, const std::string& name) {
  VllmRouterInput r;
  r.name = name;
  r.header = [&in](const std::string& what) { return header(in, what); };
  r.pod_labels = labels(name, "router");
  r.mode_args = "--vllm-pd-disaggregation, ";
  r.discovery_args = fmt::format(
      "                 --prefill-selector, gpuwise.dev/service={0}, gpuwise.dev/role=prefill,\n"
      "                 --decode-selector, gpuwise.dev/service={0}, gpuwise.dev/role=decode,\n"
      "                 --prefill-policy, {1}, --decode-policy, {1},\n",
      name, in.router_policy);
  r.how_it_routes =
      in.router_policy == "power_of_two"
          ? "# Sends each prompt to the prefill pod with the fewer requests in flight of two drawn at random, then its decoding\n"
            "# to a decode pod likewise (power_of_two).\n"
          : in.router_policy == "round_robin"
              ? "# Sends each prompt to the next prefill pod in turn, then its decoding to the next decode pod (round_robin).\n"
              : fmt::format("# Sends each prompt to a prefill pod and its decoding to a decode pod by {}.\n", in.router_policy);
  r.how_it_routes += in.router_note.empty() ? "# The plan's simulation routed both halves so.\n" : "# Note: " + in.router_note + ".\n";
  r.image = in.router_image;
  r.replicas = in.router_replicas;
  return r;
}

}  // namespace

std::vector<Manifest> disaggregated_manifests(const DisaggregatedManifestInput& in) {
  const std::string name = dns_label(in.prefill.service);
  ManifestInput prefill = in.prefill, decode = in.decode;
  prefill.role = "prefill";
  decode.role = "decode";
  std::vector<Manifest> out;
  auto count = [&](const ManifestInput& pool) {
    return in.autoscaled ? fmt::format("{} {} replica(s) (scaled {}..{})", pool.replicas, pool.role, pool.min_replicas, pool.max_replicas)
                         : fmt::format("{} {} replica(s)", pool.replicas, pool.role);
  };
  out.push_back({name + "-prefill-deployment.yaml", pool_deployment(in, prefill),
                 fmt::format("{} of {} x {}{}; vLLM's NIXL connector sends each prompt's KV", count(prefill), prefill.gpus_per_replica,
                             prefill.accelerator, in.autoscaled ? "" : ", fixed")});
  out.push_back({name + "-decode-deployment.yaml", pool_deployment(in, decode),
                 fmt::format("{} of {} x {}{}; they receive the KV and decode", count(decode), decode.gpus_per_replica, decode.accelerator,
                             in.autoscaled ? "" : ", fixed")});
  const VllmRouterInput router = router_of(in, name);
  out.push_back({name + "-router-deployment.yaml", vllm_router_deployment(router),
                 fmt::format("{} vLLM Router replica(s) finding both pools by label ({})", in.router_replicas, kVllmRouterSource)});
  out.push_back({name + "-router-serviceaccount.yaml", vllm_router_rbac(router, "ServiceAccount"), "the router's ServiceAccount"});
  out.push_back({name + "-router-role.yaml", vllm_router_rbac(router, "Role"), "pods: get, list, watch (the router's discovery)"});
  out.push_back({name + "-router-rolebinding.yaml", vllm_router_rbac(router, "RoleBinding"), "the Role bound to the router's ServiceAccount"});
  out.push_back({name + "-service.yaml", service_manifest(in.prefill, "router"), "ClusterIP Service on port 8000, the router's"});
  // A NodePool per pool, as the plan rents nodes per pool: on shared nodes the hostname spread of
  // one pool would count the other pool's nodes as empty domains and hold it to a replica a node.
  const std::string types = yaml_quoted_list(prefill.instance_types);
  for (const ManifestInput* pool : {&prefill, &decode}) {
    const int most = in.autoscaled ? std::max(pool->replicas, pool->max_replicas) : pool->replicas;
    const int gpus = most * pool->gpus_per_replica;
    out.push_back(nodes_manifest(*pool, gpus,
                                 fmt::format("{} {} replica(s) x {} {}{}", most, pool->role, pool->gpus_per_replica, accelerator_words(*pool),
                                             in.autoscaled ? ", the most its autoscaler may ask for" : ""),
                                 name + "-" + pool->role,
                                 fmt::format("nodes of {} for the {} pool, up to {} {}", types, pool->role, gpus, accelerator_words(*pool))));
  }
  // Each pool's scrape target and autoscalers, on its own signal.
  if (in.autoscaled)
    for (const ManifestInput* pool : {&prefill, &decode}) {
      out.push_back({name + "-" + pool->role + "-service.yaml", pool_service(in, *pool),
                     fmt::format("headless Service of the {} pool's pods: their metrics' service label", pool->role)});
      for (auto& m : autoscaler_manifests(*pool, ScaleTarget{})) out.push_back(std::move(m));
    }
  return out;
}

}  // namespace gw
