// The clouds' own worked examples of allocatable memory and CPU.
#include "k8s/node_allocatable.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

constexpr double kMib = 1.0 / 1024;

// EKS: an m5.large (2 vCPU, 8 GiB, 29 pods by its ENIs) reserves 574 MiB and 70m of CPU.
TEST(NodeAllocatable, EksM5LargeReserves574MiBAnd70Millicores) {
  NodeAllocatable n = node_allocatable("aws", 2, 8, 29);
  EXPECT_NEAR(8 - n.memory_gib, (574 + 100) * kMib, 1e-9);
  EXPECT_NEAR(2 - n.cpu, 0.070, 1e-9);
}

// GKE: a 150 GiB node reserves 9.8577 GiB with the eviction threshold (140.1423 allocatable),
// and a g2-standard-4 (16 GiB) keeps ~13.3 GiB, so a 14Gi request stays Pending.
TEST(NodeAllocatable, GkeBands) {
  EXPECT_NEAR(node_allocatable("gcp", 32, 150).memory_gib, 140.1423, 1e-4);
  NodeAllocatable g2 = node_allocatable("gcp", 4, 16);
  EXPECT_NEAR(g2.memory_gib, 16 - 2.6 - 100 * kMib, 1e-9);
  EXPECT_LT(g2.memory_gib, 14);
  EXPECT_NEAR(g2.cpu, 4 - 0.08, 1e-9);
  EXPECT_LT(g2.memory_gib_for_pods, g2.memory_gib);
}

// AKS: 8 GB and 30 pods reserve 20 MB x 30 + 50 MB = 650 MB; 4 GB and 70 pods hit the 25% cap.
TEST(NodeAllocatable, AksExamples) {
  const double gb = 1e9 / (1024.0 * 1024 * 1024);
  NodeAllocatable eight = node_allocatable("azure", 2, 8 * gb, 30);
  EXPECT_NEAR(eight.memory_gib, 8 * gb - 0.65 * gb - 100 * kMib, 1e-9);
  NodeAllocatable four = node_allocatable("azure", 2, 4 * gb, 70);
  EXPECT_NEAR(four.memory_gib, 4 * gb * 0.75 - 100 * kMib, 1e-9);
  EXPECT_NEAR(node_allocatable("azure", 8, 32).cpu, 8 - 0.180, 1e-9);
  EXPECT_NEAR(node_allocatable("azure", 12, 32).cpu, 12 - 0.180, 1e-9);
}

}  // namespace
}  // namespace gw
