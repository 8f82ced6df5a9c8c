// Where a pod lands on GKE: the labels GKE sets on its accelerator nodes (a pod selects them),
// the device the pod requests (nvidia.com/gpu or google.com/tpu, each behind its NoSchedule
// taint), and the machine a ComputeClass asks node auto-provisioning for. A plan's TPU
// offering is named as Cloud TPU names it (tpu-v6e-4: four chips; tpu-v5p-8: eight
// TensorCores, four chips); GKE runs single-host slices under machine types of its own
// (ct6e-standard-4t, topology 2x2). Karpenter does not run on GKE: a ComputeClass does its job.
#pragma once

#include <optional>
#include <string>

namespace gw {

struct GkeNodeShape {
  bool tpu = false;
  std::string accelerator_label;  // cloud.google.com/gke-accelerator (GPUs) or gke-tpu-accelerator (TPUs)
  std::string tpu_topology;       // cloud.google.com/gke-tpu-topology of a single-host slice ("2x2")
  std::string machine_type;       // the node's machine type; empty: machine_family (GPUs on an n1 VM you size)
  std::string machine_family;
  int accelerators_per_node = 1;  // GPUs, or TPU chips
};

// accelerator: the catalog's name (L4, H100, TPU-v6e); instance_type as the catalog has it.
// std::nullopt, with the reason in *why: GKE has no node of that shape (TPU v2 and v3 run as
// Cloud TPU VMs only; a multi-host slice is several nodes vLLM does not serve across on GKE).
std::optional<GkeNodeShape> gke_node_shape(const std::string& accelerator, const std::string& instance_type, int accelerators_per_node,
                                           std::string* why);

// The device plugin's resource a pod requests for its accelerators, and the taint key GKE puts
// on such nodes.
inline const char* accelerator_resource(bool tpu) { return tpu ? "google.com/tpu" : "nvidia.com/gpu"; }

inline constexpr const char* kGkeNodeLabelsSource =
    "GKE docs: 'About GPUs in GKE' and 'Run GPUs in GKE Standard node pools' (cloud.google.com/gke-accelerator values, "
    "nvidia.com/gpu=present:NoSchedule), 'Plan TPUs in GKE' (single-host machine types ct6e-standard-1t/4t/8t, "
    "ct5lp-hightpu-1t/4t/8t, ct5p-hightpu-4t, ct4p-hightpu-4t with topologies 1x1, 2x2, 2x4, 2x2x1; gke-tpu-accelerator "
    "tpu-v6e-slice, tpu-v5-lite-podslice, tpu-v5p-slice, tpu-v4-podslice; google.com/tpu=present:NoSchedule), "
    "'About custom ComputeClasses' (cloud.google.com/compute-class, GKE 1.30.3-gke.1451000 and later) (read 2026-12-07)";

}  // namespace gw
