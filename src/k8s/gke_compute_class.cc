#include "k8s/gke_compute_class.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "k8s/node_allocatable.h"

namespace gw {
namespace {

// An n1 VM with GPUs attached is sized by whoever creates it: the smallest cores and memory
// whose allocatable share (GKE's reservations, kubelet eviction, the GPU DaemonSets) holds every
// replica the node takes.
void smallest_n1_host(const ManifestInput& in, const GkeNodeShape& shape, int& cores, int& memory_gb) {
  const int replicas = std::max(1, shape.accelerators_per_node / std::max(1, in.gpus_per_replica));
  cores = 1;
  while (node_allocatable("gcp", cores, 1e6).cpu_for_pods < replicas * in.cpu_per_replica && cores < 96) ++cores;
  memory_gb = 1;
  while (node_allocatable("gcp", cores, memory_gb).memory_gib_for_pods < replicas * std::floor(in.memory_gib_per_replica) && memory_gb < 624)
    ++memory_gb;
}

std::string priority(const ManifestInput& in, const GkeNodeShape& shape, bool spot) {
  std::string machine;
  if (!shape.machine_type.empty()) {
    machine = fmt::format("machineType: {}", shape.machine_type);
  } else {
    int cores = 0, memory_gb = 0;
    smallest_n1_host(in, shape, cores, memory_gb);
    machine = fmt::format("machineFamily: {}, minCores: {}, minMemoryGb: {}", shape.machine_family, cores, memory_gb);
  }
  const std::string device = shape.tpu ? fmt::format("tpu: {{type: {}, count: {}, topology: {}}}", shape.accelerator_label,
                                                     shape.accelerators_per_node, yaml_quoted(shape.tpu_topology))
                                       : fmt::format("gpu: {{type: {}, count: {}}}", shape.accelerator_label, shape.accelerators_per_node);
  return fmt::format("    - {{{}, spot: {}, {}}}\n", machine, spot ? "true" : "false", device);
}

}  // namespace

std::string compute_class_name(const ManifestInput& in) { return workload_name(in) + (on_tpu(in) ? "-tpu" : "-gpu"); }

std::string gke_compute_class_manifest(const ManifestInput& in, int accelerator_limit, const std::string& limit_note) {
  const bool spot = std::find(in.capacity_types.begin(), in.capacity_types.end(), "spot") != in.capacity_types.end();
  const bool on_demand = std::find(in.capacity_types.begin(), in.capacity_types.end(), "on-demand") != in.capacity_types.end();
  std::string priorities;
  // Spot first where the plan allows it: GKE falls back to the next rule when a shape is not
  // to be had (the plan's on-demand floor keeps on-demand nodes in any case).
  if (spot)
    for (const GkeNodeShape& shape : in.gke_nodes) priorities += priority(in, shape, true);
  if (on_demand || !spot)
    for (const GkeNodeShape& shape : in.gke_nodes) priorities += priority(in, shape, false);
  const long long delay_min = std::clamp(static_cast<long long>(std::ceil(in.cooldown_s / 60)), 1LL, 1440LL);
  std::string out = manifest_header(in, "GKE ComputeClass (cloud.google.com/v1)");
  out += fmt::format(
      "# Karpenter does not run on GKE: this class is how the pods get their nodes. They select it\n"
      "# (cloud.google.com/compute-class: {0}); node auto-provisioning creates node pools of the shapes\n"
      "# below, in order, and DoNotScaleUp keeps the pods off any other hardware. Needs GKE 1.30.3-gke.1451000\n"
      "# or later with node auto-provisioning on (Autopilot has it).\n"
      "# {1} {2} at most ({3}): GKE bounds accelerators cluster-wide, so the cluster's autoprovisioning\n"
      "# limits (gcloud container clusters update --autoprovisioning-config-file) must allow them, and the\n"
      "# project's quota in the region.{4}\n"
      "# Source: {5}.\n"
      "# Node labels and taints: {6}.\n",
      compute_class_name(in), accelerator_limit, accelerator_words(in), limit_note,
      on_tpu(in) ? fmt::format(" Each node is one {}-chip single-host slice ({}).", in.gke_nodes.front().accelerators_per_node,
                               in.gke_nodes.front().tpu_topology)
                 : "",
      kComputeClassSource, kGkeNodeLabelsSource);
  out += fmt::format(
      "apiVersion: cloud.google.com/v1\n"
      "kind: ComputeClass\n"
      "metadata:\n"
      "  name: {0}\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {1}}}\n"
      "spec:\n"
      "  priorities:\n"
      "{2}"
      "  nodePoolAutoCreation:\n"
      "    enabled: true\n"
      "  autoscalingPolicy:\n"
      "    consolidationDelayMinutes: {3}\n"
      "  whenUnsatisfiable: DoNotScaleUp\n",
      compute_class_name(in), pod_labels(dns_label(in.service), in.role), priorities, delay_min);
  return out;
}

}  // namespace gw
