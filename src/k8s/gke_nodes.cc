#include "k8s/gke_nodes.h"

#include <fmt/format.h>

#include <array>

namespace gw {
namespace {

struct GpuLabel {
  const char* accelerator;
  const char* label;
};

// The catalog's NVIDIA names and GKE's accelerator label for each (kGkeNodeLabelsSource).
constexpr std::array<GpuLabel, 11> kGpuLabels{{
    {"T4", "nvidia-tesla-t4"},
    {"P4", "nvidia-tesla-p4"},
    {"P100", "nvidia-tesla-p100"},
    {"V100-16GB", "nvidia-tesla-v100"},
    {"A100-40GB", "nvidia-tesla-a100"},
    {"A100-80GB", "nvidia-a100-80gb"},
    {"L4", "nvidia-l4"},
    {"H100", "nvidia-h100-80gb"},
    {"H200", "nvidia-h200-141gb"},
    {"B200", "nvidia-b200"},
    {"GB200", "nvidia-gb200"},
}};

struct TpuHost {
  const char* accelerator;  // the catalog's name
  const char* label;        // gke-tpu-accelerator
  int chips;
  const char* topology;
  const char* machine_type;
};

// Single-host slices only: one node, one pod's chips (kGkeNodeLabelsSource).
constexpr std::array<TpuHost, 8> kTpuHosts{{
    {"TPU-v6e", "tpu-v6e-slice", 1, "1x1", "ct6e-standard-1t"},
    {"TPU-v6e", "tpu-v6e-slice", 4, "2x2", "ct6e-standard-4t"},
    {"TPU-v6e", "tpu-v6e-slice", 8, "2x4", "ct6e-standard-8t"},
    {"TPU-v5e", "tpu-v5-lite-podslice", 1, "1x1", "ct5lp-hightpu-1t"},
    {"TPU-v5e", "tpu-v5-lite-podslice", 4, "2x2", "ct5lp-hightpu-4t"},
    {"TPU-v5e", "tpu-v5-lite-podslice", 8, "2x4", "ct5lp-hightpu-8t"},
    {"TPU-v5p", "tpu-v5p-slice", 4, "2x2x1", "ct5p-hightpu-4t"},
    {"TPU-v4", "tpu-v4-podslice", 4, "2x2x1", "ct4p-hightpu-4t"},
}};

}  // namespace

std::optional<GkeNodeShape> gke_node_shape(const std::string& accelerator, const std::string& instance_type, int accelerators_per_node,
                                           std::string* why) {
  auto refuse = [&](std::string reason) -> std::optional<GkeNodeShape> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  GkeNodeShape shape;
  shape.accelerators_per_node = accelerators_per_node;
  if (accelerator.rfind("TPU-", 0) == 0) {
    shape.tpu = true;
    if (accelerator == "TPU-v2" || accelerator == "TPU-v3")
      return refuse(fmt::format("{} ({}) runs as a Cloud TPU VM, not as a GKE node: GKE node pools offer TPU v4 and later", accelerator,
                                instance_type));
    bool known = false;
    for (const TpuHost& host : kTpuHosts) {
      if (accelerator != host.accelerator) continue;
      known = true;
      if (host.chips != accelerators_per_node) continue;
      shape.accelerator_label = host.label;
      shape.tpu_topology = host.topology;
      shape.machine_type = host.machine_type;
      return shape;
    }
    if (!known) return refuse(fmt::format("{} has no GKE node shape this version knows", accelerator));
    return refuse(fmt::format("{} is a multi-host slice of {} chips: GKE runs it as several nodes, and vLLM serves TPUs on one "
                              "host there; plan with a single-host shape (1, 4 or 8 chips)",
                              instance_type, accelerators_per_node));
  }
  for (const GpuLabel& g : kGpuLabels)
    if (accelerator == g.accelerator) shape.accelerator_label = g.label;
  if (shape.accelerator_label.empty()) return refuse(fmt::format("{} has no GKE accelerator label this version knows", accelerator));
  // A3 Mega carries H100s with more network; GKE labels them apart.
  if (instance_type.rfind("a3-megagpu", 0) == 0) shape.accelerator_label = "nvidia-h100-mega-80gb";
  // The catalog names GPUs attached to an n1 VM as n1+<count>x<GPU>: the VM's size is yours.
  if (instance_type.rfind("n1+", 0) == 0) shape.machine_family = "n1";
  else shape.machine_type = instance_type;
  return shape;
}

}  // namespace gw
