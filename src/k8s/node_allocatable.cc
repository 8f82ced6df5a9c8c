#include "k8s/node_allocatable.h"

#include <fmt/format.h>

#include <algorithm>

namespace gw {

namespace {

// Applies marginal rates to consecutive bands: {width, rate} pairs, the last band unbounded.
double banded(double amount, std::initializer_list<std::pair<double, double>> bands) {
  double reserved = 0, start = 0;
  for (auto [width, rate] : bands) {
    double in_band = std::clamp(amount - start, 0.0, width);
    reserved += in_band * rate;
    start += width;
  }
  return reserved;
}

constexpr double kMib = 1.0 / 1024;  // GiB per MiB
constexpr double kEvictionGib = 100 * kMib;  // memory.available<100Mi on all three

// 6% of the first core, 1% of the second, 0.5% of the third and fourth, 0.25% above: EKS and GKE.
double cpu_reserved(double vcpus) { return banded(vcpus, {{1, 0.06}, {1, 0.01}, {2, 0.005}, {1e9, 0.0025}}); }

// GKE: 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2% above
// 128 GiB (255 MiB under 1 GiB).
double gke_memory_reserved(double memory_gib) {
  if (memory_gib < 1) return 255 * kMib;
  return banded(memory_gib, {{4, 0.25}, {4, 0.20}, {8, 0.10}, {112, 0.06}, {1e9, 0.02}});
}

// AKS publishes kube-reserved CPU as a table by core count; between its points the smaller one.
double aks_cpu_reserved(double vcpus) {
  const std::pair<double, double> table[] = {{1, 0.060}, {2, 0.100}, {4, 0.140}, {8, 0.180}, {16, 0.260}, {32, 0.420}, {64, 0.740}};
  double reserved = table[0].second;
  for (auto [cores, millicores] : table)
    if (vcpus >= cores) reserved = millicores;
  return reserved;
}

}  // namespace

NodeAllocatable node_allocatable(const std::string& cloud, double vcpus, double memory_gib, int max_pods) {
  NodeAllocatable n;
  double cpu = 0, memory = 0;
  if (cloud == "aws") {
    cpu = cpu_reserved(vcpus);
    memory = (255 + 11.0 * max_pods) * kMib;
    n.formula = fmt::format("EKS: kube-reserved memory 255 MiB + 11 MiB x {} max pods, CPU 6%/1%/0.5%/0.25% by core, eviction at "
                            "100 MiB (Amazon EKS AMI bootstrap; awslabs/amazon-eks-ami)", max_pods);
  } else if (cloud == "azure") {
    cpu = aks_cpu_reserved(vcpus);
    // 1 GB = 1000 MB as AKS writes it; MB here is the decimal megabyte.
    memory = std::min((20.0 * max_pods + 50) * 1e6 / (1024.0 * 1024 * 1024), 0.25 * memory_gib);
    n.formula = fmt::format("AKS 1.29+: kube-reserved memory min(20 MB x {} max pods + 50 MB, 25% of memory), CPU by AKS's table, "
                            "eviction at 100 MiB (learn.microsoft.com/azure/aks/node-resource-reservations)", max_pods);
  } else {
    cpu = cpu_reserved(vcpus);
    memory = gke_memory_reserved(memory_gib);
    n.formula = std::string(cloud == "gcp" ? "GKE" : "GKE's formula (the cloud publishes none gpuwise knows)") +
                ": memory 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2% above, CPU "
                "6%/1%/0.5%/0.25% by core, eviction at 100 MiB (cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes)";
  }
  n.cpu = std::max(0.0, vcpus - cpu);
  n.memory_gib = std::max(0.0, memory_gib - memory - kEvictionGib);
  n.cpu_for_pods = std::max(0.0, n.cpu - kDaemonSetCpu);
  n.memory_gib_for_pods = std::max(0.0, n.memory_gib - kDaemonSetMemoryGib);
  n.formula += fmt::format("; less {:.1f} CPU and {:.0f} GiB for the GPU node's DaemonSets (assumed)", kDaemonSetCpu, kDaemonSetMemoryGib);
  return n;
}

}  // namespace gw
