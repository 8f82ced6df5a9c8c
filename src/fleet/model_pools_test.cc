// The pool assignment: the MILP equals brute force over set partitions on random small cases;
// the five-model example beats one pool per model; memory keeps big models apart; a model that
// fits nowhere is a clear error.
#include "fleet/model_pools.h"

#include <gtest/gtest.h>
#include <random>

namespace gw {
namespace {

TEST(ModelPools, MilpEqualsBruteForceOnRandomCases) {
  std::mt19937_64 random(7);
  const char* types[] = {"T4", "L4", "A10G", "A100"};
  const double prices[] = {0.53, 0.80, 1.01, 3.67};
  const double memory[] = {14.4, 21.6, 21.6, 72.0};
  const int node_gpus[] = {1, 1, 4, 2};  // pools are billed in whole nodes of these
  for (int trial = 0; trial < 60; ++trial) {
    int n = 2 + static_cast<int>(random() % 4);  // 2-5 models
    std::vector<ModelDemand> models(static_cast<size_t>(n));
    for (int m = 0; m < n; ++m) {
      models[static_cast<size_t>(m)].service = "m" + std::to_string(m);
      models[static_cast<size_t>(m)].min_replicas = 1 + static_cast<int>(random() % 3);
      for (int t = 0; t < 4; ++t) {
        if (random() % 4 == 0) continue;  // not every model runs on every type
        PoolCandidate c;
        c.accelerator_name = types[t];
        c.usd_per_gpu_hour = prices[t];
        c.usable_vram_gib = memory[t];
        c.gpus_per_node = node_gpus[t];
        c.peak_gpus = static_cast<double>(random() % 250) / 100 / (1 + t);  // faster types need less
        c.vram_gib = 1 + static_cast<double>(random() % 1200) / 100;
        if (random() % 2)
          for (int h = 0; h < 24; ++h) c.hourly_gpus.push_back(c.peak_gpus * static_cast<double>(1 + random() % 10) / 10);
        if (c.vram_gib > c.usable_vram_gib) continue;
        models[static_cast<size_t>(m)].candidates.push_back(c);
        if (random() % 3 == 0) {
          // The same type on spot too (an interruptible service): another offer, shared only with its like.
          c.pricing = Pricing::spot;
          c.usd_per_gpu_hour = prices[t] * 0.4;
          models[static_cast<size_t>(m)].candidates.push_back(c);
        }
      }
      if (models[static_cast<size_t>(m)].candidates.empty()) {
        PoolCandidate c{nullptr, "A100", 3.67, 0.5, 0.2, 10, 72, {}, "", "", 2, Pricing::on_demand};
        models[static_cast<size_t>(m)].candidates.push_back(c);
      }
    }
    auto exact = assign_pools_exact(models, 0.8);
    ASSERT_TRUE(exact.ok()) << exact.error().message;
    PoolAssignment brute = assign_pools_brute_force(models, 0.8);
    EXPECT_NEAR(exact.value().usd_per_month, brute.usd_per_month, 1e-6) << "trial " << trial;
    EXPECT_LE(exact.value().usd_per_month, one_pool_per_model(models, 0.8).usd_per_month + 1e-6);
    // Every model placed exactly once, and each pool's copies fit.
    std::vector<int> placed(static_cast<size_t>(n), 0);
    for (const auto& p : exact.value().pools) {
      for (int m : p.models) ++placed[static_cast<size_t>(m)];
      EXPECT_GE(p.gpus * 0.8 + 1e-9, p.peak_gpus);
      EXPECT_EQ(p.gpus % p.gpus_per_node, 0) << p.accelerator << " " << p.gpus;
    }
    for (int count : placed) EXPECT_EQ(count, 1);
  }
}

// A pool is billed in whole nodes: one GPU's work on a type sold in nodes of 8 costs 8 GPUs, so a
// dearer GPU sold singly wins; a pool on 2-GPU nodes rounds 3 GPUs up to 4.
TEST(ModelPools, PoolsAreBilledInWholeNodes) {
  std::vector<ModelDemand> one(1);
  one[0].service = "m";
  one[0].candidates.push_back({nullptr, "H100", 1.00, 0.5, 0.3, 10, 72, {}, "p5.48xlarge", "x86_64", 8, Pricing::on_demand});
  one[0].candidates.push_back({nullptr, "L40S", 1.20, 0.5, 0.3, 10, 40, {}, "g6e.xlarge", "x86_64", 1, Pricing::on_demand});
  auto single = assign_pools_exact(one, 0.8);
  ASSERT_TRUE(single.ok()) << single.error().message;
  ASSERT_EQ(single.value().pools.size(), 1u);
  EXPECT_EQ(single.value().pools[0].accelerator, "L40S");
  EXPECT_EQ(single.value().pools[0].gpus, 1);
  EXPECT_EQ(one_pool_per_model(one, 0.8).pools[0].accelerator, "L40S");
  std::vector<ModelDemand> pair(1);
  pair[0].service = "m";
  pair[0].candidates.push_back({nullptr, "A100-80GB", 2.00, 2.2, 1.0, 66, 72, {}, "a2-ultragpu-2g", "x86_64", 2, Pricing::on_demand});
  auto rounded = assign_pools_exact(pair, 0.8);
  ASSERT_TRUE(rounded.ok()) << rounded.error().message;
  EXPECT_EQ(rounded.value().pools[0].gpus, 4);  // 2.2 / 0.8 = 2.75: 3 GPUs, 2 nodes
  EXPECT_NEAR(rounded.value().usd_per_month, 4 * 2.00 * 730, 1e-6);
  EXPECT_EQ(assign_pools_brute_force(pair, 0.8).pools[0].gpus, 4);
}

// A pool's simulation took more GPUs than its shares sized: its models' shares on that type are
// scaled by what it took (on that type only), and weighed again another type wins; a check that
// grew nothing leaves nothing to weigh again.
TEST(ModelPools, SharesAsSimulatedWeighTheTypesAgain) {
  std::vector<ModelDemand> one(1);
  one[0].service = "m";
  one[0].candidates.push_back({nullptr, "A100-80GB", 2.00, 2.2, 1.0, 66, 72, {}, "a2-ultragpu-1g", "x86_64", 1, Pricing::on_demand});
  one[0].candidates.push_back({nullptr, "H100", 3.50, 1.5, 0.7, 66, 72, {}, "a3-highgpu-1g", "x86_64", 1, Pricing::on_demand});
  auto sized = assign_pools_exact(one, 0.8);
  ASSERT_TRUE(sized.ok()) << sized.error().message;
  ASSERT_EQ(sized.value().pools[0].accelerator, "A100-80GB");  // 3 x $2.00 against 2 x $3.50
  EXPECT_TRUE(shares_as_simulated(one, sized.value(), sized.value()).empty());
  PoolAssignment checked = sized.value();
  checked.pools[0].gpus = 5;  // the simulation needed 5 A100s
  const std::vector<ModelDemand> scaled = shares_as_simulated(one, sized.value(), checked);
  ASSERT_EQ(scaled.size(), 1u);
  EXPECT_NEAR(scaled[0].candidates[0].peak_gpus, 2.2 * 5 / 3, 1e-12);
  EXPECT_NEAR(scaled[0].candidates[0].average_gpus, 1.0 * 5 / 3, 1e-12);
  EXPECT_EQ(scaled[0].candidates[1].peak_gpus, 1.5);  // the H100's shares were not checked
  auto again = assign_pools_exact(scaled, 0.8);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again.value().pools[0].accelerator, "H100");  // 2 x $3.50 against 5 x $2.00
  EXPECT_NEAR(pool_peak_gpus(one, again.value().pools[0]), 1.5, 1e-12);
}

// A service that may not run on spot shares a pool only on demand: the interruptible one joins it
// there (its on-demand candidate), and the pool is priced on demand, never at the other's spot price.
TEST(ModelPools, AServiceThatMayNotRunOnSpotNeverRidesSpotNodes) {
  std::vector<ModelDemand> two(2);
  two[0].service = "tagger";  // interruptible: spot, or on demand
  two[0].candidates.push_back({nullptr, "T4", 0.25, 0.1, 0.05, 5, 14.4, {}, "g5g.xlarge", "arm64", 1, Pricing::spot});
  two[0].candidates.push_back({nullptr, "T4", 0.42, 0.1, 0.05, 5, 14.4, {}, "g5g.xlarge", "arm64", 1, Pricing::on_demand});
  two[1].service = "chat";  // real time: on demand only
  two[1].candidates.push_back({nullptr, "T4", 0.42, 0.1, 0.05, 5, 14.4, {}, "g5g.xlarge", "arm64", 1, Pricing::on_demand});
  auto pools = assign_pools_exact(two, 0.8);
  ASSERT_TRUE(pools.ok()) << pools.error().message;
  ASSERT_EQ(pools.value().pools.size(), 1u);
  const ModelPool& pool = pools.value().pools[0];
  EXPECT_EQ(pool.offer, "T4 on g5g.xlarge (on-demand)");
  EXPECT_EQ(pool.models.size(), 2u);
  EXPECT_NEAR(pool.usd_per_month, 0.42 * 730, 1e-9);
  EXPECT_EQ(candidate_in(two[0], pool)->pricing, Pricing::on_demand);
  EXPECT_NEAR(assign_pools_brute_force(two, 0.8).usd_per_month, 0.42 * 730, 1e-9);
  // Alone, each takes its cheapest offer: the tagger on spot.
  const PoolAssignment apart = one_pool_per_model(two, 0.8);
  EXPECT_EQ(apart.pools[0].offer, "T4 on g5g.xlarge (spot)");
  EXPECT_NEAR(apart.usd_per_month, (0.25 + 0.42) * 730, 1e-9);
}

// A pool runs a model as the option whose GPU carries a request/s for least: not the unbatched
// one on a cheaper GPU-hour (a quarter of the capacity), and among equals the smallest node.
TEST(ModelPools, APoolRunsTheOptionCheapestPerRequestCarried) {
  Offering two_gpus, one_gpu, cheap_eight;
  two_gpus.accelerator_count = 2;
  one_gpu.accelerator_count = 1;
  cheap_eight.accelerator_count = 8;
  auto option = [](const Offering& offering, int replicas, double usd_per_gpu_hour, double capacity_rps) {
    PlanOption o;
    o.offering = &offering;
    o.config.tensor_parallel = 1;
    o.replicas = replicas;
    o.usd_per_hour = usd_per_gpu_hour * replicas;
    o.level.capacity_rps = capacity_rps;
    return o;
  };
  ServicePlan plan;
  plan.ranked = {option(two_gpus, 6, 2.95, 0.67), option(cheap_eight, 25, 2.50, 0.17)};
  ASSERT_NE(pool_option(plan), nullptr);
  EXPECT_EQ(pool_option(plan)->offering, &two_gpus);  // $4.40 per request/s against $14.71
  plan.ranked.push_back(option(one_gpu, 6, 2.95, 0.67));
  EXPECT_EQ(pool_option(plan)->offering, &one_gpu);
  PlanOption wide = option(one_gpu, 2, 1.0, 5.0);
  wide.config.tensor_parallel = 2;
  plan.ranked = {wide};
  EXPECT_EQ(pool_option(plan), nullptr);  // a pool runs one GPU a replica
}

TEST(ModelPools, MemoryKeepsBigModelsApart) {
  std::vector<ModelDemand> models(2);
  for (auto& m : models) m.candidates.push_back({nullptr, "L4", 0.8, 0.1, 0.05, 15, 21.6, {}, "", "", 1, Pricing::on_demand});
  auto r = assign_pools_exact(models, 0.8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().pools.size(), 2u);  // 15 + 15 GiB do not fit one 21.6 GiB GPU
  EXPECT_NEAR(r.value().usd_per_month, 2 * 0.8 * 730, 1e-9);
}

TEST(ModelPools, FiveModelExampleSharesAndNamesTheBaseline) {
  auto spec = load_spec(std::string(GPUWISE_SOURCE_DIR) + "/examples/fleet-models.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  auto demands = model_demands(catalog, spec.value(), nullptr);
  ASSERT_TRUE(demands.ok());
  ASSERT_EQ(demands.value().size(), 5u);
  auto shared = assign_pools_exact(demands.value(), spec.value().constraints.max_utilization);
  ASSERT_TRUE(shared.ok()) << shared.error().message;
  PoolAssignment separate = one_pool_per_model(demands.value(), spec.value().constraints.max_utilization);
  EXPECT_EQ(separate.pools.size(), 5u);
  EXPECT_LT(shared.value().usd_per_month, 0.5 * separate.usd_per_month);
  EXPECT_NEAR(shared.value().usd_per_month, assign_pools_brute_force(demands.value(), 0.8).usd_per_month, 1e-6);
  // Every pool keeps the replicas its models' availability asks for (min_replicas 2 by default),
  // as plan does: five models on one T4 would be a layout plan rejects.
  for (const auto& pool : shared.value().pools)
    for (int m : pool.models) EXPECT_GE(pool.gpus, demands.value()[static_cast<size_t>(m)].min_replicas) << pool.accelerator;
  for (const auto& pool : separate.pools) EXPECT_GE(pool.gpus, 2);
}

// Scale to zero where traffic pauses and a cold start fits: never for a constant 30 requests/s
// (no gap outlasts the keep-alive), yes for a weekday dev endpoint, no when the cold start meets
// more than 1% of a tight SLO's requests.
TEST(ModelPools, ScaleToZeroOnlyWhereTrafficPausesAndTheColdStartFits) {
  ServiceSpec constant;
  constant.traffic.average_rps = constant.traffic.peak_rps = 30;
  constant.slo.latency_p99_s = 0.150;
  auto [fits, why] = scale_to_zero_advice(constant, 180);
  EXPECT_FALSE(fits);
  EXPECT_NE(why.find("never pauses"), std::string::npos) << why;
  ServiceSpec dev = constant;
  dev.traffic.average_rps = 0.18;
  dev.slo.latency_p99_s.reset();
  dev.slo.ttft_p99_s = 5.0;
  for (int day = 0; day < 7; ++day)
    for (int h = 0; h < 24; ++h) dev.traffic.profile.push_back(day < 5 && h >= 8 && h < 20 ? 2.8 : 0.0);
  std::tie(fits, why) = scale_to_zero_advice(dev, 180);
  EXPECT_TRUE(fits) << why;  // five cold starts a week in ~39,000 requests
  ServiceSpec sparse = constant;
  sparse.traffic.average_rps = 0.001;  // a request every ~17 minutes: most meet a cold start
  std::tie(fits, why) = scale_to_zero_advice(sparse, 180);
  EXPECT_FALSE(fits);
  EXPECT_NE(why.find("cold start"), std::string::npos) << why;
}

TEST(ModelPools, ModelsPeakingAtDifferentHoursNetOut) {
  // A daytime model and a nightly one, each 1.5 GPUs at its peak and 0.1 off it.
  std::vector<ModelDemand> models(2);
  for (int m = 0; m < 2; ++m) {
    PoolCandidate c{nullptr, "L4", 0.8, 1.5, 0.5, 4, 21.6, {}, "", "", 1};
    for (int h = 0; h < 24; ++h) c.hourly_gpus.push_back((h >= 9 && h < 18) == (m == 0) ? 1.5 : 0.1);
    models[static_cast<size_t>(m)].service = m == 0 ? "day" : "night";
    models[static_cast<size_t>(m)].candidates.push_back(c);
  }
  auto shared = assign_pools_exact(models, 0.8);
  ASSERT_TRUE(shared.ok());
  // Together the busiest hour needs 1.6 GPUs: 2 at 80%; apart, 2 + 2.
  ASSERT_EQ(shared.value().pools.size(), 1u);
  EXPECT_EQ(shared.value().pools[0].gpus, 2);
  EXPECT_NEAR(shared.value().pools[0].peak_gpus, 1.6, 1e-9);
  EXPECT_NEAR(one_pool_per_model(models, 0.8).usd_per_month, 4 * 0.8 * 730, 1e-9);
  EXPECT_NEAR(assign_pools_brute_force(models, 0.8).usd_per_month, shared.value().usd_per_month, 1e-9);
  // Without their shapes, the peaks add: 3 GPUs' worth needs 4.
  for (auto& m : models) m.candidates[0].hourly_gpus.clear();
  EXPECT_EQ(assign_pools_exact(models, 0.8).value().usd_per_month, 4 * 0.8 * 730);
}

TEST(ModelPools, AModelThatFitsNowhereIsAClearError) {
  std::vector<ModelDemand> models(2);
  models[0].service = "small";
  models[0].candidates.push_back({nullptr, "L4", 0.8, 0.1, 0.05, 2, 21.6, {}, "", "", 1, Pricing::on_demand});
  models[1].service = "huge";
  auto r = assign_pools_exact(models, 0.8);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "services.huge");
  EXPECT_NE(r.error().message.find("fits on no allowed accelerator"), std::string::npos);
}

}  // namespace
}  // namespace gw
