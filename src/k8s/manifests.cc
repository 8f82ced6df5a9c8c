#include "k8s/manifests.h"

#include "k8s/gke_compute_class.h"
#include "k8s/haproxy_manifests.h"
#include "k8s/hpa_schedule_manifests.h"
#include "k8s/router_manifests.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gw {

namespace {

// A Kubernetes quantity with three decimals at most ("21.7" -> "21700m").
std::string quantity(double value) {
  long long milli = static_cast<long long>(std::llround(value * 1000));
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string duration(double seconds) { return fmt::format("{}s", static_cast<long long>(std::ceil(seconds))); }

// The backlog a replica exposes: vLLM's waiting + running gauges for LLMs; Triton's pending
// count for other models (it counts only queued requests, so its threshold leaves out the
// requests in service), and where HAProxy holds the queue, its backend's queue too (scraped
// through the router's Service, labelled with its name).
std::string backlog_query(const ManifestInput& in, const std::string& name) {
  if (in.llm)
    return fmt::format("sum(vllm:num_requests_waiting{{service=\"{0}\"}}) + sum(vllm:num_requests_running{{service=\"{0}\"}})", name);
  if (queue_in_proxy(in))
    return fmt::format("sum(haproxy_backend_current_queue{{service=\"{0}\", proxy=\"replicas\"}}) + "
                       "sum(nv_inference_pending_request_count{{service=\"{1}\"}})",
                       workload_name(in), name);
  return fmt::format("sum(nv_inference_pending_request_count{{service=\"{}\"}})", name);
}

// What the autoscalers read: the backlog, or for a pool on its duty cycle the GPUs' duty cycle
// summed per replica (each pod's GPUs averaged), so that an AverageValue target asks for
// ceil(sum / target) replicas: the HPA's utilization rule over the ready replicas (a starting
// pod's GPUs are idle). dcgm-exporter labels each GPU's series with the pod holding it; a
// Deployment's pods are named <deployment>-<template hash>-<5 characters>.
// name: the Deployment's (its pods' names); metrics: the Service labelling the replicas' series.
std::string scaling_query(const ManifestInput& in, const std::string& name, const std::string& metrics) {
  if (in.duty_cycle_target_pct > 0)
    return fmt::format("sum(DCGM_FI_DEV_GPU_UTIL{{pod=~\"{}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}\"}}) / {}", name, std::max(1, in.gpus_per_replica));
  return backlog_query(in, metrics);
}

std::string signal_words(const ManifestInput& in) {
  return in.duty_cycle_target_pct > 0 ? "the replicas' GPU duty cycle (dcgm-exporter)" : "the replicas' queue depth (Prometheus)";
}

}  // namespace

std::string pod_labels(const std::string& service, const std::string& role) {
  return role.empty() ? fmt::format("gpuwise.dev/service: {}", service) : fmt::format("gpuwise.dev/service: {}, gpuwise.dev/role: {}", service, role);
}

std::string service_yaml(const std::string& name, const std::string& labels, const std::string& selector, bool headless,
                         const std::string& extra_ports) {
  return fmt::format(
      "apiVersion: v1\n"
      "kind: Service\n"
      "metadata:\n"
      "  name: {0}\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {1}}}\n"
      "spec:\n"
      "{2}"
      "  selector: {{{3}}}\n"
      "  ports:\n"
      "    - {{name: http, port: 8000, targetPort: http, protocol: TCP}}\n"
      "{4}",
      name, labels, headless ? "  clusterIP: None\n" : "  type: ClusterIP\n", selector, extra_ports);
}

namespace {

// Name, labels and the workload both autoscalers scale.
std::string metadata_and_target(const ManifestInput& in, const std::string& name, const ScaleTarget& target) {
  return fmt::format(
      "metadata:\n"
      "  name: {0}\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {3}}}\n"
      "spec:\n"
      "  scaleTargetRef:\n"
      "    apiVersion: {1}\n"
      "    kind: {2}\n"
      "    name: {0}\n",
      name, target.api_version, target.kind, pod_labels(dns_label(in.service), in.role));
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

std::string deployment(const ManifestInput& in) {
  const std::string name = workload_name(in);
  const std::string labels = pod_labels(dns_label(in.service), in.role);
  const std::string model = dns_label(in.model_name.empty() ? in.service : in.model_name);
  const std::string uri = weights_uri(in, model);
  const std::string target = "/models/" + model;
  const std::string image = serving_image(in);
  const int period_s = kStartupProbePeriodS;
  const int startup_failures = startup_probe_failures(in);
  std::string out = manifest_header(in, in.role.empty() ? "Deployment (apps/v1): the serving workload the autoscalers scale"
                                              : "Deployment (apps/v1): the " + in.role + " pool of a disaggregated plan");
  out += in.pool_note;
  out += in.reserve_note;
  out += fmt::format("# Weights: {} copied to {} at start-up ({}).\n", uri,
                     target, in.model_uri.empty() ? "a placeholder: set services[].scaling.model_uri to the versioned path"
                                                  : "services[].scaling.model_uri");
  if (in.cloud == "azure" && in.model_uri.empty())
    out += "# On Azure: this version copies from S3 or GCS only (model_uri s3:// or gs://, read with the pod's credentials);\n"
           "# for Blob Storage, replace the fetch-weights init container with azcopy or az storage blob download-batch.\n";
  out += fmt::format("# Startup probe: up to {} s ({} x {} s), twice the {:.0f} s container start and model load the plan assumed.\n",
                     startup_failures * period_s, startup_failures, period_s, in.startup_s);
  if (!in.why_resources.empty()) out += fmt::format("# Requests: {}.\n", in.why_resources);
  out += fmt::format("# /dev/shm: {:.0f} GiB of the {:.0f} GiB memory limit (a memory-backed volume counts against it).\n",
                     shm_gib(in.memory_gib_per_replica), std::floor(in.memory_gib_per_replica));
  out += fmt::format("# Spread: at least {} node(s){}; {}.\n", in.min_nodes,
                     in.spot_floor ? fmt::format(", zones, and at least {} replica(s) on on-demand nodes (the floor)", in.floor_replicas) : "",
                     on_gke(in) ? fmt::format("selects the ComputeClass {} and tolerates GKE's {} taint", compute_class_name(in),
                                              accelerator_resource(on_tpu(in)))
                                : "tolerates the NodePool's nvidia.com/gpu taint");
  std::string args;
  // Disaggregated: vLLM's NIXL connector sends the prompt's KV from a prefill pod to a decode
  // pod (kv_producer, kv_consumer: vllm-project/router docs/model-routing/pd-disaggregation.md);
  // its side channel listens on the pod's own address.
  std::string kv;
  if (!in.role.empty())
    kv = fmt::format(", --kv-transfer-config, {}", yaml_quoted(fmt::format("{{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"{}\"}}",
                                                                      in.role == "prefill" ? "kv_producer" : "kv_consumer")));
  if (in.llm)
    args = fmt::format("          args: [--model, {0}, --served-model-name, {1}, --port, \"8000\", --tensor-parallel-size, \"{2}\", "
                       "--max-num-seqs, \"{3}\", --max-num-batched-tokens, \"{4}\", --gpu-memory-utilization, \"{5:.2f}\"{6}]\n",
                       yaml_quoted(target), yaml_quoted(in.model_name.empty() ? dns_label(in.service) : in.model_name), in.gpus_per_replica, in.max_batch,
                       in.token_budget, in.gpu_memory_utilization, kv);
  else
    args = fmt::format("          args: [tritonserver, --model-repository={0}, --http-port=8000, --metrics-port={1}]\n", target,
                       kTritonMetricsPort);
  std::string spread;
  if (in.min_nodes >= 2)
    spread += fmt::format(
        "        - {{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, "
        "labelSelector: {{matchLabels: {{{0}}}}}}}\n"
        "        - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, "
        "labelSelector: {{matchLabels: {{{0}}}}}}}\n",
        labels);
  if (in.spot_floor)
    spread += fmt::format(
        "        - {{maxSkew: {1}, topologyKey: {2}, whenUnsatisfiable: DoNotSchedule, "
        "labelSelector: {{matchLabels: {{{0}}}}}}}\n",
        labels, std::max(1, in.replicas - 2 * in.floor_replicas), capacity_type_label(in));
  out += fmt::format(
      "apiVersion: apps/v1\n"
      "kind: Deployment\n"
      "metadata:\n"
      "  name: {0}\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {12}}}\n"
      "spec:\n"
      "  replicas: {1}\n"
      "  selector:\n"
      "    matchLabels: {{{12}}}\n"
      "  strategy:\n"
      "    type: RollingUpdate\n"
      "    rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}\n"
      "  template:\n"
      "    metadata:\n"
      "      labels: {{app.kubernetes.io/name: {0}, {12}}}\n"
      "    spec:\n"
      "      terminationGracePeriodSeconds: {2}\n"
      "{15}"
      "{3}"
      "{4}"
      "      containers:\n"
      "        - name: server\n"
      "          image: {5}\n"
      "{6}"
      "{13}"
      "          ports: [{{name: http, containerPort: 8000}}{14}]\n"
      "{7}"
      "          startupProbe:\n"
      "            httpGet: {{path: {9}, port: http}}\n"
      "            periodSeconds: {10}\n"
      "            failureThreshold: {11}\n"
      "          readinessProbe:\n"
      "            httpGet: {{path: {9}, port: http}}\n"
      "            periodSeconds: 5\n"
      "            failureThreshold: 3\n"
      "          livenessProbe:\n"
      "            httpGet: {{path: {9}, port: http}}\n"
      "            periodSeconds: 15\n"
      "            failureThreshold: 4\n"
      "          lifecycle:\n"
      "            preStop: {{sleep: {{seconds: 5}}}}\n"
      "{8}",
      name, in.replicas, static_cast<long long>(std::ceil(in.termination_grace_s)),
      spread.empty() ? "" : "      topologySpreadConstraints:\n" + spread, weights_init_container(uri, target, 6), yaml_quoted(image), args,
      container_resources(in, 10), pod_volumes(in, 6), in.llm ? "/health" : "/v2/health/ready", period_s, startup_failures, labels,
      in.role.empty() ? ""
                      : "          env:\n"
                        "            - {name: VLLM_NIXL_SIDE_CHANNEL_HOST, valueFrom: {fieldRef: {fieldPath: status.podIP}}}\n",
      in.llm ? "" : fmt::format(", {{name: metrics, containerPort: {}}}", kTritonMetricsPort), node_placement(in, 6));
  return out;
}

std::string service(const ManifestInput& in, const std::string& name, const std::string& role_selected = "") {
  std::string out = manifest_header(in, role_selected.empty()      ? "Service (v1): the replicas' endpoint"
                                        : role_selected == "leader" ? "Service (v1): the replicas' endpoint, their leader pods"
                                                                    : "Service (v1): the service's endpoint, its " + role_selected);
  out += !role_selected.empty() ? "# Clients call it directly, or through your ingress or gateway.\n"
         : in.min_replicas == 0
             ? "# Clients reach it through the KEDA HTTP add-on's interceptor (see the InterceptorRoute), never directly:\n"
               "# at zero replicas this Service has no endpoints and refuses connections.\n"
             : "# Clients call it directly, or through your ingress or gateway.\n";
  if (role_selected.empty() && !in.verified_routing.empty())
    out += fmt::format("# Routing: the plan was verified with {} routing; kube-proxy spreads this Service's connections over the\n"
                       "# replicas at random. Put a router that routes so in front, or plan with deployment.router: random.\n",
                       in.verified_routing);
  out += service_yaml(name, "gpuwise.dev/service: " + name, pod_labels(name, role_selected), false,
                      in.llm ? "" : fmt::format("    - {{name: metrics, port: {0}, targetPort: metrics, protocol: TCP}}\n", kTritonMetricsPort));
  return out;
}

// Scale to zero and back: the interceptor counts requests in flight (its own metric, there at
// zero replicas), holds new ones until the Service it forwards to has a ready endpoint; the
// InterceptorRoute says how it routes and counts, a ScaledObject scales the Deployment on that
// count through the add-on's external scaler (http-add-on 0.14 and later: InterceptorRoute
// replaced the HTTPScaledObject, which made its own ScaledObject).
std::string interceptor_route(const ManifestInput& in, const std::string& name) {
  const double wait_s = std::max(60.0, std::ceil(2 * std::max(in.cold_start_s, in.startup_s)));
  const long long concurrency = std::max(1LL, static_cast<long long>(std::floor(in.queue_threshold)));
  std::string out = manifest_header(in, "KEDA HTTP add-on InterceptorRoute (http.keda.sh/v1beta1): the request path that wakes it from zero");
  out += fmt::format("# Why: minReplicaCount 0 ({}-keda-scaledobject.yaml): {}.\n", name, in.why_min);
  out += "# At zero replicas no pod exports a queue gauge and the Service has no endpoints, so a Prometheus trigger\n"
         "# could never wake the service. The add-on's interceptor is in the request path instead: it counts requests\n"
         "# in flight whether or not a replica runs, holds new ones until the Service below has a ready endpoint, and\n"
         "# reports the count to the add-on's external scaler, which the ScaledObject's trigger reads.\n";
  if (router_in_front(in))
    out += fmt::format("# The Service is the router's ({}-router-deployment.yaml), whose pods are ready only while a replica is:\n"
                       "# held requests go on once a replica has started and the router routes to it, and from then on\n"
                       "# every request is routed as the plan's simulation verified. The interceptor waits for the Service's\n"
                       "# ready endpoints (interceptor/middleware/endpoint_resolver.go).\n",
                       name);
  out += "# Send clients (or your ingress / gateway route) to\n";
  out += fmt::format("#   http://keda-add-ons-http-interceptor-proxy.keda:8080 with the header Host: {}\n", name);
  out += fmt::format("# Concurrency target: {} requests in flight per replica ({}).\n", concurrency, in.why_threshold);
  // A completion not streamed sends its headers only when it is done: the interceptor waits for
  // them as long as clients wait (at least its default 300 s; 0s: no limit, as clients set none).
  const std::string reply = in.client_timeout_s > 0 ? duration(std::max(300.0, in.client_timeout_s)) : "0s";
  out += fmt::format("# readiness {:.0f} s: twice the {:.0f} s cold start (node, image, weights), so held requests wait for the\n"
                     "# first replica instead of failing; responseHeader {}: a non-streaming completion sends its headers only\n"
                     "# when it is done, and clients wait {}. Source: {}.\n",
                     wait_s, in.cold_start_s, reply == "0s" ? "0s (no limit)" : reply,
                     in.client_timeout_s > 0 ? fmt::format("{:.0f} s", in.client_timeout_s) : "without a limit", kKedaHttpAddOnSource);
  out += fmt::format(
      "apiVersion: http.keda.sh/v1beta1\n"
      "kind: InterceptorRoute\n"
      "metadata:\n"
      "  name: {0}\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, gpuwise.dev/service: {0}}}\n"
      "spec:\n"
      "  target:\n"
      "    service: {0}\n"
      "    port: 8000\n"
      "  rules:\n"
      "    - hosts: [{0}]\n"
      "  scalingMetric:\n"
      "    concurrency:\n"
      "      targetValue: {1}\n"
      "  timeouts:\n"
      "    readiness: {2}\n"
      "    responseHeader: {3}\n",
      name, concurrency, duration(wait_s), reply);
  return out;
}

// A ScaledObject up to its triggers' list: what it scales, how often, between which counts, with
// the plan's HPA behaviour.
std::string scaled_object_head(const ManifestInput& in, const std::string& name, const ScaleTarget& target, int min_replicas) {
  return fmt::format(
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
      "  triggers:\n",
      metadata_and_target(in, name, target), static_cast<long long>(in.polling_interval_s), static_cast<long long>(std::ceil(in.cooldown_s)),
      min_replicas, in.max_replicas, behavior(in, "      "));
}

std::string scaled_object_from_zero(const ManifestInput& in, const std::string& name, const ScaleTarget& target) {
  std::string out = manifest_header(in, "KEDA ScaledObject (keda.sh/v1alpha1): scale to zero and back on the interceptor's count");
  out += fmt::format("# Why: minReplicaCount 0: {}.\n", in.why_min);
  out += fmt::format("# The trigger reads the requests in flight that {0}-interceptorroute.yaml counts at the interceptor (the add-on's\n"
                     "# external scaler pushes them, so the first request wakes the service at once); cooldownPeriod {1:.0f} s of\n"
                     "# no requests before it goes back to zero. Source: {2}.\n",
                     name, in.cooldown_s, kKedaHttpAddOnSource);
  out += scaled_object_head(in, name, target, 0);
  out += fmt::format(
      "    - type: external-push\n"
      "      metadata:\n"
      "        interceptorRoute: {}\n"
      "        scalerAddress: keda-add-ons-http-external-scaler.keda:9090\n",
      name);
  return out;
}

// The scrape the ScaledObject's query depends on: a ServiceMonitor on the Service (the pool's,
// for a role) whose series Prometheus Operator labels service="<the Service's name>".
std::string service_monitor(const ManifestInput& in, const std::string& name) {
  const std::string metrics = metrics_service_name(in);
  const std::string selector = pod_labels(dns_label(in.service), in.role);
  const bool from_zero = in.min_replicas == 0;  // the ScaledObject reads the interceptor's count; the HPA reads this
  std::string out = manifest_header(in, from_zero ? "ServiceMonitor (monitoring.coreos.com/v1): the scrape behind the HPA alternative's metric"
                                                  : "ServiceMonitor (monitoring.coreos.com/v1): the scrape behind the queue-depth trigger");
  out += fmt::format(
      "# Prometheus Operator scrapes {4} from the pods behind the Service {6}, every\n"
      "# polling interval, and labels each series service=\"{6}\": what {8} select.\n"
      "# Your Prometheus must select this object (its serviceMonitorSelector, e.g. the label\n"
      "# release: <your kube-prometheus-stack release>) in this namespace; without the scrape the query finds nothing\n"
      "# and the pool stays at its minimum.{7} Source: {1}.\n"
      "apiVersion: monitoring.coreos.com/v1\n"
      "kind: ServiceMonitor\n"
      "metadata:\n"
      "  name: {0}\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {2}}}\n"
      "spec:\n"
      "  selector:\n"
      "    matchLabels: {{{2}}}\n"
      "  endpoints:\n"
      "    - {{port: {5}, path: /metrics, interval: {3}}}\n",
      name, kServiceMonitorSource, selector, duration(in.polling_interval_s),
      in.llm ? "vLLM's /metrics (served on its API port)" : fmt::format("Triton's /metrics (on its metrics port, {})", kTritonMetricsPort),
      in.llm ? "http" : "metrics", metrics,
      queue_in_proxy(in) ? fmt::format("\n# It scrapes HAProxy's /metrics (port {}) through the Service {} too, labelled service=\"{}\": its\n"
                                       "# backend's queue, where requests wait for a replica free.",
                                       kHaproxyMetricsPort, name, name)
                         : "",
      from_zero ? fmt::format("{}-hpa.yaml's metric (the alternative without KEDA, through prometheus-adapter) and your dashboards", name)
                : fmt::format("{}-keda-scaledobject.yaml's query and the HPA's metric", name));
  return out;
}

}  // namespace

std::string serving_image(const ManifestInput& in) {
  return !in.image.empty() ? in.image : !in.llm ? kTritonImage : on_tpu(in) ? kVllmTpuImage : kVllmImage;
}

std::string manifest_header(const ManifestInput& in, const std::string& what) {
  return fmt::format(
      "# {} for {} {}, written by gpuwise plan --emit-k8s.\n"
      "# Replica: {} x {}{} (${:.4g}/replica-hour); {} {} replicas; cold start {:.0f} s.\n",
      what, in.batch_job ? "batch job" : "service", yaml_quoted(in.service), in.gpus_per_replica * std::max(1, in.nodes_per_replica), in.accelerator,
      in.nodes_per_replica > 1 ? fmt::format(" over {} nodes", in.nodes_per_replica) : "", in.usd_per_replica_hour,
      in.batch_job ? "a run:" : "peak plan", in.batch_job ? in.replicas : in.peak_replicas, in.cold_start_s);
}

std::string weights_uri(const ManifestInput& in, const std::string& model) {
  if (!in.model_uri.empty()) return in.model_uri;
  return fmt::format("{}://YOUR-BUCKET/models/{}/REVISION", in.cloud == "gcp" ? "gs" : "s3", model);
}

std::string weights_init_container(const std::string& uri, const std::string& target, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  const bool gcs = uri.rfind("gs://", 0) == 0;
  return fmt::format(
      "{0}initContainers:\n"
      "{0}  - name: fetch-weights\n"
      "{0}    image: {1}\n"
      "{0}    command: [{2}, {3}, {4}]\n"
      "{0}    volumeMounts: [{{name: weights, mountPath: /models}}]\n",
      pad, gcs ? "gcr.io/google.com/cloudsdktool/google-cloud-cli:slim" : "amazon/aws-cli:2.17.0",
      gcs ? "gcloud, storage, rsync, --recursive" : "aws, s3, sync, --only-show-errors", yaml_quoted(uri), yaml_quoted(target));
}

int startup_probe_failures(const ManifestInput& in) {
  return std::max(6, static_cast<int>(std::ceil(in.startup_s * 2 / kStartupProbePeriodS)));
}

std::string container_resources(const ManifestInput& in, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  return fmt::format(
      "{0}resources:\n"
      "{0}  requests: {{cpu: {1}, memory: {2}Gi, {4}: \"{3}\"}}\n"
      "{0}  limits: {{memory: {2}Gi, {4}: \"{3}\"}}\n"
      "{0}volumeMounts:\n"
      "{0}  - {{name: weights, mountPath: /models}}\n"
      "{0}  - {{name: shm, mountPath: /dev/shm}}\n",
      pad, quantity(in.cpu_per_replica), static_cast<long long>(std::floor(in.memory_gib_per_replica)), in.gpus_per_replica,
      accelerator_resource(on_tpu(in)));
}

std::string pod_volumes(const ManifestInput& in, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  return fmt::format(
      "{0}volumes:\n"
      "{0}  - {{name: weights, emptyDir: {{}}}}\n"
      "{0}  - {{name: shm, emptyDir: {{medium: Memory, sizeLimit: {1}Gi}}}}\n",
      pad, static_cast<long long>(shm_gib(in.memory_gib_per_replica)));
}

std::string yaml_quoted(const std::string& text) { return nlohmann::json(text).dump(); }

std::string yaml_quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + yaml_quoted(item);
  return out;
}

double shm_gib(double memory_gib) { return std::clamp(std::floor(std::floor(memory_gib) / 2), 1.0, 16.0); }

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

std::string nodepool_manifest(const ManifestInput& in, int gpu_limit, const std::string& limit_note) {
  const std::string name = dns_label(in.service);
  std::string group = "karpenter.k8s.aws", kind = "EC2NodeClass";
  std::string note;
  if (in.cloud == "azure") group = "karpenter.azure.com", kind = "AKSNodeClass";
  else if (in.cloud != "aws")
    note = fmt::format("# Karpenter provisions nodes on AWS and Azure; this plan's offering is on {}: adapt nodeClassRef and the\n"
                       "# instance-type requirement to that cloud's node provisioner.\n", in.cloud);
  const std::string types = yaml_quoted_list(in.instance_types), capacity = yaml_quoted_list(in.capacity_types);
  std::string pool = manifest_header(in, "Karpenter NodePool (karpenter.sh/v1)") + note;
  pool += fmt::format("# GPU limit: {}. Capacity types: {} (spot only where the spec allows it).\n", limit_note, capacity);
  std::string zone;
  if (!in.local_zone_id.empty()) {
    pool += fmt::format("# Zone: the plan's spot price is the AWS Local Zone {}'s, so the nodes stay there: opt the account into it\n"
                        "# (aws ec2 modify-availability-zone-group) and give the EC2NodeClass a subnet in it. On-demand nodes there\n"
                        "# may cost more than the region's price.\n",
                        in.local_zone_id);
    zone = fmt::format(
        "        - key: topology.k8s.aws/zone-id\n"
        "          operator: In\n"
        "          values: [{}]\n",
        yaml_quoted(in.local_zone_id));
  }
  pool += fmt::format(
      "apiVersion: karpenter.sh/v1\n"
      "kind: NodePool\n"
      "metadata:\n"
      "  name: {7}-gpu\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise}}\n"
      "spec:\n"
      "  template:\n"
      "    metadata:\n"
      "      labels: {{{8}}}\n"
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
      "{9}"
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
      name, group, kind, capacity, types, duration(in.cooldown_s), gpu_limit, workload_name(in), pod_labels(name, in.role), zone);
  return pool;
}

Manifest nodes_manifest(const ManifestInput& in, int accelerator_limit, const std::string& limit_note, const std::string& file_stem,
                        const std::string& summary) {
  if (on_gke(in)) return {file_stem + "-gke-computeclass.yaml", gke_compute_class_manifest(in, accelerator_limit, limit_note), summary};
  return {file_stem + "-karpenter-nodepool.yaml", nodepool_manifest(in, accelerator_limit, limit_note), summary};
}

std::string node_placement(const ManifestInput& in, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (!on_gke(in))
    return fmt::format(
        "{0}nodeSelector: {{{1}}}\n"
        "{0}tolerations:\n"
        "{0}  - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}\n",
        pad, pod_labels(dns_label(in.service), in.role));
  // Nodes GKE creates for a ComputeClass carry its taint; spot nodes it creates, gke-spot's.
  const bool spot = std::find(in.capacity_types.begin(), in.capacity_types.end(), "spot") != in.capacity_types.end();
  return fmt::format(
      "{0}nodeSelector: {{cloud.google.com/compute-class: {1}}}\n"
      "{0}tolerations:\n"
      "{0}  - {{key: {2}, operator: Exists, effect: NoSchedule}}\n"
      "{0}  - {{key: cloud.google.com/compute-class, operator: Equal, value: {1}, effect: NoSchedule}}\n"
      "{3}",
      pad, compute_class_name(in), accelerator_resource(on_tpu(in)),
      spot ? pad + "  - {key: cloud.google.com/gke-spot, operator: Equal, value: \"true\", effect: NoSchedule}\n" : "");
}

bool on_gke(const ManifestInput& in) { return in.cloud == "gcp" && !in.gke_nodes.empty(); }

bool on_tpu(const ManifestInput& in) { return on_gke(in) && in.gke_nodes.front().tpu; }

const char* capacity_type_label(const ManifestInput& in) { return on_gke(in) ? "cloud.google.com/gke-provisioning" : "karpenter.sh/capacity-type"; }

std::string accelerator_words(const ManifestInput& in) { return on_tpu(in) ? "TPU chip(s)" : "GPU(s)"; }

std::string workload_name(const ManifestInput& in) {
  return in.role.empty() ? dns_label(in.service) : dns_label(in.service) + "-" + in.role;
}

bool queue_in_proxy(const ManifestInput& in) { return router_in_front(in) && !in.haproxy_balance.empty() && in.haproxy_maxconn_per_replica > 0; }

bool router_in_front(const ManifestInput& in) {
  const bool router = (in.llm && !in.vllm_router_policy.empty()) || !in.haproxy_balance.empty();
  return router && in.role.empty();
}

std::string metrics_service_name(const ManifestInput& in) { return router_in_front(in) ? workload_name(in) + "-replicas" : workload_name(in); }

std::string deployment_manifest(const ManifestInput& in) { return deployment(in); }

std::string service_manifest(const ManifestInput& in, const std::string& role_selected) {
  return service(in, dns_label(in.service), role_selected);
}

std::vector<Manifest> autoscaler_manifests(const ManifestInput& in, const ScaleTarget& target) {
  const std::string name = workload_name(in);
  const std::string metrics = metrics_service_name(in);  // the service label on the replicas' series
  const bool waiting_only = !in.llm;
  const bool duty = in.duty_cycle_target_pct > 0;
  const double threshold = duty ? in.duty_cycle_target_pct : in.queue_threshold;
  std::vector<Manifest> out;
  if (in.min_replicas == 0) {
    out.push_back({name + "-interceptorroute.yaml", interceptor_route(in, name),
                   fmt::format("the KEDA HTTP add-on's interceptor in the request path: it holds requests while the first replica "
                               "starts and counts those in flight ({})", kKedaHttpAddOnSource)});
    out.push_back({name + "-keda-scaledobject.yaml", scaled_object_from_zero(in, name, target),
                   fmt::format("scales 0..{} on requests in flight at the interceptor (external-push trigger)", in.max_replicas)});
  } else {
    std::string keda = manifest_header(in, "KEDA ScaledObject (keda.sh/v1alpha1)");
    keda += fmt::format("# Threshold: {}.\n", in.why_threshold);
    if (!duty)
      keda += queue_in_proxy(in)
                  ? fmt::format("# The query's series: HAProxy's backend queue and Triton's pending count as {}-servicemonitor.yaml has them\n"
                                "# scraped (service=\"{}\" and service=\"{}\").\n",
                                name, name, metrics)
                  : fmt::format("# The query's series: {} as {}-servicemonitor.yaml has them scraped (service=\"{}\").\n",
                                in.llm ? "vLLM's gauges" : "Triton's pending count", name, metrics);
    keda += fmt::format("# minReplicaCount {}: {}.\n", in.min_replicas, in.why_min);
    if (!in.schedule.empty()) keda += fmt::format("# Cron triggers ({}): {}.\n", in.timezone, in.why_schedule);
    if (duty)
      keda += fmt::format("# The duty cycle comes from dcgm-exporter's per-GPU series, labelled with the pod holding the GPU (pod;\n"
                          "# scraped with honorLabels: false, Prometheus renames it exported_pod: use that label then). {}\n",
                          kDcgmPodLabelSource);
    if (!in.role.empty())
      keda += "# Never to zero: the router sends prompts and decodings to the pools' pods directly, so no interceptor can\n"
              "# hold a request while a pool wakes.\n";
    else
      keda += fmt::format("# Kept warm: scaling to zero would need the HTTP add-on's interceptor in the request path (a cold start\n"
                          "# takes {:.0f} s); cooldownPeriod {:.0f} s applies only to zero.\n",
                          in.cold_start_s, in.cooldown_s);
    keda += scaled_object_head(in, name, target, in.min_replicas);
    keda += fmt::format(
        "    - type: prometheus\n"
        "      metricType: AverageValue\n"
        "      metadata:\n"
        "        serverAddress: {}\n"
        "        query: {}\n"
        "        threshold: {}\n"
        "        activationThreshold: \"0\"\n",
        yaml_quoted(in.prometheus_url), yaml_quoted(scaling_query(in, name, metrics)), yaml_quoted(fmt::format("{:.3g}", threshold)));
    // The schedule's triggers: each active from its start to its end, the HPA taking the
    // largest count any trigger asks.
    for (const auto& w : in.schedule)
      keda += fmt::format(
          "    - type: cron  # {0}\n"
          "      metadata:\n"
          "        timezone: {1}\n"
          "        start: {2}\n"
          "        end: {3}\n"
          "        desiredReplicas: {4}\n",
          w.note, yaml_quoted(in.timezone), yaml_quoted(w.start), yaml_quoted(w.end), yaml_quoted(std::to_string(w.replicas)));
    out.push_back({name + "-keda-scaledobject.yaml", keda,
                   in.schedule.empty() ? fmt::format("scales {}..{} on {}", in.min_replicas, in.max_replicas, signal_words(in))
                                       : fmt::format("scales {}..{} on {} and {} cron window(s) "
                                                     "that start replicas ahead of the traffic's hours ({})",
                                                     in.min_replicas, in.max_replicas, signal_words(in), in.schedule.size(), in.timezone)});
  }

  std::string hpa = manifest_header(in, "HorizontalPodAutoscaler (autoscaling/v2) on an external metric, the alternative without KEDA");
  hpa += fmt::format("# The metric comes from prometheus-adapter with this query: {}\n", scaling_query(in, name, metrics));
  hpa += fmt::format("# Target: {}. An HPA cannot scale to zero (minReplicas >= 1).\n", in.why_threshold);
  // One count throughout needs no job: it is the floor.
  const int hpa_min = std::max({1, in.min_replicas, !in.schedule.empty() && in.schedule_changes.empty() ? in.schedule.front().replicas : 0});
  if (!in.schedule_changes.empty())
    hpa += fmt::format("# It follows the schedule ({}) through {} CronJob(s), {}-hpa-schedule-*-cronjob.yaml, that set minReplicas at\n"
                       "# each change: {}.\n"
                       "# Applied between two changes, minReplicas stays {} until the next; to set it at once, run the latest\n"
                       "# change that has passed: kubectl create job --from=cronjob/{}-K {}-now (K its number). A GitOps\n"
                       "# sync of this file resets the floor: leave /spec/minReplicas out of its comparison.\n",
                       in.timezone, in.schedule_changes.size(), name, in.why_schedule, hpa_min,
                       floor_cronjob_prefix(in), name);
  else if (!in.schedule.empty())
    hpa += fmt::format("# minReplicas is the schedule's count, the same at every hour: {}.\n", in.why_schedule);
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
      "            matchLabels: {{service: {7}}}\n"
      "        target:\n"
      "          type: AverageValue\n"
      "          averageValue: {4}\n"
      "{5}",
      name, hpa_min, in.max_replicas, duty ? "gpu_duty_cycle_pct_summed_per_replica" : waiting_only ? "requests_pending" : "requests_waiting_or_running",
      yaml_quoted(quantity(threshold)), behavior(in, "  "), metadata_and_target(in, name, target), metrics);
  const std::string signal = duty ? "duty-cycle" : "queue-depth";
  out.push_back({name + "-hpa.yaml", hpa,
                 in.schedule_changes.empty() ? fmt::format("the same {} signal without KEDA (never below 1 replica)", signal)
                                             : fmt::format("the same {} signal without KEDA (never below 1 replica), its floor set by the "
                                                           "schedule's CronJobs", signal)});
  for (auto& m : hpa_schedule_manifests(in)) out.push_back(std::move(m));
  // What the queue-depth query reads: vLLM's gauges or Triton's pending count, scraped from the
  // Service's endpoints and labelled with its name (Prometheus Operator's service label).
  // At zero too: the HPA alternative reads it (the ScaledObject reads the interceptor's count).
  if (!duty)
    out.push_back({name + "-servicemonitor.yaml", service_monitor(in, name),
                   fmt::format("Prometheus Operator scrapes {}'s /metrics on the {} Service's pods every {:.0f} s: the series the "
                               "queue-depth query reads, labelled service=\"{}\"", in.llm ? "vLLM" : "Triton", metrics, in.polling_interval_s, metrics)});
  return out;
}

