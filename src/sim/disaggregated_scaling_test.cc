// Disaggregated pools autoscaled on their own signals: prefill replicas on the prompts waiting
// for them, decode replicas on the requests whose KV waits for them; each pool billed for itself;
// a decode pool at zero holds the computed prompts' KV on the prefill side until one is ready.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "sim/autoscaler.h"
#include "sim/disaggregated_replica_test.h"
#include "sim/linear_step_timer_test.h"
#include "sim/list_arrivals_test.h"
#include "sim/simulator.h"

namespace gw {
namespace {

// Poisson arrivals of one size (whole tokens), at rate_rps until end_s.
class SizedPoissonArrivals final : public ArrivalProcess {
 public:
  SizedPoissonArrivals(double rate_rps, double end_s, double input, double output, uint64_t seed)
      : rng_(seed), rate_rps_(rate_rps), end_s_(end_s), input_(input), output_(output) {}
  std::optional<Arrival> next() override {
    now_ += rng_.exponential(1 / rate_rps_);
    if (now_ > end_s_) return std::nullopt;
    return Arrival{now_, input_, output_};
  }

 private:
  Rng rng_;
  double rate_rps_, end_s_, input_, output_, now_ = 0;
};

// A prefill and a decode replica's configs: a step of 10 ms + 0.1 ms per decoding sequence +
// 0.02 ms per prompt token, batches of 8, 4,096 tokens a step, 1,000 blocks of 16 tokens.
std::vector<ReplicaConfig> scaled_prefill_and_decode() {
  const ReplicaConfig c = testing_support::disaggregated_llm_replica(1e11);
  ReplicaConfig prefill = c, decode = c;
  prefill.role = ReplicaRole::prefill;
  prefill.name = "prefill";
  decode.role = ReplicaRole::decode;
  decode.name = "decode";
  return {prefill, decode};
}

// Both pools on queue depth (HPA defaults, scale-down window 60 s): `prefill_target` prompts
// per prefill replica, `decode_target` requests per decode replica.
ScalingOptions queue_depth_pools(double prefill_target, double decode_target, int max_replicas, int initial, int min_replicas = 1) {
  ScalingOptions s;
  s.start_s = 30;
  s.account_until_s = 1200;
  for (double target : {prefill_target, decode_target}) {
    ScalerConfig c;
    c.policy = ScalePolicy::queue_depth;
    c.target = target;
    c.min_replicas = min_replicas;
    c.max_replicas = max_replicas;
    c.scale_down_window_s = 60;
    c.keep_alive_s = 60;
    auto scaler = std::make_shared<Autoscaler>(c);
    s.pools.push_back({max_replicas, initial, [scaler](const ScaleObservation& o) { return scaler->decide(o); }});
  }
  return s;
}

SimOptions scaled_pool_options(const ScalingOptions& scaling) {
  SimOptions o;
  o.check_invariants = true;
  o.max_requests = 1LL << 40;
  o.router = Router::least_tokens;
  o.scaling = scaling;
  return o;
}

// Each pool's replicas ready on average over the second half of the run.
std::vector<double> late_pool_ready(const SimResult& r) {
  std::vector<double> mean(2, 0);
  int scrapes = 0;
  for (const ScaleSample& p : r.scale_series) {
    if (p.time_s < 600 || p.time_s > 1200) continue;
    for (size_t i = 0; i < 2; ++i) mean[i] += p.pool_ready.at(i);
    ++scrapes;
  }
  for (double& m : mean) m /= scrapes;
  return mean;
}

// Long prompts with one-token answers load the prefill pool (a 2,000-token prompt is a 50 ms
// step; 40/s needs two replicas busy), short prompts with long answers the decode pool (400
// tokens at 8 a step of 10.8 ms: 1.85 requests/s a replica; 6/s needs four). Each pool grows
// where its own work is and stays small where it is not.
TEST(DisaggregatedScaling, EachPoolFollowsItsOwnQueue) {
  SizedPoissonArrivals prompts(40, 1200, 2000, 2, 7);
  auto heavy_prefill = simulate(prompts, scaled_prefill_and_decode(), scaled_pool_options(queue_depth_pools(2, 8, 12, 1)));
  ASSERT_TRUE(heavy_prefill.ok()) << heavy_prefill.error().to_string();
  SizedPoissonArrivals answers(6, 1200, 20, 400, 7);
  auto heavy_decode = simulate(answers, scaled_prefill_and_decode(), scaled_pool_options(queue_depth_pools(2, 8, 12, 1)));
  ASSERT_TRUE(heavy_decode.ok()) << heavy_decode.error().to_string();
  const std::vector<double> p = late_pool_ready(heavy_prefill.value()), d = late_pool_ready(heavy_decode.value());
  EXPECT_GE(p[0], 2.0);
  EXPECT_LE(p[1], 1.5);
  EXPECT_GE(d[1], 3.5);
  EXPECT_LE(d[0], 1.5);
  for (const SimResult* r : {&heavy_prefill.value(), &heavy_decode.value()}) {
    ASSERT_EQ(r->pool_billed_node_s.size(), 2u);
    EXPECT_NEAR(r->pool_billed_node_s[0] + r->pool_billed_node_s[1], r->billed_node_s, 1e-6 * r->billed_node_s);
    EXPECT_GT(r->scale_ups, 0);
    for (const ScaleSample& s : r->scale_series) {
      EXPECT_EQ(s.pool_ready[0] + s.pool_ready[1], s.ready);
      EXPECT_LE(s.pool_ready[0], 12);
    }
  }
  // Bills follow the pools: the prefill pool costs more where prompts are the work.
  EXPECT_GT(heavy_prefill.value().pool_billed_node_s[0], heavy_prefill.value().pool_billed_node_s[1]);
  EXPECT_GT(heavy_decode.value().pool_billed_node_s[1], heavy_decode.value().pool_billed_node_s[0]);
}

// Pools that keep their size are billed their replicas times the span each.
TEST(DisaggregatedScaling, FixedPoolsAreBilledEachForItself) {
  ScalingOptions s;
  s.account_until_s = 600;
  s.pools.push_back({2, 2, [](const ScaleObservation&) { return 2; }});
  s.pools.push_back({3, 3, [](const ScaleObservation&) { return 3; }});
  SizedPoissonArrivals arrivals(2, 600, 500, 50, 3);
  auto r = simulate(arrivals, scaled_prefill_and_decode(), scaled_pool_options(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_NEAR(r.value().pool_billed_node_s[0], 2 * 600.0, 1e-6);
  EXPECT_NEAR(r.value().pool_billed_node_s[1], 3 * 600.0, 1e-6);
  EXPECT_NEAR(r.value().billed_node_s, 5 * 600.0, 1e-6);
  EXPECT_EQ(r.value().scale_ups + r.value().scale_downs, 0);
}

// A decode pool at zero behind a ready prefill replica: the prompt is computed at once (its
// first token), its KV stays on the prefill replica until the decode replica started at the
// first scrape (15 s) is ready 30 s later; then it decodes. Both pools go back to zero after
// the keep-alive, and a request at 601 s wakes both at the scrape of 615 s: three cold starts,
// the second request's first token after one too (ready at 645 s).
TEST(DisaggregatedScaling, ADecodePoolAtZeroWakesAndThePromptsKvWaitsForIt) {
  ScalingOptions s = queue_depth_pools(2, 8, 4, 0, 0);
  s.pools[0].initial_replicas = 1;
  testing_support::ListArrivals arrivals({{0.0, 1000, 5}, {601.0, 1000, 5}});
  auto r = simulate(arrivals, scaled_prefill_and_decode(), scaled_pool_options(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const SimResult& out = r.value();
  EXPECT_EQ(out.requests, 2);
  EXPECT_EQ(out.cold_starts, 3);  // the decode pool at 15 s; both pools at 615 s
  EXPECT_NEAR(out.ttft.quantile(0), 0.030, 0.001);  // the first, on the ready prefill replica
  EXPECT_NEAR(out.ttft.quantile(1), 44.03, 0.5);   // the second waits for a prefill replica
  EXPECT_GT(out.latency.quantile(0), 44);          // both wait for a decode replica
  EXPECT_LT(out.latency.quantile(1), 46);
  EXPECT_LT(out.pool_billed_node_s[1], 0.5 * 1200);
}

// Random pools, scalers, loads and client timeouts: every request leaves the system once (the
// simulator's invariants hold at every event), replicas never exceed their pool's maximum, and
// the bills add up.
TEST(DisaggregatedScaling, StormsOfScaledPoolsLoseNoRequest) {
  int woke = 0, shrank = 0, lost = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed);
    const int max_replicas = 1 + static_cast<int>(rng.uniform() * 4);
    ScalingOptions s = queue_depth_pools(0.5 + rng.uniform() * 4, 1 + rng.uniform() * 12, max_replicas,
                                         static_cast<int>(rng.uniform() * (max_replicas + 1)), rng.uniform() < 0.5 ? 0 : 1);
    s.warm_pool = rng.uniform() < 0.3 ? 1 : 0;
    s.warm_start_s = 5;
    s.node_provisioning_s = 20;
    s.account_until_s = 450;
    std::vector<ReplicaConfig> configs = scaled_prefill_and_decode();
    configs[1].kv_blocks = 60 + static_cast<long long>(rng.uniform() * 400);  // decode pools short of blocks too
    if (seed % 2 == 0) {  // half the runs:
      // decode replicas that pull the KV between their steps (kv_pull.cc), draining and waking with pulls waiting.
      for (ReplicaConfig& c : configs) {
        c.kv_pulled_between_steps = true;
        c.kv_pull_call_s = 5e-4;
      }
    }
    SimOptions o = scaled_pool_options(s);
    if (rng.uniform() < 0.5) o.client_timeout_s = 5 + rng.uniform() * 60;
    SizedPoissonArrivals arrivals(0.2 + rng.uniform() * 4, 300, std::round(20 + rng.uniform() * 1500), std::round(1 + rng.uniform() * 200),
                                  seed);
    auto r = simulate(arrivals, configs, o);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.error().to_string();
    const SimResult& out = r.value();
    for (const ScaleSample& p : out.scale_series) {
      EXPECT_LE(p.pool_ready[0], max_replicas) << seed;
      EXPECT_LE(p.pool_ready[1], max_replicas) << seed;
    }
    EXPECT_NEAR(out.pool_billed_node_s[0] + out.pool_billed_node_s[1], out.billed_node_s, 1e-6 * (1 + out.billed_node_s)) << seed;
    woke += out.cold_starts > 0;
    shrank += out.scale_downs > 0;
    lost += out.timed_out + out.rejected > 0;
  }
  // The storm reaches what it is for: pools woken from zero, pools shrunk, requests that leave early.
  EXPECT_GE(woke, 5);
  EXPECT_GE(shrank, 10);
  EXPECT_GE(lost, 3);
  std::printf("scaled pools: %d of 40 runs woke a pool, %d shrank one, %d lost requests\n", woke, shrank, lost);
}

// Pools are the prefill and decode replicas' own; a pool per config, one lane each.
TEST(DisaggregatedScaling, PoolsAreAPrefillThenADecodeConfig) {
  SizedPoissonArrivals arrivals(1, 10, 100, 10, 1);
  ScalingOptions s = queue_depth_pools(2, 8, 2, 1);
  std::vector<ReplicaConfig> swapped = scaled_prefill_and_decode();
  std::swap(swapped[0], swapped[1]);
  EXPECT_FALSE(simulate(arrivals, swapped, scaled_pool_options(s)).ok());
  ScalingOptions one = s;
  one.pools.clear();
  one.decide = [](const ScaleObservation&) { return 1; };
  EXPECT_FALSE(simulate(arrivals, scaled_prefill_and_decode(), scaled_pool_options(one)).ok());
}

}  // namespace
}  // namespace gw
