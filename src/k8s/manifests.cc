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

// Default images, pinned: the vLLM release the precision table cites, and a Triton release.
constexpr const char* kVllmImage = "vllm/vllm-openai:v0.9.2";
constexpr const char* kTritonImage = "nvcr.io/nvidia/tritonserver:24.05-py3";

// Copies the versioned weights from object storage into the pod's volume before the server
// starts: the image carries the server, never the weights.
std::string weights_init_container(const std::string& uri, const std::string& target) {
  if (uri.rfind("gs://", 0) == 0)
    return fmt::format(
        "      initContainers:\n"
        "        - name: fetch-weights\n"
        "          image: gcr.io/google.com/cloudsdktool/google-cloud-cli:slim\n"
        "          command: [gcloud, storage, rsync, --recursive, {0}, {1}]\n"
        "          volumeMounts: [{{name: weights, mountPath: /models}}]\n",
        quoted(uri), quoted(target));
  return fmt::format(
      "      initContainers:\n"
      "        - name: fetch-weights\n"
      "          image: amazon/aws-cli:2.17.0\n"
      "          command: [aws, s3, sync, --only-show-errors, {0}, {1}]\n"
      "          volumeMounts: [{{name: weights, mountPath: /models}}]\n",
      quoted(uri), quoted(target));
}

std::string deployment(const ManifestInput& in, const std::string& name) {
  const std::string model = dns_label(in.model_name.empty() ? in.service : in.model_name);
  const std::string uri = in.model_uri.empty() ? fmt::format("s3://YOUR-BUCKET/models/{}/REVISION", model) : in.model_uri;
  const std::string target = "/models/" + model;
  const std::string image = !in.image.empty() ? in.image : in.llm ? kVllmImage : kTritonImage;
  // The startup probe allows twice the cold start the plan assumed before the kubelet gives up.
  const int period_s = 10;
  const int startup_failures = std::max(6, static_cast<int>(std::ceil(in.startup_s * 2 / period_s)));
  std::string out = header(in, "Deployment (apps/v1): the serving workload the autoscalers scale");
  out += fmt::format("# Weights: {} copied to {} at start-up ({}).\n", uri,
                     target, in.model_uri.empty() ? "a placeholder: set services[].scaling.model_uri to the versioned path"
                                                  : "services[].scaling.model_uri");
  out += fmt::format("# Startup probe: up to {} s ({} x {} s), twice the {:.0f} s container start and model load the plan assumed.\n",
                     startup_failures * period_s, startup_failures, period_s, in.startup_s);
  out += fmt::format("# Spread: at least {} node(s){}; tolerates the NodePool's nvidia.com/gpu taint.\n", in.min_nodes,
                     in.spot_floor ? fmt::format(", zones, and at least {} replica(s) on on-demand nodes (the floor)", in.floor_replicas) : "");
  std::string args;
  if (in.llm)
    args = fmt::format("          args: [--model, {0}, --served-model-name, {1}, --port, \"8000\", --tensor-parallel-size, \"{2}\", "
                       "--max-num-seqs, \"{3}\", --max-num-batched-tokens, \"{4}\", --gpu-memory-utilization, \"{5:.2f}\"]\n",
                       quoted(target), quoted(in.model_name.empty() ? name : in.model_name), in.gpus_per_replica, in.max_batch,
                       in.token_budget, in.gpu_memory_utilization);
  else
    args = fmt::format("          args: [tritonserver, --model-repository={0}, --http-port=8000]\n", target);
  std::string spread;
  if (in.min_nodes >= 2)
    spread += fmt::format(
        "        - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, "
        "labelSelector: {{matchLabels: {{gpuwise.dev/service: {0}}}}}}}\n"
        "        - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, "
        "labelSelector: {{matchLabels: {{gpuwise.dev/service: {0}}}}}}}\n",
        name);
  if (in.spot_floor)
    spread += fmt::format(
        "        - {{maxSkew: {1}, topologyKey: karpenter.sh/capacity-type, whenUnsatisfiable: DoNotSchedule, "
        "labelSelector: {{matchLabels: {{gpuwise.dev/service: {0}}}}}}}\n",
        name, std::max(1, in.replicas - 2 * in.floor_replicas));
  out += fmt::format(
      "apiVersion: apps/v1\n"
      "kind: Deployment\n"
      "metadata:\n"
      "  name: {0}\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, gpuwise.dev/service: {0}}}\n"
      "spec:\n"
      "  replicas: {1}\n"
      "  selector:\n"
      "    matchLabels: {{gpuwise.dev/service: {0}}}\n"
      "  strategy:\n"
      "    type: RollingUpdate\n"
      "    rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}\n"
      "  template:\n"
      "    metadata:\n"
      "      labels: {{app.kubernetes.io/name: {0}, gpuwise.dev/service: {0}}}\n"
      "    spec:\n"
      "      terminationGracePeriodSeconds: {2}\n"
      "      nodeSelector: {{gpuwise.dev/service: {0}}}\n"
      "      tolerations:\n"
      "        - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}\n"
      "{3}"
      "{4}"
      "      containers:\n"
      "        - name: server\n"
      "          image: {5}\n"
      "{6}"
      "          ports: [{{name: http, containerPort: 8000}}]\n"
      "          resources:\n"
      "            requests: {{cpu: {7}, memory: {8}Gi, nvidia.com/gpu: \"{9}\"}}\n"
      "            limits: {{memory: {8}Gi, nvidia.com/gpu: \"{9}\"}}\n"
      "          volumeMounts:\n"
      "            - {{name: weights, mountPath: /models}}\n"
      "            - {{name: shm, mountPath: /dev/shm}}\n"
      "          startupProbe:\n"
      "            httpGet: {{path: {10}, port: http}}\n"
      "            periodSeconds: {11}\n"
      "            failureThreshold: {12}\n"
      "          readinessProbe:\n"
      "            httpGet: {{path: {10}, port: http}}\n"
      "            periodSeconds: 5\n"
      "            failureThreshold: 3\n"
      "          livenessProbe:\n"
      "            httpGet: {{path: {10}, port: http}}\n"
      "            periodSeconds: 15\n"
      "            failureThreshold: 4\n"
      "          lifecycle:\n"
      "            preStop: {{sleep: {{seconds: 5}}}}\n"
      "      volumes:\n"
      "        - {{name: weights, emptyDir: {{}}}}\n"
      "        - {{name: shm, emptyDir: {{medium: Memory, sizeLimit: 16Gi}}}}\n",
      name, in.replicas, static_cast<long long>(std::ceil(in.termination_grace_s)),
      spread.empty() ? "" : "      topologySpreadConstraints:\n" + spread, weights_init_container(uri, target), quoted(image), args,
      quantity(in.cpu_per_replica), static_cast<long long>(std::floor(in.memory_gib_per_replica)), in.gpus_per_replica,
      in.llm ? "/health" : "/v2/health/ready", period_s, startup_failures);
  return out;
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
  out.push_back({name + "-deployment.yaml", deployment(in, name)});

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
