// Quota families and units per cloud, needs summed per family and region, and the spec's limits
// matched (a region's limit over its cloud's).
#include "plan/quotas.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

Offering offering(std::string cloud, std::string region, std::string type, std::string accelerator, int count, double vcpus) {
  Offering o;
  o.cloud = cloud;
  o.region = region;
  o.instance_type = type;
  o.accelerator = accelerator;
  o.accelerator_count = count;
  o.vcpus = vcpus;
  return o;
}

TEST(Quotas, FamiliesAndUnitsPerCloud) {
  auto p5 = offering("aws", "us-east-1", "p5.48xlarge", "H100", 8, 192);
  EXPECT_EQ(quota_family(p5, Pricing::on_demand).family, "running-on-demand-p-instances-vcpu");
  EXPECT_EQ(quota_family(p5, Pricing::spot).family, "all-p-spot-instance-requests-vcpu");
  EXPECT_EQ(quota_family(p5, Pricing::on_demand).units_per_instance, 192);
  auto g6 = offering("aws", "us-east-1", "g6.xlarge", "L4", 1, 4);
  EXPECT_EQ(quota_family(g6, Pricing::on_demand).family, "running-on-demand-g-and-vt-instances-vcpu");
  auto a3 = offering("gcp", "us-central1", "a3-highgpu-8g", "H100", 8, 208);
  QuotaFamily f = quota_family(a3, Pricing::spot);
  EXPECT_EQ(f.family, "PREEMPTIBLE_NVIDIA_H100_GPUS");
  EXPECT_EQ(f.unit, "GPUs");
  EXPECT_EQ(f.units_per_instance, 8);
  // GCP names the 40 GB A100 NVIDIA_A100_GPUS; A3 Mega's H100s have their own metric; TPUs are
  // counted in chips under the TPU API, not as GPUs.
  EXPECT_EQ(quota_family(offering("gcp", "us-central1", "a2-highgpu-1g", "A100-40GB", 1, 12), Pricing::on_demand).family,
            "NVIDIA_A100_GPUS");
  EXPECT_EQ(quota_family(offering("gcp", "us-central1", "a2-ultragpu-1g", "A100-80GB", 1, 12), Pricing::on_demand).family,
            "NVIDIA_A100_80GB_GPUS");
  EXPECT_EQ(quota_family(offering("gcp", "us-central1", "a3-megagpu-8g", "H100", 8, 208), Pricing::on_demand).family,
            "NVIDIA_H100_MEGA_GPUS");
  QuotaFamily tpu = quota_family(offering("gcp", "europe-west4", "tpu-v6e-8", "TPU-v6e", 8, 180), Pricing::spot);
  EXPECT_EQ(tpu.family, "tpu.googleapis.com TPU-v6e preemptible");
  EXPECT_EQ(tpu.unit, "chips");
  EXPECT_EQ(tpu.family.find("GPUS"), std::string::npos);
  auto nc = offering("azure", "eastus", "Standard_NC24ads_A100_v4", "A100-80GB", 1, 24);
  EXPECT_EQ(quota_family(nc, Pricing::on_demand).family, "standardNCADSA100v4Family");
  EXPECT_EQ(quota_family(nc, Pricing::spot).family, "lowPriorityCores");
  EXPECT_TRUE(quota_family(offering("lambda", "us-east-1", "gpu_1x_h100", "H100", 1, 26), Pricing::on_demand).family.empty());
}

TEST(Quotas, NeedsSumPerFamilyAndCompareWithTheSpec) {
  auto g6 = offering("aws", "us-east-1", "g6.xlarge", "L4", 1, 4);
  auto g5 = offering("aws", "us-east-1", "g5.12xlarge", "A10G", 4, 48);
  auto p4 = offering("aws", "us-west-2", "p4d.24xlarge", "A100", 8, 96);
  QuotaLimits limits = {{"aws", {{"running-on-demand-g-and-vt-instances-vcpu", 64}, {"running-on-demand-p-instances-vcpu", 0}}},
                        {"aws/us-west-2", {{"Running-On-Demand-P-Instances-vCPU", 96}}}};
  auto needs = quota_needs({{&g6, Pricing::on_demand, 3, "chat"}, {&g5, Pricing::on_demand, 2, "embed"}, {&p4, Pricing::on_demand, 1, "train"}},
                           limits);
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(needs[0].needed, 3 * 4 + 2 * 48);  // one family in one region
  EXPECT_EQ(*needs[0].have, 64);
  EXPECT_TRUE(needs[0].short_of_quota());
  EXPECT_EQ(needs[0].by, (std::vector<std::string>{"chat", "embed"}));
  EXPECT_EQ(needs[1].region, "us-west-2");
  EXPECT_EQ(*needs[1].have, 96);  // the region's limit over the cloud's, names compared without case
  EXPECT_FALSE(needs[1].short_of_quota());
  EXPECT_FALSE(needs[1].lead_time.empty());
}

}  // namespace
}  // namespace gw
