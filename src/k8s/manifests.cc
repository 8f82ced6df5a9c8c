#include "k8s/manifests.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gw {

namespace {

// A YAML scalar that says exactly this string: JSON's double-quoted form is valid YAML.
std::string quoted(const std::string& text) { return nlohmann::json(text).dump(); }

// A Kubernetes quantity with three decimals at most ("21.7" -> "21700m").
std::string quantity(double value) {
  long long milli = static_cast<long long>(std::llround(value * 1000));
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string duration(double seconds) { return fmt::format("{}s", static_cast<long long>(std::ceil(seconds))); }

// The backlog a replica exposes: vLLM's waiting + running gauges for LLMs; Triton's pending
// count for other models (it counts only queued requests, so its threshold leaves out the
// requests in service).
std::string backlog_query(const ManifestInput& in, const std::string& name) {
  if (in.llm)
    return fmt::format("sum(vllm:num_requests_waiting{{service=\"{0}\"}}) + sum(vllm:num_requests_running{{service=\"{0}\"}})", name);
  return fmt::format("sum(nv_inference_pending_request_count{{service=\"{}\"}})", name);
}

std::string header(const ManifestInput& in, const std::string& what) {
  return fmt::format(
      "# {} for service {}, written by gpuwise plan --emit-k8s.\n"
      "# Replica: {} x {} (${:.4g}/replica-hour); peak plan {} replicas; cold start {:.0f} s.\n",
      what, quoted(in.service), in.gpus_per_replica, in.accelerator, in.usd_per_replica_hour, in.peak_replicas, in.cold_start_s);
}

// Name, labels and the Deployment both autoscalers scale.
std::string metadata_and_target(const std::string& name) {
  return fmt::format(
      "metadata:\n"
      "  name: {0}\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, gpuwise.dev/service: {0}}}\n"
      "spec:\n"
      "  scaleTargetRef:\n"
      "    apiVersion: apps/v1\n"
      "    kind: Deployment\n"
      "    name: {0}\n",
      name);
}

std::string behavior(const ManifestInput& in, const std::string& indent) {
  return fmt::format(
      "{0}behavior:\n"
      "{0}  scaleUp:\n"
      "{0}    stabilizationWindowSeconds: {1}\n"
      "{0}    selectPolicy: Max\n"
      "{0}    policies:\n"
      "{0}      - {{type: Pods, value: 4, periodSeconds: {3}}}\n"
      "{0}      - {{type: Percent, value: 100, periodSeconds: {3}}}\n"
      "{0}  scaleDown:\n"
      "{0}    stabilizationWindowSeconds: {2}\n"
      "{0}    policies:\n"
      "{0}      - {{type: Percent, value: 100, periodSeconds: {3}}}\n",
      indent, static_cast<long long>(in.scale_up_window_s), static_cast<long long>(in.scale_down_window_s),
      static_cast<long long>(in.polling_interval_s));
}

}  // namespace

std::string dns_label(const std::string& name) {
  std::string out;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "service" : out;
}

std::vector<Manifest> service_manifests(const ManifestInput& in) {
  const std::string name = dns_label(in.service);
  const bool waiting_only = !in.llm;
  std::vector<Manifest> out;

  std::string keda = header(in, "KEDA ScaledObject (keda.sh/v1alpha1)");
  keda += fmt::format("# Threshold: {}.\n", in.why_threshold);
  keda += fmt::format("# minReplicaCount {}: {}.\n", in.min_replicas, in.why_min);
  keda += fmt::format("# cooldownPeriod {:.0f} s: scale to zero after this long idle (a cold start bills {:.0f} s of a node).\n",
                      in.cooldown_s, in.cold_start_s);
  keda += fmt::format(
      "apiVersion: keda.sh/v1alpha1\n"
      "kind: ScaledObject\n"
      "{0}"
      "  pollingInterval: {1}\n"
      "  cooldownPeriod: {2}\n"
      "  minReplicaCount: {3}\n"
      "  maxReplicaCount: {4}\n"
      "  advanced:\n"
      "    horizontalPodAutoscalerConfig:\n"
      "{5}"
      "  triggers:\n"
      "    - type: prometheus\n"
      "      metricType: AverageValue\n"
      "      metadata:\n"
      "        serverAddress: {6}\n"
      "        query: {7}\n"
      "        threshold: {8}\n"
      "        activationThreshold: \"0\"\n",
      metadata_and_target(name), static_cast<long long>(in.polling_interval_s), static_cast<long long>(std::ceil(in.cooldown_s)), in.min_replicas,
      in.max_replicas, behavior(in, "      "), quoted(in.prometheus_url), quoted(backlog_query(in, name)),
      quoted(fmt::format("{:.3g}", in.queue_threshold)));
  out.push_back({name + "-keda-scaledobject.yaml", keda});

  std::string hpa = header(in, "HorizontalPodAutoscaler (autoscaling/v2) on an external metric, the alternative without KEDA");
  hpa += fmt::format("# The metric comes from prometheus-adapter with this query: {}\n", backlog_query(in, name));
  hpa += fmt::format("# Target: {}. An HPA cannot scale to zero (minReplicas >= 1).\n", in.why_threshold);
  hpa += fmt::format(
      "apiVersion: autoscaling/v2\n"
      "kind: HorizontalPodAutoscaler\n"
      "{6}"
      "  minReplicas: {1}\n"
      "  maxReplicas: {2}\n"
      "  metrics:\n"
      "    - type: External\n"
      "      external:\n"
      "        metric:\n"
      "          name: {3}\n"
      "          selector:\n"
      "            matchLabels: {{service: {0}}}\n"
      "        target:\n"
      "          type: AverageValue\n"
      "          averageValue: {4}\n"
      "{5}",
      name, std::max(1, in.min_replicas), in.max_replicas, waiting_only ? "requests_pending" : "requests_waiting_or_running",
      quoted(quantity(in.queue_threshold)), behavior(in, "  "), metadata_and_target(name));
  out.push_back({name + "-hpa.yaml", hpa});

  std::string group = "karpenter.k8s.aws", kind = "EC2NodeClass";
  std::string note;
  if (in.cloud == "azure") group = "karpenter.azure.com", kind = "AKSNodeClass";
  else if (in.cloud != "aws")
    note = fmt::format("# Karpenter provisions nodes on AWS and Azure; this plan's offering is on {}: adapt nodeClassRef and the\n"
                       "# instance-type requirement to that cloud's node provisioner.\n", in.cloud);
  std::string types, capacity;
  for (const auto& t : in.instance_types) types += (types.empty() ? "" : ", ") + quoted(t);
  for (const auto& c : in.capacity_types) capacity += (capacity.empty() ? "" : ", ") + quoted(c);
  std::string pool = header(in, "Karpenter NodePool (karpenter.sh/v1)") + note;
  pool += fmt::format("# GPU limit: {} replicas x {} GPU(s). Capacity types: {} (spot only where the spec allows it).\n",
                      in.max_replicas, in.gpus_per_replica, capacity);
  pool += fmt::format(
      "apiVersion: karpenter.sh/v1\n"
      "kind: NodePool\n"
      "metadata:\n"
      "  name: {0}-gpu\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise}}\n"
      "spec:\n"
      "  template:\n"
      "    metadata:\n"
      "      labels: {{gpuwise.dev/service: {0}}}\n"
      "    spec:\n"
      "      nodeClassRef:\n"
      "        group: {1}\n"
      "        kind: {2}\n"
      "        name: default\n"
      "      requirements:\n"
      "        - key: karpenter.sh/capacity-type\n"
      "          operator: In\n"
      "          values: [{3}]\n"
      "        - key: node.kubernetes.io/instance-type\n"
      "          operator: In\n"
      "          values: [{4}]\n"
      "      taints:\n"
      "        - key: nvidia.com/gpu\n"
      "          value: \"true\"\n"
      "          effect: NoSchedule\n"
      "      expireAfter: 720h\n"
      "  disruption:\n"
      "    consolidationPolicy: WhenEmptyOrUnderutilized\n"
      "    consolidateAfter: {5}\n"
      "  limits:\n"
      "    nvidia.com/gpu: {6}\n",
      name, group, kind, capacity, types, duration(in.cooldown_s), in.max_replicas * in.gpus_per_replica);
  out.push_back({name + "-karpenter-nodepool.yaml", pool});
  return out;
}

}  // namespace gw
