#include "catalog/skypilot_import.h"

#include <fstream>
#include <gtest/gtest.h>

namespace gw {
namespace {

Catalog embedded_catalog() { return Catalog::embedded().value(); }

const Offering* find(const SkypilotImport& result, const std::string& instance_type, const std::string& region) {
  for (const auto& o : result.offerings)
    if (o.instance_type == instance_type && o.region == region) return &o;
  return nullptr;
}

const char* kGcp =
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuMemoryMiB,Region,AvailabilityZone,Price,SpotPrice\n"
    "g2-standard-4,4.0,16.0,,,,us-central1,us-central1-a,0.14679,0.0572\n"
    ",,,L4,1,24576,us-central1,us-central1-a,0.56004,0.2231\n"
    "a2-highgpu-8g,96.0,680.0,,,,us-central1,us-central1-a,5.9,2.9\n"
    ",,,A100,8,40960,us-central1,us-central1-a,23.47126,11.4728\n"
    ",,,T4,1,16384,us-central1,us-central1-a,0.35,0.175\n"
    ",,,tpu-v5p-8,1,,us-central1,us-central1-a,16.8,5.4\n"
    ",,,tpu-v6e-1,1,,asia-east1,asia-east1-a,700.0,700.0\n"
    ",,,tpu-v6e-4,1,,asia-east1,asia-east1-a,700.0,700.0\n"
    ",,,tpu-v6e-8,1,,asia-east1,asia-east1-a,700.0,700.0\n"
    "a4-highgpu-8g,224.0,3968.0,,,,us-central1,us-central1-b,0.0,0.0\n"
    ",,,B200,8,184320,us-central1,us-central1-b,0.0,0.0\n";

TEST(SkypilotImport, GcpMachineTypesAddTheirAttachedGpuPrice) {
  SkypilotImportOptions options{"2026-11-30", "test"};
  auto result = import_skypilot_csv(kGcp, "gcp.csv", "gcp", embedded_catalog(), options);
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  const Offering* g2 = find(result.value(), "g2-standard-4", "us-central1");
  ASSERT_NE(g2, nullptr);
  EXPECT_EQ(g2->accelerator, "L4");
  EXPECT_EQ(g2->accelerator_count, 1);
  EXPECT_NEAR(*g2->on_demand_usd_per_hour, 0.14679 + 0.56004, 1e-9);  // the README's worked example
  EXPECT_NEAR(*g2->spot_usd_per_hour, 0.0572 + 0.2231, 1e-9);
  const Offering* a2 = find(result.value(), "a2-highgpu-8g", "us-central1");
  ASSERT_NE(a2, nullptr);
  EXPECT_EQ(a2->accelerator, "A100-40GB");
  EXPECT_EQ(a2->accelerator_count, 8);
}

TEST(SkypilotImport, TpuSlicesCountChipsAndN1GpusAreMarked) {
  SkypilotImportOptions options{"2026-11-30", ""};
  auto result = import_skypilot_csv(kGcp, "gcp.csv", "gcp", embedded_catalog(), options);
  ASSERT_TRUE(result.ok());
  const Offering* v5p = find(result.value(), "tpu-v5p-8", "us-central1");
  ASSERT_NE(v5p, nullptr);
  EXPECT_EQ(v5p->accelerator, "TPU-v5p");
  EXPECT_EQ(v5p->accelerator_count, 4);  // v5p-8 counts TensorCores: 4 chips
  const Offering* t4 = find(result.value(), "n1+1xT4", "us-central1");
  ASSERT_NE(t4, nullptr);
  EXPECT_NE(t4->notes.find("host VM"), std::string::npos);
}

TEST(SkypilotImport, PlaceholderAndZeroPricesAreSkippedAndCounted) {
  SkypilotImportOptions options{"2026-11-30", ""};
  auto result = import_skypilot_csv(kGcp, "gcp.csv", "gcp", embedded_catalog(), options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(find(result.value(), "tpu-v6e-8", "asia-east1"), nullptr);
  EXPECT_EQ(find(result.value(), "a4-highgpu-8g", "us-central1"), nullptr);
  int skipped = 0;
  for (const auto& [reason, count] : result.value().skipped) skipped += count;
  // 3 placeholder v6e rows and the unpriced B200 machine; every row is accounted for.
  EXPECT_EQ(skipped, 4);
  EXPECT_EQ(result.value().rows_read, 11);
}

TEST(SkypilotImport, SpotEqualToOnDemandIsNotASpotMarket) {
  const char* runpod =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Price,SpotPrice,Region,AvailabilityZone\n"
      "1x_H100_SECURE,H100,1.0,16.0,188.0,80,2.39,2.39,US,US-CA-2\n"
      "2x_H100-SXM_SECURE,H100-SXM,2.0,32.0,500.0,80,5.38,5.38,US,US-CA-2\n"
      "1x_RTX5090_SECURE,RTX5090,1.0,8.0,60.0,32,0.9,0.9,US,US-CA-2\n";
  auto result = import_skypilot_csv(runpod, "runpod.csv", "runpod", embedded_catalog(), {"2026-11-30", ""});
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result.value().offerings.size(), 2u);
  EXPECT_EQ(result.value().offerings[0].accelerator, "H100-PCIE");  // RunPod's bare H100 is PCIe
  EXPECT_EQ(result.value().offerings[1].accelerator, "H100");
  EXPECT_FALSE(result.value().offerings[0].spot_usd_per_hour.has_value());
  EXPECT_EQ(result.value().skipped.at("accelerator not in the catalog: RTX5090"), 1);
}

TEST(SkypilotImport, FractionalGpusAndAzureCountFix) {
  const char* aws =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Price,SpotPrice,Region,AvailabilityZone,Arch\n"
      "g6f.2xlarge,L4,0.25,8.0,32.0,5722,0.475,0.1561,us-east-1,use1-az6,x86_64\n";
  auto result = import_skypilot_csv(aws, "aws.csv", "aws", embedded_catalog(), {"2026-11-30", ""});
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result.value().offerings.empty());
  EXPECT_EQ(result.value().skipped.at("fractional GPU share (not modelled)"), 1);
  const char* azure =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Price,SpotPrice,Region,Generation\n"
      "Standard_ND96isr_H100_v5,H100,12,96.0,1900,,98.32,98.32,eastus,V2\n"
      "Standard_NC24ads_A100_v4,A100-80GB,1,24.0,220,,3.673,0.444433,eastus,V2\n";
  result = import_skypilot_csv(azure, "azure.csv", "azure", embedded_catalog(), {"2026-11-30", ""});
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result.value().offerings.size(), 2u);
  EXPECT_EQ(result.value().offerings[0].accelerator_count, 8);
  EXPECT_EQ(result.value().offerings[1].accelerator, "A100-80GB-PCIE");
}

TEST(SkypilotImport, NotASkypilotFile) {
  auto result = import_skypilot_csv("a,b\n1,2\n", "x.csv", "aws", embedded_catalog(), {"2026-11-30", ""});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().line, 1);
  EXPECT_EQ(result.error().field, "InstanceType");
}

TEST(SkypilotImport, TheCommittedOfferingsMatchTheSnapshot) {
  // catalog/offerings.csv is generated from catalog/skypilot-snapshot by this importer; a
  // changed importer or snapshot must regenerate it (see catalog/SOURCES.md).
  auto result = import_skypilot(std::string(GPUWISE_SOURCE_DIR) + "/catalog/skypilot-snapshot", embedded_catalog(),
                                {"2026-11-30", "snapshot of skypilot-org/skypilot-catalog; commits in "
                                               "catalog/skypilot-snapshot/README.md"});
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  std::string committed;
  std::string message;
  std::ifstream in(std::string(GPUWISE_SOURCE_DIR) + "/catalog/offerings.csv");
  committed.assign(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(offerings_to_csv(result.value().offerings), committed);
}

}  // namespace
}  // namespace gw
