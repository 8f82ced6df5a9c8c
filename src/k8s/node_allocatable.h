// What a managed Kubernetes node leaves for pods: capacity less the kubelet's and system's
// reservations and the hard eviction threshold, by each cloud's published formula (EKS, GKE,
// AKS), less an allowance for the DaemonSets every GPU node runs. A pod that requests more than
// this stays Pending for ever, whatever the instance's nominal memory says.
#pragma once

#include <string>

namespace gw {

struct NodeAllocatable {
  double cpu = 0;         // cores the kubelet reports as allocatable
  double memory_gib = 0;  // GiB the kubelet reports as allocatable
  double cpu_for_pods = 0;         // less the DaemonSet allowance: what our pods may request
  double memory_gib_for_pods = 0;
  std::string formula;    // how it was worked out, with the source
};

// Pods a node runs at most, for the formulas that depend on it: the kubelet's default, as
// Karpenter and prefix delegation set on EKS, and AKS with kubenet.
inline constexpr int kDefaultMaxPods = 110;
// DaemonSets on a GPU node (NVIDIA device plugin, DCGM exporter, GPU feature discovery,
// kube-proxy, the CNI, a log shipper) request about this much between them: a labelled
// assumption from their charts' default requests, to be checked against the cluster.
inline constexpr double kDaemonSetCpu = 0.5;
inline constexpr double kDaemonSetMemoryGib = 1.0;

// cloud: aws (EKS), gcp (GKE), azure (AKS, 1.29 and later); any other cloud gets GKE's
// formula, the most conservative of the three for GPU-sized nodes, and says so.
NodeAllocatable node_allocatable(const std::string& cloud, double vcpus, double memory_gib, int max_pods = kDefaultMaxPods);

}  // namespace gw
