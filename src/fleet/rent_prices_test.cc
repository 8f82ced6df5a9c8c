#include "fleet/rent_prices.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

BuyVsRentSpec h100_cluster(int gpus) {
  BuyVsRentSpec terms;
  terms.gpus = gpus;
  terms.purchase_usd = 500000;
  terms.accelerator = "H100";
  terms.utilization = 0.7;
  return terms;
}

// The test's own reading of the catalog: the cheapest on-demand price per GPU of a node with at
// least `node_gpus` H100s on the given cloud (any where empty), host VM included.
double cheapest_per_gpu(const Catalog& catalog, int node_gpus, const std::string& cloud) {
  double best = 0;
  for (const auto& o : catalog.offerings()) {
    if (o.accelerator != "H100" || o.gpu_only_price || !o.on_demand_usd_per_hour || o.accelerator_count < node_gpus) continue;
    if (!cloud.empty() && o.cloud != cloud) continue;
    const double per_gpu = *o.on_demand_usd_per_hour / o.accelerator_count;
    if (best == 0 || per_gpu < best) best = per_gpu;
  }
  return best;
}

TEST(RentPrices, TheCatalogsCheapestWholeNodesOfTheGpu) {
  const Catalog catalog = Catalog::embedded().value();
  auto priced = with_catalog_rent_prices(catalog, Constraints{}, h100_cluster(16), "spec.yaml");
  ASSERT_TRUE(priced.ok()) << priced.error().to_string();
  const double expected = cheapest_per_gpu(catalog, 8, "");
  ASSERT_GT(expected, 0);
  EXPECT_DOUBLE_EQ(priced.value().on_demand_usd_per_gpu_hour, expected);
  EXPECT_NE(priced.value().rent_source.find("the catalog's cheapest H100 in nodes of 8 GPUs or more"), std::string::npos)
      << priced.value().rent_source;
  // A single GPU rents alone: any node size, so no dearer than the cluster's price.
  auto one = with_catalog_rent_prices(catalog, Constraints{}, h100_cluster(1), "spec.yaml");
  ASSERT_TRUE(one.ok());
  EXPECT_DOUBLE_EQ(one.value().on_demand_usd_per_gpu_hour, cheapest_per_gpu(catalog, 1, ""));
  EXPECT_LE(one.value().on_demand_usd_per_gpu_hour, expected);
  // The spec's clouds bound it, and AWS's p5 brings its spot price along.
  Constraints aws;
  aws.clouds = {"aws"};
  auto on_aws = with_catalog_rent_prices(catalog, aws, h100_cluster(16), "spec.yaml");
  ASSERT_TRUE(on_aws.ok());
  EXPECT_DOUBLE_EQ(on_aws.value().on_demand_usd_per_gpu_hour, cheapest_per_gpu(catalog, 8, "aws"));
  EXPECT_NE(on_aws.value().rent_source.find("from aws "), std::string::npos) << on_aws.value().rent_source;
}

TEST(RentPrices, GivenPricesStandAndAMissingGpuIsAClearError) {
  const Catalog catalog = Catalog::embedded().value();
  BuyVsRentSpec given = h100_cluster(16);
  given.on_demand_usd_per_gpu_hour = 2.5;
  auto kept = with_catalog_rent_prices(catalog, Constraints{}, given, "spec.yaml");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept.value().on_demand_usd_per_gpu_hour, 2.5);
  EXPECT_FALSE(kept.value().spot_usd_per_gpu_hour.has_value());
  BuyVsRentSpec tpu = h100_cluster(8);
  tpu.accelerator = "TPU-v5e";
  Constraints aws;
  aws.clouds = {"aws"};
  auto none = with_catalog_rent_prices(catalog, aws, tpu, "spec.yaml");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().field, "fleet.buy_vs_rent.on_demand_usd_per_gpu_hour");
  EXPECT_NE(none.error().message.find("give the rent price per GPU-hour"), std::string::npos);
}

}  // namespace
}  // namespace gw
