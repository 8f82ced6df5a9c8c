#include "k8s/router_manifests.h"

#include <algorithm>

#include <fmt/format.h>

#include "k8s/haproxy_manifests.h"
#include "k8s/vllm_router_manifests.h"

namespace gw {

namespace {

// HAProxy's objects in front of one pool: its configuration (the balance and queue the plan's
// routing is) and its Deployment.
std::vector<Manifest> haproxy_objects(const ManifestInput& in, const std::string& name, const std::string& labels) {
  HaproxyInput proxy;
  proxy.name = name;
  proxy.header = [&in](const std::string& what) { return manifest_header(in, what); };
  proxy.pod_labels = labels;
  proxy.replicas_service = metrics_service_name(in);
  proxy.balance = in.haproxy_balance;
  proxy.maxconn_per_replica = in.haproxy_maxconn_per_replica;
  proxy.server_slots = std::max(in.max_replicas, in.replicas);
  proxy.health_path = in.llm ? "/health" : "/v2/health/ready";
  proxy.queue_timeout_s = in.client_timeout_s;
  proxy.replicas = in.router_replicas;
  proxy.how_it_routes =
      in.haproxy_maxconn_per_replica > 0
          ? fmt::format("# Each replica takes {} request(s) at a time from it; the rest wait in its queue for the first replica\n"
                        "# free (balance {}): the one queue the plan's simulation verified. A plain Service would spread\n"
                        "# connections at random, and a request would wait behind a busy replica while another is idle.\n",
                        in.haproxy_maxconn_per_replica, in.haproxy_balance)
      : in.haproxy_balance == "leastconn"
          ? "# Sends each request to the replica with the fewest requests in flight (balance leastconn): the routing the\n"
            "# plan's simulation verified. A plain Service would spread connections at random.\n"
          : "# Sends each request to the next replica in turn (balance roundrobin): the routing the plan's simulation\n"
            "# verified. A plain Service would spread connections at random.\n";
  return {{name + "-router-configmap.yaml", haproxy_configmap(proxy),
           fmt::format("HAProxy's configuration: balance {}{}, replicas found through {}'s DNS", in.haproxy_balance,
                       in.haproxy_maxconn_per_replica > 0 ? fmt::format(", {} request(s) per replica at a time, the rest queued", in.haproxy_maxconn_per_replica) : "",
                       proxy.replicas_service)},
          {name + "-router-deployment.yaml", haproxy_deployment(proxy),
           fmt::format("{} HAProxy replica(s), {} ({})", haproxy_replicas(proxy), proxy.image, kHaproxySource)}};
}

// The vLLM Router's objects in front of one pool (its policy the routing the plan verified): its
// Deployment and access.
std::vector<Manifest> vllm_router_objects(const ManifestInput& in, const std::string& name, const std::string& labels) {
  VllmRouterInput router;
  router.name = name;
  router.header = [&in](const std::string& what) { return manifest_header(in, what); };
  router.pod_labels = labels;
  if (in.router_replicas > 0) router.replicas = in.router_replicas;
  // Replicas across nodes: their leaders alone run vLLM's server.
  router.discovery_args = fmt::format("                 --selector, gpuwise.dev/service={}{}, --policy, {},\n", name,
                                      in.nodes_per_replica > 1 ? ", gpuwise.dev/role=leader" : "", in.vllm_router_policy);
  router.how_it_routes =
      in.vllm_router_policy == "round_robin"
          ? "# Sends each request to the next replica in turn (round_robin): the routing the plan's simulation verified.\n"
            "# A plain Service would spread connections at random.\n"
          : "# Sends each request to the replica with the fewer requests in flight of two drawn at random (power_of_two, its\n"
            "# own count): the routing the plan's simulation verified. A plain Service would spread connections at random.\n";
  return {{name + "-router-deployment.yaml", vllm_router_deployment(router),
           fmt::format("{} vLLM Router replica(s), --policy {} ({})", router.replicas, in.vllm_router_policy, kVllmRouterSource)},
          {name + "-router-serviceaccount.yaml", vllm_router_rbac(router, "ServiceAccount"), "the router's ServiceAccount"},
          {name + "-router-role.yaml", vllm_router_rbac(router, "Role"), "pods: get, list, watch (the router's discovery)"},
          {name + "-router-rolebinding.yaml", vllm_router_rbac(router, "RoleBinding"), "the Role bound to the router's ServiceAccount"}};
}

}  // namespace

std::string router_deployment_head(const std::string& name, const std::string& pod_labels, int replicas) {
  return fmt::format(
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
      "      topologySpreadConstraints:\n"
      "        - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, "
      "labelSelector: {{matchLabels: {{{1}}}}}}}\n"
      "{3}",
      name, pod_labels, replicas,
      replicas == 1 ? "      tolerations:\n"
                      "        - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 10}\n"
                      "        - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 10}\n"
                    : "");
}

std::vector<Manifest> router_manifests(const ManifestInput& in, const std::string& name) {
  // Not the replicas' label: the router's selector and the replicas' Service must not take its pods.
  const std::string labels = fmt::format("gpuwise.dev/router: {}", name);
  const bool vllm_router = in.llm && !in.vllm_router_policy.empty();
  const std::string replicas = metrics_service_name(in);
  std::string client = manifest_header(in, vllm_router ? "Service (v1): the service's endpoint, the vLLM Router's"
                                                       : "Service (v1): the service's endpoint, HAProxy's");
  client += in.min_replicas == 0
                ? "# Clients reach it through the KEDA HTTP add-on's interceptor (see the InterceptorRoute), which holds requests\n"
                  "# until this Service has a ready endpoint: the router is ready only while a replica is. It sends each request\n"
                  "# on to a replica.\n"
                : "# Clients call it directly, or through your ingress or gateway; the router sends each request on to a replica.\n";
  if (queue_in_proxy(in)) {
    // The queue is the proxy's: the ServiceMonitor scrapes its metrics through this Service.
    client += fmt::format("# Requests wait in HAProxy's queue: {}-servicemonitor.yaml scrapes its metrics port (service=\"{}\"), which\n"
                          "# the autoscalers' query adds to the replicas' pending count.\n",
                          name, name);
    client += service_yaml(name, labels + ", " + pod_labels(name, ""), labels, false,
                           fmt::format("    - {{name: metrics, port: {0}, targetPort: metrics, protocol: TCP}}\n", kHaproxyMetricsPort));
  } else {
    client += service_yaml(name, labels, labels, false);
  }
  std::string pods = manifest_header(in, "Service (v1): the replicas' pods, for their metrics");
  pods += fmt::format(
      "# Headless and not for clients (they call {0}, the router's Service). Scraped through {0}-servicemonitor.yaml,\n"
      "# the replicas' {2} series carry service=\"{1}\", which the autoscalers' query selects.\n",
      name, replicas, in.llm ? "vLLM" : "Triton");
  if (!vllm_router) pods += "# HAProxy finds the replicas through its DNS: one A record per ready pod.\n";
  if (in.nodes_per_replica > 1) pods += "# A replica spans nodes: its leader pod alone serves, and alone is selected.\n";
  pods += service_yaml(replicas, pod_labels(name, ""), pod_labels(name, in.nodes_per_replica > 1 ? "leader" : ""), true,
                       in.llm ? "" : fmt::format("    - {{name: metrics, port: {0}, targetPort: metrics, protocol: TCP}}\n", kTritonMetricsPort));
  std::vector<Manifest> out = {{name + "-service.yaml", client, "ClusterIP Service on port 8000, the router's"}};
  for (auto& m : vllm_router ? vllm_router_objects(in, name, labels) : haproxy_objects(in, name, labels)) out.push_back(std::move(m));
  out.push_back({replicas + "-service.yaml", pods, "headless Service of the replicas' pods: their metrics' service label"});
  return out;
}

}  // namespace gw
