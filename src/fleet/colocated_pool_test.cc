#include "fleet/colocated_pool.h"

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "fleet/fleet_spec.h"

namespace gw {
namespace {

ServiceSpec colocated_classic_service(const std::string& name, double latency_p99_s) {
  ServiceSpec s;
  s.name = name;
  s.slo.latency_p99_s = latency_p99_s;
  return s;
}

ColocatedModel classic(const ServiceSpec& spec, double batch_s, double rate_rps) {
  ColocatedModel m;
  m.service = spec.name;
  m.spec = &spec;
  m.replica.max_batch = 1;
  m.replica.batch_time = [batch_s](int, Rng&) { return batch_s; };
  m.rate_rps = rate_rps;
  return m;
}

// A 10 ms model at 40/s meets a 60 ms p99 alone on one GPU; with a 40 ms model at 12/s on the
// same GPU (88% busy together) it waits behind the other's batches and misses; on two GPUs both
// meet their targets. The shares alone (0.4 + 0.48 < 1) would have called one GPU enough.
TEST(ColocatedPool, ASharedGpuDelaysTheFastModelBehindTheSlowOne) {
  ServiceSpec fast = colocated_classic_service("fast", 0.060), slow = colocated_classic_service("slow", 0.500);
  auto alone = simulate_colocated({classic(fast, 0.010, 40)}, 1, 20000, 1);
  ASSERT_TRUE(alone.ok());
  EXPECT_TRUE(alone.value().all_met());
  EXPECT_NEAR(alone.value().gpu_busy_fraction[0], 0.4, 0.02);
  auto together = simulate_colocated({classic(fast, 0.010, 40), classic(slow, 0.040, 12)}, 1, 20000, 1);
  ASSERT_TRUE(together.ok());
  const auto& f = together.value().models[0];
  EXPECT_FALSE(f.slo_met);
  EXPECT_EQ(f.binding_metric, "latency_p99");
  EXPECT_GT(f.latency_p99_s, 3 * alone.value().models[0].latency_p99_s);
  EXPECT_NEAR(together.value().gpu_busy_fraction[0], 0.88, 0.03);
  auto two = simulate_colocated({classic(fast, 0.010, 40), classic(slow, 0.040, 12)}, 2, 20000, 1);
  ASSERT_TRUE(two.ok());
  EXPECT_TRUE(two.value().all_met());
  EXPECT_GT(two.value().models[0].requests + two.value().models[1].requests, 19000);
}

TEST(ColocatedPool, SameSeedSameAnswer) {
  ServiceSpec a = colocated_classic_service("a", 0.1), b = colocated_classic_service("b", 0.1);
  auto run = [&](uint64_t seed) {
    return simulate_colocated({classic(a, 0.01, 30), classic(b, 0.02, 10)}, 1, 5000, seed).value().models[0].latency_p99_s;
  };
  EXPECT_EQ(run(3), run(3));
  EXPECT_NE(run(3), run(4));
}

// An LLM's decode steps take turns with the other model's batches: alone its time per output
// token is its step; beside a model that always has work, each of its tokens also waits one of
// the other's batches.
class FixedStep : public LlmStepTimer {
 public:
  double step_time_s(double, double, double, double, double) const override { return 0.020; }
  double kv_bytes_per_token() const override { return 1; }
};

TEST(ColocatedPool, AnLlmsTokensWaitForTheOtherModelsTurns) {
  ServiceSpec chat;
  chat.name = "chat";
  chat.input_tokens.sample = {100};
  chat.output_tokens.sample = {50};
  chat.slo.tpot_p99_s = 0.030;
  ColocatedModel llm;
  llm.service = "chat";
  llm.spec = &chat;
  llm.replica.llm = std::make_shared<FixedStep>();
  llm.replica.max_batch = 64;
  llm.rate_rps = 1;
  auto alone = simulate_colocated({llm}, 1, 2000, 1);
  ASSERT_TRUE(alone.ok());
  EXPECT_NEAR(alone.value().models[0].tpot_p99_s, 0.020, 0.0004);  // histogram buckets 1% wide
  EXPECT_TRUE(alone.value().models[0].slo_met);
  ServiceSpec busy = colocated_classic_service("busy", 10);
  auto shared = simulate_colocated({llm, classic(busy, 0.015, 60)}, 1, 20000, 1);  // 90% busy on its own
  ASSERT_TRUE(shared.ok());
  EXPECT_GT(shared.value().models[0].tpot_p99_s, 0.030);
  EXPECT_FALSE(shared.value().models[0].slo_met);
  EXPECT_EQ(shared.value().models[0].binding_metric, "tpot_p99");
}

// fleet's shared pools are checked by simulating their models together: the five-model example
// meets every SLO on the two T4s its shares ask for (each model's p99 in the JSON); with the
// fraud model's p99 cut to 4.5 ms the same two GPUs miss it once the others' batches are in the
// way, and the pool grows to three, priced as such.
TEST(ColocatedPool, FleetChecksItsSharedPoolsBySimulation) {
  auto spec = load_spec(std::string(GPUWISE_SOURCE_DIR) + "/examples/fleet-models.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  auto report = fleet_spec(catalog, spec.value(), FleetSpecOptions{});
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  const auto& pools = report.value().out["shared_pools"]["pools"];
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0]["gpus"], 2);
  ASSERT_EQ(pools[0]["simulated"].size(), 5u);
  for (const auto& m : report.value().out["shared_pools"]["models"]) {
    EXPECT_TRUE(m["simulated"]["slo_met"].get<bool>()) << m["service"];
    EXPECT_EQ(m["simulated"]["metric"], "latency_p99");
    EXPECT_GT(m["simulated"]["requests"].get<long long>(), 0);
  }
  Spec tight = spec.value();
  tight.services[0].slo.latency_p99_s = 0.0045;  // fraud
  auto grown = fleet_spec(catalog, tight, FleetSpecOptions{});
  ASSERT_TRUE(grown.ok());
  const auto& pool = grown.value().out["shared_pools"]["pools"][0];
  EXPECT_EQ(pool["gpus"], 3);
  EXPECT_NEAR(pool["usd_per_month"].get<double>(), 1.5 * pools[0]["usd_per_month"].get<double>(), 1e-6);
  EXPECT_NE(grown.value().text.find("2 GPUs by the shares, 3 once its models were simulated together"), std::string::npos);
}

}  // namespace
}  // namespace gw
