// The HPA algorithm step by step (ratio, tolerance, windows, step limits, scale to zero), the CPU
// model of a GPU-bound server, and autoscaled simulations: a pool that follows a step in demand,
// cold starts with their delay, warm pools, billing that stops when a drained replica stops.
#include "sim/autoscaler.h"

#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

namespace gw {
namespace {

ScaleObservation observe(double t, int ready, double busy, long long waiting = 0, long long in_service = 0, double rps = 1) {
  ScaleObservation o;
  o.time_s = t;
  o.interval_s = 15;
  o.ready = ready;
  o.busy_fraction = busy;
  o.waiting = waiting;
  o.in_service = in_service;
  o.arrival_rps = rps;
  o.completion_rps = rps;
  return o;
}

// A scaler on POLICY with TARGET, up to MAX_REPLICAS; tests change the rest where it matters.
ScalerConfig scaler(ScalePolicy policy, double target, int max_replicas = 100) {
  ScalerConfig c;
  c.policy = policy;
  c.target = target;
  c.max_replicas = max_replicas;
  return c;
}

TEST(Autoscaler, UtilizationRatioWithTolerance) {
  ScalerConfig c = scaler(ScalePolicy::duty_cycle, 70);
  Autoscaler a(c);
  EXPECT_EQ(a.decide(observe(15, 10, 0.75)), 10);  // 75/70 = 1.07: inside the 10% tolerance
  EXPECT_EQ(a.decide(observe(30, 10, 0.91)), 13);  // ceil(10 x 91/70) = 13
}

TEST(Autoscaler, ScaleUpStepLimitIsTheLargerOfFourPodsAndDoubling) {
  ScalerConfig c = scaler(ScalePolicy::queue_depth, 1, 1000);
  Autoscaler a(c);
  EXPECT_EQ(a.decide(observe(15, 2, 1, 100, 2)), 6);     // 2 + 4 pods
  EXPECT_EQ(a.decide(observe(30, 20, 1, 200, 20)), 40);  // 20 x 2
}

TEST(Autoscaler, ScaleDownWaitsForTheStabilizationWindow) {
  ScalerConfig c = scaler(ScalePolicy::queue_depth, 1);
  c.scale_down_window_s = 300;
  Autoscaler a(c);
  EXPECT_EQ(a.decide(observe(0, 10, 1, 0, 10)), 10);
  // Demand drops to 2: the highest recommendation over 300 s (10) holds until it ages out.
  for (double t = 15; t <= 300; t += 15) EXPECT_EQ(a.decide(observe(t, 10, 0.2, 0, 2)), 10) << t;
  EXPECT_EQ(a.decide(observe(315, 10, 0.2, 0, 2)), 2);
}

TEST(Autoscaler, APoolStartedAtItsSizeHoldsItThroughTheWindow) {
  // The first scrape already sees low demand: a running deployment's HPA has its own size in
  // the window's history, so the pool drains only once that ages out.
  ScalerConfig c = scaler(ScalePolicy::queue_depth, 1);
  c.scale_down_window_s = 300;
  Autoscaler a(c);
  // The size counts as recommended one scrape before the first (t = 0): held through t = 300.
  for (double t = 15; t <= 300; t += 15) EXPECT_EQ(a.decide(observe(t, 8, 0.2, 0, 2)), 8) << t;
  EXPECT_EQ(a.decide(observe(315, 8, 0.2, 0, 2)), 2);
  // Without a window it drains at the first scrape.
  c.scale_down_window_s = 0;
  Autoscaler b(c);
  EXPECT_EQ(b.decide(observe(15, 8, 0.2, 0, 2)), 2);
}

TEST(Autoscaler, ScaleToZeroAfterKeepAliveAndNotBefore) {
  ScalerConfig c = scaler(ScalePolicy::queue_depth, 1);
  c.min_replicas = 0;
  c.keep_alive_s = 600;
  c.scale_down_window_s = 0;
  Autoscaler a(c);
  EXPECT_EQ(a.decide(observe(0, 1, 0.5, 0, 1)), 1);
  EXPECT_EQ(a.decide(observe(300, 1, 0, 0, 0, 0)), 1);  // idle 300 s: still kept alive
  EXPECT_EQ(a.decide(observe(600, 1, 0, 0, 0, 0)), 0);
  EXPECT_EQ(a.decide(observe(615, 0, 0, 3, 0, 0.2)), 3);  // requests wake it
}

// A schedule (KEDA cron) beside queue depth: each hour's count from the lead before it, the
// larger of schedule and metric asked for, and when the schedule's answer next may change.
TEST(Autoscaler, AScheduleAsksForEachHoursCountALeadAhead) {
  ScalerConfig c = scaler(ScalePolicy::queue_depth, 10);
  c.schedule = {1, 4, 2};
  c.schedule_lead_s = 1200;
  Autoscaler a(c);
  EXPECT_EQ(a.scheduled(0), 1);
  EXPECT_EQ(a.scheduled(2500), 4);         // hour 1 is 1,100 s away: within the lead
  EXPECT_EQ(a.scheduled(7200 - 1000), 4);  // hours 1 and 2
  EXPECT_EQ(a.scheduled(7300), 2);
  EXPECT_EQ(a.scheduled(3 * 3600 + 10), 1);  // repeating: hour 3 is the schedule's hour 0
  EXPECT_EQ(a.schedule_holds_until(100), 2400);
  EXPECT_EQ(a.schedule_holds_until(2500), 7200);  // 4 through hour 1, and while hour 2 is in the lead
  EXPECT_EQ(a.schedule_holds_until(7300), 3 * 3600);  // 2 while hour 3 (the schedule's 1) is in the lead
  ScaleObservation o = observe(15, 1, 0.5, 0, 1);
  o.traffic_time_s = 2500;
  EXPECT_EQ(a.decide(o), 4);  // the metric asks for 1
  EXPECT_EQ(Autoscaler(scaler(ScalePolicy::queue_depth, 10)).schedule_holds_until(100), 1e18);
}

TEST(Autoscaler, CpuOfAGpuBoundServerStaysLow) {
  CpuModel cpu;  // 8 cores
  EXPECT_NEAR(cpu.utilization_pct(1.0, 20), 3 + 100 * (1 + 0.1) / 8, 1e-9);
  EXPECT_LT(cpu.utilization_pct(1.0, 20), 20);
  // So an HPA on 70% CPU scales a saturated pool down, not up.
  ScalerConfig c = scaler(ScalePolicy::cpu, 70);
  c.scale_down_window_s = 0;
  Autoscaler a(c);
  EXPECT_LT(a.decide(observe(15, 10, 1.0, 50, 10, 20)), 10);
}

TEST(Autoscaler, ExpectedChangesFromAWindowsSpreadAgainstItsTolerance) {
  // Queue depth, target 10 per replica, on 20 replicas: a metric well inside the tolerance
  // changes nothing; one whose scrapes often fall below it, and below one replica fewer, will
  // at some point find a whole scale-down window of them.
  ScalerConfig c = scaler(ScalePolicy::queue_depth, 10);
  c.scale_down_window_s = 300;
  Autoscaler a(c);
  Rng rng(3);
  auto window = [&](double mean, double sd) {
    std::vector<ScaleObservation> w;
    for (int i = 1; i <= 40; ++i) {
      double total = mean + sd * rng.normal();
      w.push_back(observe(15.0 * i, 20, 0.9, 0, static_cast<long long>(std::max(0.0, std::round(total)))));
    }
    return w;
  };
  const double day = 86400 / 15.0;
  EXPECT_LT(a.expected_changes(window(200, 2), day), 1e-6);   // 1.00 +- 0.01 of the target
  EXPECT_GT(a.expected_changes(window(200, 5), day), 0.01);   // +- 0.025: 4 sd from 1.1, a few times a month
  EXPECT_GT(a.expected_changes(window(170, 8), day), 1.0);    // 0.85 +- 0.04: low scrapes most of the time
  EXPECT_GT(a.expected_changes(window(212, 10), day), 1.0);   // 1.06 +- 0.05: past 1.1 now and then, and up needs one
  // A fixed pool never changes; a window too short to judge always might.
  ScalerConfig fixed;
  fixed.policy = ScalePolicy::static_peak;
  fixed.static_replicas = 20;
  EXPECT_EQ(Autoscaler(fixed).expected_changes(window(100, 50), day), 0);
  EXPECT_TRUE(std::isinf(a.expected_changes(std::vector<ScaleObservation>(3, observe(15, 20, 0.9, 0, 200)), day)));
}

// A fixed pool of `replicas`: its scaler and the simulation's scaling options.
std::pair<ScalerConfig, ScalingOptions> fixed_pool(int replicas) {
  ScalerConfig c;
  c.policy = ScalePolicy::static_peak;
  c.static_replicas = replicas;
  ScalingOptions s;
  s.max_replicas = replicas;
  s.initial_replicas = replicas;
  return {c, s};
}

// A pool of one-at-a-time replicas (1 s each) under a load that steps from 2 to 8 requests/s.
struct StepArrivals : ArrivalProcess {
  Rng rng{3};
  double now = 0, end_s;
  explicit StepArrivals(double end) : end_s(end) {}
  std::optional<Arrival> next() override {
    double rate = now < 600 ? 2 : 8;
    now += rng.exponential(1 / rate);
    if (now > end_s) return std::nullopt;
    return Arrival{now, 0, 1};
  }
};

// lanes: each replica that many one-at-a-time lanes (a replica of pipeline stages across nodes).
SimResult run_scaled(ScalerConfig config, ScalingOptions scaling, double end_s = 1800, int lanes = 1) {
  StepArrivals arrivals(end_s);
  std::vector<ReplicaConfig> replica(static_cast<size_t>(lanes));
  for (int lane = 0; lane < lanes; ++lane) {
    ReplicaConfig& c = replica[static_cast<size_t>(lane)];
    c.name = fmt::format("r lane {}", lane + 1);
    c.batching = SimBatching::none;
    c.max_batch = 1;
    c.batch_time = [](int, Rng&) { return 1.0; };
  }
  scaling.lanes_per_replica = lanes;
  auto scaler = std::make_shared<Autoscaler>(config);
  scaling.decide = [scaler](const ScaleObservation& o) { return scaler->decide(o); };
  SimOptions options;
  options.seed = 5;
  options.max_requests = 1000000;
  options.router = Router::shared_queue;
  options.slo.latency_p99_s = 5;
  options.scaling = scaling;
  options.check_invariants = true;
  auto result = simulate(arrivals, replica, options);
  EXPECT_TRUE(result.ok()) << result.error().to_string();
  return result.value();
}

// Replicas ready on average once the step's load has settled (1,000-1,700 s).
double late_mean_ready(const SimResult& run) {
  double ready = 0;
  int scrapes = 0;
  for (const auto& p : run.scale_series)
    if (p.time_s > 1000 && p.time_s < 1700) ready += p.ready, ++scrapes;
  return ready / scrapes;
}

// Up to max_replicas, initial_replicas running, a minute to start one.
ScalingOptions step_pool(int max_replicas, int initial_replicas) {
  ScalingOptions s;
  s.max_replicas = max_replicas;
  s.initial_replicas = initial_replicas;
  s.start_s = 60;
  return s;
}

TEST(AutoscaledSimulation, QueueDepthFollowsAStepInDemand) {
  ScalerConfig c = scaler(ScalePolicy::queue_depth, 1.5, 40);
  SimResult r = run_scaled(c, step_pool(40, 3));
  ASSERT_FALSE(r.scale_series.empty());
  // 8 requests/s of 1 s work needs 8 busy replicas; the target adds headroom.
  EXPECT_GT(late_mean_ready(r), 8);
  EXPECT_LT(late_mean_ready(r), 14);
  EXPECT_GT(r.scale_ups, 0);
  // Billing covers starting replicas: more than the serving time.
  EXPECT_GT(r.billed_node_s, r.serving_replica_s);
}

TEST(AutoscaledSimulation, StaticPoolBillsReplicasTimesDuration) {
  auto [c, s] = fixed_pool(12);
  SimResult r = run_scaled(c, s);
  EXPECT_NEAR(r.billed_node_s, 12 * r.duration_s, 12 * 5.0);
  EXPECT_EQ(r.scale_ups + r.scale_downs, 0);
  EXPECT_GT(r.slo_attainment, 0.99);
}

// A replica of two lanes (two nodes) is counted, started, drained and billed as one: the step to
// 8 requests/s of 1 s work needs at least 4 such replicas (8 lanes busy) and fewer than replicas
// of one lane under the same scaler; a fixed pool of 3 is billed 3 replicas x the span, not 6.
TEST(AutoscaledSimulation, ReplicasOfSeveralLanesScaleAsOne) {
  ScalerConfig c = scaler(ScalePolicy::queue_depth, 1.5, 20);
  const ScalingOptions s = step_pool(20, 2);
  SimResult r = run_scaled(c, s, 1800, 2);
  ASSERT_EQ(r.replicas.size(), 40u);  // every replica's two lanes
  for (const auto& p : r.scale_series) EXPECT_LE(p.ready + p.starting, 20);
  EXPECT_GT(late_mean_ready(r), 4);
  EXPECT_LT(late_mean_ready(r), late_mean_ready(run_scaled(c, s, 1800, 1)));
  EXPECT_GT(r.scale_ups, 0);
  EXPECT_GT(r.billed_node_s, r.serving_replica_s);
  auto [fc, fs] = fixed_pool(3);
  SimResult fixed = run_scaled(fc, fs, 1800, 2);
  EXPECT_NEAR(fixed.billed_node_s, 3 * fixed.duration_s, 3 * 5.0);
  EXPECT_NEAR(fixed.serving_replica_s, 3 * fixed.duration_s, 3 * 5.0);
}

TEST(AutoscaledSimulation, ColdStartsHoldRequestsAndWarmPoolShortensThem) {
  ScalerConfig c = scaler(ScalePolicy::queue_depth, 1, 20);
  c.min_replicas = 0;
  ScalingOptions s;
  s.max_replicas = 20;
  s.initial_replicas = 0;
  s.start_s = 120;
  s.node_provisioning_s = 90;
  s.warm_start_s = 30;
  SimResult cold = run_scaled(c, s, 300);
  EXPECT_EQ(cold.cold_starts, 1);
  EXPECT_GT(cold.held_requests, 0);
  EXPECT_GT(cold.latency.max(), 100);  // the first request waited for the whole start
  s.warm_pool = 2;
  SimResult warm = run_scaled(c, s, 300);
  EXPECT_LT(warm.latency.max(), 60);
  // Warm nodes are paid for.
  EXPECT_GT(warm.billed_node_s, warm.serving_replica_s);
}

TEST(AutoscaledSimulation, SameSeedSameRun) {
  ScalerConfig c = scaler(ScalePolicy::duty_cycle, 70, 40);
  ScalingOptions s;
  s.max_replicas = 40;
  s.initial_replicas = 2;
  s.start_s = 45;
  SimResult a = run_scaled(c, s), b = run_scaled(c, s);
  EXPECT_EQ(a.requests, b.requests);
  EXPECT_DOUBLE_EQ(a.billed_node_s, b.billed_node_s);
  EXPECT_DOUBLE_EQ(a.latency.quantile(0.99), b.latency.quantile(0.99));
}

// Fast-forward: a pool of one-at-a-time replicas (1 s each, a shared queue) on an hourly curve,
// simulated request by request and with steady stretches replayed, side by side.
SimResult run_curve(ScalerConfig config, ScalingOptions scaling, std::vector<double> profile, double rate_rps, double hours,
                    bool fast_forward) {
  ArrivalOptions a;
  a.process = "curve";
  a.rate_rps = rate_rps;
  a.profile = std::move(profile);
  ServiceSpec service;  // no token distributions: one output token each
  Rng rng(11);
  auto arrivals = make_arrivals(a, service, rng);
  ReplicaConfig replica;
  replica.name = "r";
  replica.batching = SimBatching::none;
  replica.max_batch = 1;
  replica.batch_time = [](int, Rng& r) { return r.exponential(1.0); };
  auto scaler = std::make_shared<Autoscaler>(config);
  scaling.decide = [scaler](const ScaleObservation& o) { return scaler->decide(o); };
  scaling.expected_changes = [scaler](const std::vector<ScaleObservation>& window, double ahead) {
    return scaler->expected_changes(window, ahead);
  };
  scaling.would_hold = [scaler](const std::vector<ScaleObservation>& again) { return scaler->would_hold(again); };
  if (!config.schedule.empty()) scaling.scaler_steady_until = [scaler](double t) { return scaler->schedule_holds_until(t); };
  scaling.fast_forward = fast_forward;
  scaling.fast_forward_requests = 2000;
  scaling.account_until_s = hours * 3600;
  SimOptions options;
  options.seed = 5;
  options.max_requests = 1LL << 40;
  options.max_duration_s = hours * 3600;
  options.router = Router::shared_queue;
  options.slo.latency_p99_s = 4;
  options.scaling = scaling;
  options.check_invariants = true;
  auto result = simulate(*arrivals, {replica}, options);
  EXPECT_TRUE(result.ok()) << result.error().to_string();
  return result.value();
}

TEST(AutoscaledSimulation, FastForwardOfASteadyPoolMatchesTheExactRun) {
  auto [c, s] = fixed_pool(48);
  SimResult exact = run_curve(c, s, {1.0}, 32, 6, false);
  SimResult fast = run_curve(c, s, {1.0}, 32, 6, true);
  EXPECT_EQ(exact.fast_forwarded_s, 0);
  EXPECT_GT(fast.fast_forwarded_s, 0.8 * 6 * 3600);  // most of the span replayed
  EXPECT_GT(fast.fast_forward_replays, 0);
  EXPECT_NEAR(static_cast<double>(fast.requests), static_cast<double>(exact.requests), 0.01 * static_cast<double>(exact.requests));
  EXPECT_NEAR(fast.billed_node_s, exact.billed_node_s, 1e-6 * exact.billed_node_s);  // 48 nodes x 6 h either way
  EXPECT_NEAR(fast.latency.quantile(0.99), exact.latency.quantile(0.99), 0.05 * exact.latency.quantile(0.99));
  EXPECT_NEAR(fast.latency.mean(), exact.latency.mean(), 0.03 * exact.latency.mean());
  EXPECT_NEAR(fast.slo_attainment, exact.slo_attainment, 0.005);
  EXPECT_NEAR(fast.replicas[0].busy_fraction, exact.replicas[0].busy_fraction, 0.02);
  // The scrapes cover the span in order, replayed ones included.
  ASSERT_FALSE(fast.scale_series.empty());
  for (size_t i = 1; i < fast.scale_series.size(); ++i) ASSERT_GT(fast.scale_series[i].time_s, fast.scale_series[i - 1].time_s) << i;
  EXPECT_NEAR(fast.scale_series.back().time_s, 6 * 3600, 120);
  EXPECT_NEAR(fast.duration_s, exact.duration_s, 60);
}

// A schedule on a steady load: each hour's count is asked for the lead before the hour, so the
// pool is 8 by the third hour's start and back to 2 after the fourth; fast-forward replays no
// stretch across a change of the schedule (the load never changes), and bills as the exact run.
TEST(AutoscaledSimulation, AScheduleStartsReplicasAheadAndFastForwardStopsAtItsChanges) {
  ScalerConfig c = scaler(ScalePolicy::queue_depth, 100, 20);
  c.schedule = {2, 2, 8, 8, 2, 2};
  c.schedule_lead_s = 600;
  ScalingOptions s = step_pool(20, 2);
  s.start_s = 300;
  SimResult exact = run_curve(c, s, {1.0}, 1, 6, false);
  SimResult fast = run_curve(c, s, {1.0}, 1, 6, true);
  EXPECT_GT(fast.fast_forwarded_s, 3600);
  EXPECT_NEAR(fast.billed_node_s, exact.billed_node_s, 0.01 * exact.billed_node_s);
  // 2 replicas to 1.83 h (2 h less the lead), 8 to 4.08 h (4 h and the 300 s scale-down
  // window), 2 to the end.
  EXPECT_NEAR(exact.billed_node_s / 3600, 2 * 1.833 + 8 * 2.25 + 2 * 1.917, 0.3);
  for (const SimResult* run : {&exact, &fast})
    for (const auto& p : run->scale_series) {
      if (p.time_s > 2 * 3600 && p.time_s < 4 * 3600) {
        EXPECT_EQ(p.ready, 8) << p.time_s;
      }
      if (p.time_s < 1.8 * 3600 || p.time_s > 4.2 * 3600) {
        EXPECT_EQ(p.ready, 2) << p.time_s;
      }
    }
}

TEST(AutoscaledSimulation, FastForwardStopsAtEachChangeOfRate) {
  // Two hours at each of 24, 48, 12 and 24 requests/s on a fixed pool: only what lies between
  // the steps is replayed, and each step's transient is simulated.
  auto [c, s] = fixed_pool(80);
  const std::vector<double> profile = {1, 1, 2, 2, 0.5, 0.5, 1, 1};
  SimResult exact = run_curve(c, s, profile, 24, 8, false);
  SimResult fast = run_curve(c, s, profile, 24, 8, true);
  EXPECT_GT(fast.fast_forwarded_s, 5 * 3600);
  EXPECT_NEAR(static_cast<double>(fast.requests), static_cast<double>(exact.requests), 0.01 * static_cast<double>(exact.requests));
  EXPECT_NEAR(fast.billed_node_s, exact.billed_node_s, 1e-6 * exact.billed_node_s);
  EXPECT_NEAR(fast.latency.quantile(0.99), exact.latency.quantile(0.99), 0.05 * exact.latency.quantile(0.99));
  EXPECT_NEAR(fast.replicas[0].busy_fraction, exact.replicas[0].busy_fraction, 0.02);
  // Each hour's arrivals (from the scrapes) follow the curve: no stretch was replayed past a change.
  for (int hour = 0; hour < 8; ++hour) {
    double sum = 0;
    int n = 0;
    for (const auto& p : fast.scale_series)
      if (p.time_s > hour * 3600 + 60 && p.time_s <= (hour + 1) * 3600) sum += p.arrival_rps, ++n;
    ASSERT_GT(n, 0) << hour;
    const double rate = 24 * profile[static_cast<size_t>(hour)];
    EXPECT_NEAR(sum / n, rate, 0.05 * rate) << hour;
  }
}

TEST(AutoscaledSimulation, FastForwardLeavesAWanderingScalerToTheExactRun) {
  // A GPU-duty-cycle HPA on small one-at-a-time replicas: the metric sits outside its tolerance
  // and the stabilization window holds the count until a run of low scrapes lets it fall, at a
  // scrape nobody can foresee. No window is settled, so the run is the exact one.
  ScalerConfig c = scaler(ScalePolicy::duty_cycle, 70, 120);
  ScalingOptions s;
  s.max_replicas = 120;
  s.initial_replicas = 34;
  s.start_s = 60;
  SimResult exact = run_curve(c, s, {1.0}, 24, 2, false);
  SimResult fast = run_curve(c, s, {1.0}, 24, 2, true);
  EXPECT_GT(exact.scale_downs, 0);
  EXPECT_EQ(fast.fast_forwarded_s, 0);
  EXPECT_EQ(fast.requests, exact.requests);
  EXPECT_EQ(fast.scale_ups + fast.scale_downs, exact.scale_ups + exact.scale_downs);
  EXPECT_DOUBLE_EQ(fast.latency.quantile(0.99), exact.latency.quantile(0.99));
}

TEST(AutoscaledSimulation, FastForwardNeverReplaysAGrowingQueue) {
  auto [c, s] = fixed_pool(7);  // 8 requests/s of 1 s work: the queue grows without bound
  SimResult fast = run_curve(c, s, {1.0}, 8, 2, true);
  EXPECT_EQ(fast.fast_forwarded_s, 0);
  EXPECT_TRUE(fast.overloaded);
}

}  // namespace
}  // namespace gw