std::vector<Manifest> service_manifests(const ManifestInput& in) {
  const std::string name = dns_label(in.service);
  std::vector<Manifest> out;
  out.push_back({name + "-deployment.yaml", deployment(in),
                 fmt::format("{} replica(s) of {} x {}; requests {} CPU, {:.0f} GiB{}", in.replicas, in.gpus_per_replica, in.accelerator,
                             quantity(in.cpu_per_replica), std::floor(in.memory_gib_per_replica),
                             in.why_resources.empty() ? "" : " (" + in.why_resources + ")")});
  if (router_in_front(in)) {
    for (auto& m : router_manifests(in, name)) out.push_back(std::move(m));
  } else {
    out.push_back({name + "-service.yaml", service(in, name), "ClusterIP Service on port 8000"});
  }
  for (auto& m : autoscaler_manifests(in, ScaleTarget{})) out.push_back(std::move(m));

  const std::string types = yaml_quoted_list(in.instance_types);
  const int gpu_limit = in.max_replicas * in.gpus_per_replica;
  out.push_back(nodes_manifest(in, gpu_limit, fmt::format("{} replicas x {} {}", in.max_replicas, in.gpus_per_replica, accelerator_words(in)),
                               name, fmt::format("nodes of {} for up to {} {}", types, gpu_limit, accelerator_words(in))));
  return out;
}

}  // namespace gw
