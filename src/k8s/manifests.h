// Kubernetes manifests for a planned service: the Deployment (serving image, GPU requests,
// CPU and memory within the node's allocatable share, the toleration for the NodePool's taint,
// weights pulled from object storage at start-up, a startup probe as long as the cold start the
// plan assumed) and its Service; the scaler: a KEDA ScaledObject (Prometheus trigger on queue
// depth, threshold from the plan's capacity at the SLO, and the ServiceMonitor whose scrape
// labels the series it reads) for a service kept warm, or, for one scaled to zero, a KEDA HTTP
// add-on InterceptorRoute, whose interceptor holds requests while the first replica starts (at
// zero replicas no pod exports a queue metric and a Service without endpoints refuses
// connections, so a Prometheus trigger would never wake it), and a ScaledObject on its count; an HPA
// v2 on the same signal as an external metric (the alternative without KEDA; where a schedule
// is followed, CronJobs set its floor: hpa_schedule_manifests.h); and a Karpenter
// NodePool for the plan's instances. Each file is commented with the figures it came from.
#pragma once

#include "core/serving_defaults.h"
#include "k8s/cron_windows.h"
#include "k8s/gke_nodes.h"

#include <string>
#include <vector>

namespace gw {

struct ManifestInput {
  std::string service;              // the spec's name; made DNS-1123 for metadata.name
  bool batch_job = false;           // a batch job's replicas (batch_job_manifests.h), not a service's
  bool llm = false;
  // Scaling.
  double queue_threshold = 1;       // requests queued or in service per replica
  // Above 0: scale on the replicas' GPU duty cycle instead (DCGM_FI_DEV_GPU_UTIL, % per replica),
  // for a pool busy in proportion to its load (a disaggregated prefill pool).
  double duty_cycle_target_pct = 0;
  int min_replicas = 1;             // 0: scale to zero pays
  int max_replicas = 1;
  int peak_replicas = 1;
  double cooldown_s = 300;
  double polling_interval_s = 15;
  double scale_down_window_s = 300;
  double scale_up_window_s = 0;
  std::string prometheus_url = "http://prometheus-operated.monitoring.svc:9090";
  std::string why_min;              // the figures behind minReplicaCount
  std::string why_threshold;        // the figures behind the threshold
  // Replicas asked by time beside the metric (the `scheduled` policy): KEDA cron triggers in
  // the traffic profile's clock, and the same schedule as the HPA's floor set by CronJobs at its
  // changes (hpa_schedule_manifests.h); empty: none.
  std::vector<CronWindow> schedule;
  std::vector<CronChange> schedule_changes;
  std::string timezone = "UTC";     // IANA name
  std::string why_schedule;         // the figures behind it
  // Nodes.
  std::string cloud;
  std::vector<std::string> instance_types;
  std::vector<std::string> capacity_types;  // on-demand, spot
  // On GKE (cloud gcp), each instance type's node shape, in the same order: the pods select a
  // ComputeClass that provisions those nodes (Karpenter does not run there).
  std::vector<GkeNodeShape> gke_nodes;
  // An AWS Local Zone the plan's spot price is from (its zone ID): the NodePool keeps the nodes
  // there (topology.k8s.aws/zone-id); empty: the region's zones.
  std::string local_zone_id;
  int gpus_per_replica = 1;           // per pod: a replica across nodes has nodes_per_replica pods
  int nodes_per_replica = 1;          // > 1: one pod per node, a LeaderWorkerSet (multi_node_manifests.h)
  std::string accelerator;
  double usd_per_replica_hour = 0;
  double cold_start_s = 0;
  // The workload (Deployment).
  int replicas = 1;                    // the plan's
  int min_nodes = 1;                   // replicas spread so one node lost leaves the rest serving
  bool spot_floor = false;             // spot nodes with an on-demand floor
  int floor_replicas = 0;              // replicas the on-demand nodes keep
  std::string image;                   // empty: vLLM (LLMs) or Triton by default
  std::string model_name;              // the spec's model key
  std::string model_uri;               // versioned object-storage path; empty: a placeholder to set
  int max_batch = 256;
  int token_budget = kStepTokenBudget;
  double gpu_memory_utilization = kUsableMemoryFraction;
  double cpu_per_replica = 4;          // cores requested
  double memory_gib_per_replica = 16;  // host memory requested (the shm volume counts against it)
  std::string why_resources;           // how the requests were sized against the node's allocatable
  double startup_s = 0;                // container start + model load, as the plan assumed
  double termination_grace_s = 30;     // what a replica may take to finish in-flight requests
  // Disaggregated serving: this pool's role (prefill or decode; empty for one pool). Its pods
  // carry gpuwise.dev/role and vLLM's NIXL KV connector (disaggregated_manifests.h).
  std::string role;
  std::string pool_note;               // comment lines said after the Deployment's header, if any
  // One pool kept warm: the vLLM Router in front of the replicas with this policy (round_robin
  // or power_of_two, as the plan was verified; empty: no router), its Service the one clients
  // call; the replicas' Service, headless, is their metrics' (service="<name>-replicas").
  std::string vllm_router_policy;
  // Or HAProxy in front (haproxy_manifests.h), for routing the vLLM Router lacks: its balance
  // (leastconn or roundrobin; empty: none) and the requests each replica takes from it at once
  // (1 for a model served one at a time: the proxy's queue is the queue the replicas share; 0: no
  // limit); requests wait in its queue at most the clients' timeout (0: theirs is none).
  std::string haproxy_balance;
  int haproxy_maxconn_per_replica = 0;
  int router_replicas = 0;             // the router's pods (deployment.router_replicas); 0: its own default
  double client_timeout_s = 60;
  // Without either: the routing the plan was verified with where a Service's random spread is not
  // it (a router the spec names that neither proxy has); empty: none to say.
  std::string verified_routing;
  std::string reserve_note;            // and what of it to reserve (the floor its autoscaler was billed at), if any
};

struct Manifest {
  std::string file_name;  // e.g. chat-keda-scaledobject.yaml
  std::string yaml;
  std::string summary;    // one line on what it does and why (plan --emit-k8s --explain)
};

// Where the scale-from-zero path comes from, for comments and --explain.
inline constexpr const char* kKedaHttpAddOnSource =
    "KEDA HTTP add-on 0.14 and later, InterceptorRoute http.keda.sh/v1beta1 and a ScaledObject with its external-push "
    "trigger (keda.sh/http-add-on user guide 'Autoscale an App', config/crd/bases/http.keda.sh_interceptorroutes.yaml, "
    "read 2026-12-07)";

// Where the duty-cycle query's pod label comes from.
inline constexpr const char* kDcgmPodLabelSource =
    "Source: NVIDIA/dcgm-exporter, Kubernetes pod mapping (labels pod, namespace, container) and issue #85 on exported_pod "
    "(read 2026-12-06).";

// Where the ServiceMonitor's service label and fields come from.
inline constexpr const char* kServiceMonitorSource =
    "prometheus-operator, Documentation/api-reference (ServiceMonitor; targets labelled service with the Service's name), "
    "schema extract at operator 0.93.0 in schemas/k8s (read 2026-12-05)";

// The serving image for LLMs unless the spec names one (services[].scaling.image).
inline constexpr const char* kVllmImage = "vllm/vllm-openai:v0.9.2";
// vLLM's TPU build (the CUDA image does not run on TPUs): the tag GKE's TPU serving examples
// pin (docker.io/vllm/vllm-tpu:v0.11.1, read 2026-12-07).
inline constexpr const char* kVllmTpuImage = "vllm/vllm-tpu:v0.11.1";
// Triton serves its Prometheus metrics on a port of their own, 8002 by default (triton-inference-server/
// server docs/user_guide/metrics.md, --metrics-port; read 2026-12-06); vLLM serves /metrics on its API port.
inline constexpr int kTritonMetricsPort = 8002;
// Triton's release for models that are not LLMs (pinned).
inline constexpr const char* kTritonImage = "nvcr.io/nvidia/tritonserver:24.05-py3";
// The engine's image: the spec's, else Triton for models that are not LLMs, else vLLM's build
// for the plan's accelerator (TPU or CUDA).
std::string serving_image(const ManifestInput& input);

// The comment lines every manifest of a service opens with: what it is, and the replica's figures.
std::string manifest_header(const ManifestInput& input, const std::string& what);

// A pod's init container that copies the weights from object storage (gs://, else s3://) to
// target on the pod's weights volume; its lines indented by `indent` spaces (a pod spec's level).
std::string weights_init_container(const std::string& uri, const std::string& target, int indent);
// Where the weights are fetched from: the spec's scaling.model_uri, else a placeholder in the
// plan's cloud's object storage (gs:// on GCP, s3:// elsewhere) for the user to set.
std::string weights_uri(const ManifestInput& in, const std::string& model);

// The startup probe's period, and its failures allowed: twice the container start and model load
// the plan assumed (ManifestInput::startup_s) before the kubelet gives up, 6 at least.
inline constexpr int kStartupProbePeriodS = 10;
int startup_probe_failures(const ManifestInput& input);

// A serving container's requests and limits (its node share and GPUs) and its weights and shm
// mounts, and the pod's two volumes (the weights' emptyDir, the memory-backed shm within the
// limit): every serving pod's, its lines indented by `indent` spaces (the container's keys, the
// pod spec's keys).
std::string container_resources(const ManifestInput& input, int indent);
std::string pod_volumes(const ManifestInput& input, int indent);

// Size of the /dev/shm volume: a memory-backed emptyDir counts against the container's memory
// limit, so it takes at most half of it (16 GiB at most, 1 GiB at least).
double shm_gib(double memory_gib);

// A YAML scalar that says exactly this string (JSON's double-quoted form), and a list of them
// joined by ", " for a flow sequence.
std::string yaml_quoted(const std::string& text);
std::string yaml_quoted_list(const std::vector<std::string>& items);

// A DNS-1123 label from a free-form name (lowercase letters, digits and '-', at most 63).
std::string dns_label(const std::string& name);

// The workload's name: the service's label, and a disaggregated pool's role after it (chat-prefill).
std::string workload_name(const ManifestInput& in);
// A Service's YAML on port 8000 (http): its name, metadata labels and pod selector ("key: value,
// ..."), headless (no cluster IP: a scrape target) or a ClusterIP, and more port lines if any.
std::string service_yaml(const std::string& name, const std::string& labels, const std::string& selector, bool headless,
                         const std::string& extra_ports = "");
// Pods' labels, "key: value, ...": the service's, and the pool's role under disaggregation.
std::string pod_labels(const std::string& service, const std::string& role);
// Whether a router goes in front of a pool: the vLLM Router (ManifestInput::vllm_router_policy, an
// LLM's) or HAProxy (ManifestInput::haproxy_balance). A pool scaled to zero keeps it too: it is
// ready only while a replica is, so the KEDA HTTP add-on's interceptor holds requests until then.
bool router_in_front(const ManifestInput& in);
// The Service whose name labels the replicas' metrics (service="..."): the workload's, or
// <name>-replicas behind a router.
std::string metrics_service_name(const ManifestInput& in);
// Whether requests wait in HAProxy's queue rather than at the replicas (each takes a set number
// at a time from it): the autoscalers then read its queue too.
bool queue_in_proxy(const ManifestInput& in);

std::vector<Manifest> service_manifests(const ManifestInput& input);

// The workload an autoscaler scales (its scale subresource): the Deployment, or a LeaderWorkerSet
// of groups across nodes.
struct ScaleTarget {
  std::string api_version = "apps/v1";
  std::string kind = "Deployment";
};
// The autoscalers of a service kept warm or scaled to zero (min_replicas 0: the HTTP add-on's
// InterceptorRoute and a ScaledObject on its count, a Deployment only), and the HPA alternative,
// on the queue-depth signal (or the duty cycle). With a role, those of that pool's Deployment,
// named as it is.
std::vector<Manifest> autoscaler_manifests(const ManifestInput& input, const ScaleTarget& target);

// The Deployment of one pool (its name: the service's, with "-prefill" or "-decode" for a role).
std::string deployment_manifest(const ManifestInput& input);

// A ClusterIP Service on port 8000 for the service's pods (with a role: those of that role only).
std::string service_manifest(const ManifestInput& input, const std::string& role_selected);

// One Karpenter NodePool for the service's nodes (with a role: that pool's nodes alone, so that
// each pool spreads over its own nodes), up to gpu_limit GPUs (limit_note: how many).
std::string nodepool_manifest(const ManifestInput& input, int gpu_limit, const std::string& limit_note);

// Where the pods run on the cloud's node provisioner: a Karpenter NodePool (AWS, Azure), or on
// GKE a ComputeClass (gke_compute_class_manifest). The file is <file_stem>-karpenter-nodepool.yaml
// or <file_stem>-gke-computeclass.yaml; accelerator_limit: GPUs or TPU chips at most.
Manifest nodes_manifest(const ManifestInput& input, int accelerator_limit, const std::string& limit_note, const std::string& file_stem,
                        const std::string& summary);

// The pod spec's nodeSelector and tolerations, at indent: the NodePool's nodes, labelled with the
// service (and role), or the ComputeClass's on GKE, with the taints of the accelerator and of spot.
std::string node_placement(const ManifestInput& input, int indent);

// On GKE: the TPU or GPU nodes the pods run on (false: no shape given, not on GKE).
bool on_gke(const ManifestInput& input);
bool on_tpu(const ManifestInput& input);

// What the pods' accelerators are called in comments: "GPU(s)", or "TPU chip(s)".
std::string accelerator_words(const ManifestInput& input);

// The node label that tells on-demand nodes from spot ones: Karpenter's, or GKE's.
const char* capacity_type_label(const ManifestInput& input);

}  // namespace gw
