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
      "# Operator), the pool's vLLM series carry service=\"{1}\", which {1}-keda-scaledobject.yaml's query selects.\n"
      "apiVersion: v1\n"
      "kind: Service\n"
      "metadata:\n"
      "  name: {1}\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {2}}}\n"
      "spec:\n"
      "  clusterIP: None\n"
      "  selector: {{{2}}}\n"
      "  ports:\n"
      "    - {{name: http, port: 8000, targetPort: http, protocol: TCP}}\n",
      service, name, labels(service, pool.role));
  return out;
}

std::string router_deployment(const DisaggregatedManifestInput& in, const std::string& name) {
  std::string out = header(in, "Deployment (apps/v1): the vLLM Router in front of both pools");
  out += fmt::format(
      "# Finds the pools' pods by label in its own namespace (Kubernetes service discovery), sends each prompt to the\n"
      "# prefill pod with the fewer requests of two picked at random, then the decoding to a decode pod likewise\n"
      "# (power_of_two; the simulation routed to the least loaded). Source: {}.\n"
      "# Image: {}, a published nightly build (the project tags no releases): pin the build you have verified.\n",
      kVllmRouterSource, in.router_image);
  out += fmt::format(
      "apiVersion: apps/v1\n"
      "kind: Deployment\n"
      "metadata:\n"
      "  name: {0}-router\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {1}}}\n"
      "spec:\n"
      "  replicas: {2}\n"
      "  selector:\n"
      "    matchLabels: {{{1}}}\n"
      "  template:\n"
      "    metadata:\n"
      "      labels: {{app.kubernetes.io/name: {0}-router, {1}}}\n"
      "    spec:\n"
      "      serviceAccountName: {0}-router\n"
      "      topologySpreadConstraints:\n"
      "        - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, "
      "labelSelector: {{matchLabels: {{{1}}}}}}}\n"
      "      containers:\n"
      "        - name: router\n"
      "          image: {3}\n"
      "          command: [vllm-router]\n"
      "          args: [--host, 0.0.0.0, --port, \"8000\", --vllm-pd-disaggregation, --service-discovery,\n"
      "                 --service-discovery-namespace, $(POD_NAMESPACE), --service-discovery-port, \"8000\",\n"
      "                 --prefill-selector, gpuwise.dev/service={0}, gpuwise.dev/role=prefill,\n"
      "                 --decode-selector, gpuwise.dev/service={0}, gpuwise.dev/role=decode,\n"
      "                 --prefill-policy, power_of_two, --decode-policy, power_of_two,\n"
      "                 --prometheus-host, 0.0.0.0, --prometheus-port, \"29000\"]\n"
      "          env:\n"
      "            - {{name: POD_NAMESPACE, valueFrom: {{fieldRef: {{fieldPath: metadata.namespace}}}}}}\n"
      "          ports: [{{name: http, containerPort: 8000}}, {{name: metrics, containerPort: 29000}}]\n"
      "          resources:\n"
      "            requests: {{cpu: \"1\", memory: 1Gi}}\n"
      "            limits: {{memory: 2Gi}}\n"
      "          readinessProbe:\n"
      "            httpGet: {{path: /health, port: http}}\n"
      "            periodSeconds: 5\n"
      "          livenessProbe:\n"
      "            httpGet: {{path: /health, port: http}}\n"
      "            periodSeconds: 15\n"
      "            failureThreshold: 4\n",
      name, labels(name, "router"), in.router_replicas, yaml_quoted(in.router_image));
  return out;
}

std::string router_rbac(const DisaggregatedManifestInput& in, const std::string& name, const std::string& kind) {
  const std::string meta = fmt::format(
      "metadata:\n"
      "  name: {0}-router\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {1}}}\n",
      name, labels(name, "router"));
  if (kind == "ServiceAccount")
    return header(in, "ServiceAccount (v1): the router's identity") + "apiVersion: v1\nkind: ServiceAccount\n" + meta +
           "automountServiceAccountToken: true\n";
  if (kind == "Role")
    return header(in, "Role (rbac.authorization.k8s.io/v1): the router reads the pools' pods, nothing else") +
           "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n" + meta +
           "rules:\n"
           "  - apiGroups: [\"\"]\n"
           "    resources: [pods]\n"
           "    verbs: [get, list, watch]\n";
  return header(in, "RoleBinding (rbac.authorization.k8s.io/v1): the Role to the router's ServiceAccount, in this namespace") +
         "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n" + meta +
         fmt::format("roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: {0}-router}}\n"
                     "subjects:\n"
                     "  - {{kind: ServiceAccount, name: {0}-router}}\n",
                     name);
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
  out.push_back({name + "-router-deployment.yaml", router_deployment(in, name),
                 fmt::format("{} vLLM Router replica(s) finding both pools by label ({})", in.router_replicas, kVllmRouterSource)});
  out.push_back({name + "-router-serviceaccount.yaml", router_rbac(in, name, "ServiceAccount"), "the router's ServiceAccount"});
  out.push_back({name + "-router-role.yaml", router_rbac(in, name, "Role"), "pods: get, list, watch (the router's discovery)"});
  out.push_back({name + "-router-rolebinding.yaml", router_rbac(in, name, "RoleBinding"), "the Role bound to the router's ServiceAccount"});
  out.push_back({name + "-service.yaml", service_manifest(in.prefill, "router"), "ClusterIP Service on port 8000, the router's"});
  // A NodePool per pool, as the plan rents nodes per pool: on shared nodes the hostname spread of
  // one pool would count the other pool's nodes as empty domains and hold it to a replica a node.
  const std::string types = yaml_quoted_list(prefill.instance_types);
  for (const ManifestInput* pool : {&prefill, &decode}) {
    const int most = in.autoscaled ? std::max(pool->replicas, pool->max_replicas) : pool->replicas;
    const int gpus = most * pool->gpus_per_replica;
    out.push_back({name + "-" + pool->role + "-karpenter-nodepool.yaml",
                   nodepool_manifest(*pool, gpus, fmt::format("{} {} replica(s) x {} GPU(s){}", most, pool->role, pool->gpus_per_replica,
                                                              in.autoscaled ? ", the most its autoscaler may ask for" : "")),
                   fmt::format("nodes of {} for the {} pool, up to {} GPU(s)", types, pool->role, gpus)});
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
