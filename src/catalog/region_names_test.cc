#include "catalog/region_names.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

bool says(const std::optional<std::string>& why, const std::string& words) {
  return why && why->find(words) != std::string::npos;
}

TEST(RegionNames, PrefixesThatSelectOfferingsPass) {
  const Catalog catalog = Catalog::embedded().value();
  EXPECT_EQ(region_prefix_problem(catalog, "us-east", {}), std::nullopt);
  EXPECT_EQ(region_prefix_problem(catalog, "US-EAST-1", {"aws"}), std::nullopt);
  EXPECT_EQ(region_prefix_problem(catalog, "europe-", {"gcp"}), std::nullopt);
  EXPECT_EQ(cloud_name_problem(catalog, "azure"), std::nullopt);
}

// Each way a place selects nothing says which it is: another cloud's region, a real region by
// its provider's spelling that the snapshot lacks (with the regions it has), a misspelling.
TEST(RegionNames, EachMissSaysWhy) {
  const Catalog catalog = Catalog::embedded().value();
  const auto other_cloud = region_prefix_problem(catalog, "us-central1", {"aws", "azure"});
  EXPECT_TRUE(says(other_cloud, "'us-central1' begins regions of gcp only in the catalog, and the clouds allowed are aws, azure"))
      << other_cloud.value_or("");
  const auto gcp = region_prefix_problem(catalog, "us-east1", {});
  EXPECT_TRUE(says(gcp, "'us-east1' is spelled as a GCP region, and the catalog holds gcp's ")) << gcp.value_or("");
  EXPECT_TRUE(says(gcp, "us-central1")) << gcp.value_or("");
  EXPECT_TRUE(says(gcp, "--catalog DIR")) << gcp.value_or("");
  EXPECT_TRUE(says(region_prefix_problem(catalog, "eu-central-1", {"aws"}), "spelled as an AWS region"));
  EXPECT_TRUE(says(region_prefix_problem(catalog, "us-east-2", {"aws"}), "spelled as an AWS region"));  // Ohio, not a typo
  EXPECT_TRUE(says(region_prefix_problem(catalog, "us-gov-west-1", {}), "spelled as an AWS region"));
  EXPECT_TRUE(says(region_prefix_problem(catalog, "westeurope", {}), "spelled as an Azure region"));
  EXPECT_TRUE(says(region_prefix_problem(catalog, "eastus2", {"azure"}), "spelled as an Azure region"));
  // A GCP spelling with only AWS allowed is no GCP advice: the misspelling hint instead.
  const auto typo = region_prefix_problem(catalog, "us-eest-1", {"aws"});
  EXPECT_TRUE(says(typo, "'us-eest-1' begins no region in the catalog (did you mean 'us-east-1'?)")) << typo.value_or("");
  EXPECT_TRUE(says(region_prefix_problem(catalog, "us-west2", {"aws"}), "begins no region in the catalog"));
  EXPECT_TRUE(says(cloud_name_problem(catalog, "gcpp"), "'gcpp' is not a cloud in the catalog (did you mean 'gcp'?); one of aws"));
}

}  // namespace
}  // namespace gw
