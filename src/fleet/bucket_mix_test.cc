// The accelerator mix by request size: the MILP equals brute force over every bucket-to-type
// choice on random cases and never costs more than the best single type; the conversation
// trace's buckets plan on real accelerators.
#include "fleet/bucket_mix.h"

#include <gtest/gtest.h>
#include <random>

namespace gw {
namespace {

TEST(BucketMix, MilpEqualsBruteForceOnRandomCases) {
  std::mt19937_64 random(11);
  const char* types[] = {"L4", "A10G", "L40S", "H100"};
  const double prices[] = {0.80, 1.01, 1.86, 3.29};
  for (int trial = 0; trial < 80; ++trial) {
    int n = 1 + static_cast<int>(random() % 5);
    std::vector<RequestBucket> buckets(static_cast<size_t>(n));
    for (auto& b : buckets) {
      b.peak_rps = 0.5 + static_cast<double>(random() % 400) / 40;
      for (int t = 0; t < 4; ++t) {
        if (random() % 3 == 0) continue;
        b.options.push_back({types[t], 1, prices[t], 0.5 + static_cast<double>(random() % 300) / 20 * (1 + t)});
      }
      if (b.options.empty()) b.options.push_back({"H100", 1, 3.29, 20});
    }
    auto exact = assign_buckets_exact(buckets, 0.8);
    ASSERT_TRUE(exact.ok()) << exact.error().message;
    BucketAssignment brute = assign_buckets_brute_force(buckets, 0.8);
    EXPECT_NEAR(exact.value().usd_per_month, brute.usd_per_month, 1e-6) << "trial " << trial;
    BucketAssignment single = best_single_type(buckets, 0.8);
    if (single.usd_per_month < 1e299) {
      EXPECT_LE(exact.value().usd_per_month, single.usd_per_month + 1e-6);
    }
  }
}

TEST(BucketMix, MixingBeatsOneTypeWhenBucketsDisagree) {
  // Short prompts are cheap on L4, long ones on H100: each type loses badly on the other's bucket.
  std::vector<RequestBucket> buckets(2);
  buckets[0].peak_rps = 8;
  buckets[0].options = {{"L4", 1, 0.8, 10}, {"H100", 1, 3.29, 12}};
  buckets[1].peak_rps = 8;
  buckets[1].options = {{"L4", 1, 0.8, 0.5}, {"H100", 1, 3.29, 8}};
  auto mix = assign_buckets_exact(buckets, 0.8);
  ASSERT_TRUE(mix.ok());
  // L4: ceil(8/10/0.8) = 1 replica; H100: ceil(8/8/0.8) = 2. Single H100: ceil((8/12+1)/0.8) = 3.
  EXPECT_NEAR(mix.value().usd_per_month, (1 * 0.8 + 2 * 3.29) * 730, 1e-6);
  EXPECT_NEAR(best_single_type(buckets, 0.8).usd_per_month, 3 * 3.29 * 730, 1e-6);
}

TEST(BucketMix, ConversationTraceBucketsPlan) {
  auto spec = load_spec(std::string(GPUWISE_SOURCE_DIR) + "/examples/fleet-bucket-mix.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  auto buckets = request_buckets(catalog, spec.value(), spec.value().services.front(), 4, nullptr);
  ASSERT_TRUE(buckets.ok()) << buckets.error().message;
  ASSERT_EQ(buckets.value().size(), 4u);
  double share = 0;
  for (size_t i = 0; i < 4; ++i) {
    const auto& b = buckets.value()[i];
    share += b.share;
    EXPECT_FALSE(b.options.empty());
    if (i > 0) {
      EXPECT_GE(b.input_from, buckets.value()[i - 1].input_from);
    }
  }
  EXPECT_NEAR(share, 1, 1e-9);
  // Longer prompts take more of a replica: capacity falls from the first bucket to the last.
  auto capacity_on = [&](const RequestBucket& b) {
    for (const auto& o : b.options)
      if (o.accelerator == "H100") return o.capacity_rps;
    return 0.0;
  };
  EXPECT_GT(capacity_on(buckets.value().front()), capacity_on(buckets.value().back()));
}

}  // namespace
}  // namespace gw
