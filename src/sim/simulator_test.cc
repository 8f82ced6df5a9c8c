// The simulator against queueing theory on long seeded runs, Little's law on every run, the
// step-time bound on throughput, determinism, and an LLM trace through growing fleets.
#include "sim/simulator.h"

#include <cmath>
#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "model/memory.h"
#include "model/presets.h"
#include "plan/queueing.h"

namespace gw {
namespace {

ServiceSpec classic_service() {
  ServiceSpec s;
  s.input_tokens.sample = {0};
  s.output_tokens.sample = {1};
  return s;
}

SimResult run_classic(double rate, std::function<double(int, Rng&)> time, int replicas, SimBatching batching,
                      int max_batch, long long requests, Router router = Router::round_robin, uint64_t seed = 7,
                      double client_timeout_s = 0) {
  Rng rng(seed);
  ArrivalOptions arrivals;
  arrivals.rate_rps = rate;
  auto process = make_arrivals(arrivals, classic_service(), rng);
  std::vector<ReplicaConfig> configs(static_cast<size_t>(replicas));
  for (auto& c : configs) {
    c.batching = batching;
    c.max_batch = max_batch;
    c.batch_time = time;
  }
  SimOptions options;
  options.seed = seed;
  options.max_requests = requests;
  options.router = router;
  options.client_timeout_s = client_timeout_s;
  auto result = simulate(*process, configs, options);
  EXPECT_TRUE(result.ok()) << result.error().to_string();
  return result.value();
}

void expect_littles_law(const SimResult& r) {
  // L = lambda W, with the time-average number in the system and the mean time in it.
  EXPECT_NEAR(r.mean_in_system, r.throughput_rps * r.latency.mean(), 0.01 * r.mean_in_system + 1e-9);
}

TEST(Simulator, MM1MeanWaitMatchesTheory) {
  auto r = run_classic(0.8, [](int, Rng& rng) { return rng.exponential(1.0); }, 1, SimBatching::none, 1, 2000000);
  EXPECT_NEAR(r.wait.mean(), 4.0, 4.0 * 0.02);  // rho / (mu - lambda)
  expect_littles_law(r);
}

TEST(Simulator, MD1MeanWaitMatchesPollaczekKhinchine) {
  auto r = run_classic(0.8, [](int, Rng&) { return 1.0; }, 1, SimBatching::none, 1, 2000000);
  EXPECT_NEAR(r.wait.mean(), 2.0, 2.0 * 0.02);  // rho / (2 mu (1 - rho))
  expect_littles_law(r);
}

TEST(Simulator, MMcWaitingProbabilityMatchesErlangC) {
  auto r = run_classic(3.2, [](int, Rng& rng) { return rng.exponential(1.0); }, 4, SimBatching::none, 1, 1000000,
                       Router::shared_queue);
  double expected = erlang_c(4, 3.2);
  EXPECT_NEAR(r.waited_fraction, expected, expected * 0.02);
  EXPECT_NEAR(r.wait.mean(), mgc_mean_wait(4, 3.2, 1.0, 1.0), mgc_mean_wait(4, 3.2, 1.0, 1.0) * 0.03);
  expect_littles_law(r);
}

TEST(Simulator, BatchThroughputNeverExceedsTheStepTimeBound) {
  // A batch of b takes 10 + 2b ms; at most 32 per pass: at most 32 / 0.074 = 432 requests/s.
  auto time = [](int b, Rng&) { return 0.010 + 0.002 * b; };
  Rng unused(0);
  double bound = 32 / time(32, unused);
  for (double rate : {100.0, 400.0, 1000.0}) {
    auto r = run_classic(rate, time, 1, SimBatching::dynamic, 32, 50000);
    EXPECT_LE(r.throughput_rps, bound * 1.0001) << rate;
    expect_littles_law(r);
  }
  auto saturated = run_classic(1000, time, 1, SimBatching::dynamic, 32, 50000);
  EXPECT_NEAR(saturated.throughput_rps, bound, bound * 0.01);  // an overloaded server runs full batches
  EXPECT_GT(saturated.replicas[0].batch_sizes[32], saturated.replicas[0].steps * 9 / 10);
}

TEST(Simulator, StaticBatchingWaitsForAFullBatchOrTheTimeout) {
  Rng rng(3);
  ArrivalOptions arrivals;
  arrivals.rate_rps = 10;  // 8 arrive in ~0.8 s; the 50 ms timeout fires first
  auto process = make_arrivals(arrivals, classic_service(), rng);
  ReplicaConfig c;
  c.batching = SimBatching::static_batch;
  c.max_batch = 8;
  c.batch_timeout_s = 0.05;
  c.batch_time = [](int, Rng&) { return 0.001; };
  SimOptions options;
  options.max_requests = 20000;
  auto r = simulate(*process, {c}, options);
  ASSERT_TRUE(r.ok());
  EXPECT_LE(r.value().wait.quantile(0.999), 0.0506);  // nobody waits past the timeout (+ a pass)
  EXPECT_GT(r.value().wait.mean(), 0.02);
}

TEST(Simulator, SameSeedSameOutputDifferentSeedDifferent) {
  auto time = [](int, Rng& rng) { return rng.exponential(0.01); };
  auto a = run_classic(50, time, 2, SimBatching::dynamic, 8, 20000, Router::shortest_queue, 11);
  auto b = run_classic(50, time, 2, SimBatching::dynamic, 8, 20000, Router::shortest_queue, 11);
  auto c = run_classic(50, time, 2, SimBatching::dynamic, 8, 20000, Router::shortest_queue, 12);
  EXPECT_EQ(a.latency.mean(), b.latency.mean());
  EXPECT_EQ(a.latency.quantile(0.99), b.latency.quantile(0.99));
  EXPECT_EQ(a.replicas[1].steps, b.replicas[1].steps);
  EXPECT_NE(a.latency.mean(), c.latency.mean());
}

// A reclaimed node: its replicas hand on their queue, finish what they hold and come back when
// the replacement is ready; while it is away the others carry the load, and nothing is lost.
SimResult run_with_outage(const std::vector<ReplicaOutage>& outages, Router router, long long requests = 40000) {
  Rng rng(3);
  ArrivalOptions arrivals;
  arrivals.rate_rps = 3.0;
  auto process = make_arrivals(arrivals, classic_service(), rng);
  std::vector<ReplicaConfig> configs(4);
  for (auto& c : configs) {
    c.batching = SimBatching::none;
    c.max_batch = 1;
    c.batch_time = [](int, Rng& r) { return r.exponential(1.0); };
  }
  SimOptions options;
  options.seed = 3;
  options.max_requests = requests;
  options.router = router;
  options.outages = outages;
  options.check_invariants = true;
  auto result = simulate(*process, configs, options);
  EXPECT_TRUE(result.ok()) << result.error().to_string();
  return result.value();
}

TEST(Simulator, AReclaimedNodeHandsOnItsQueueAndComesBackWhenReplaced) {
  for (Router router : {Router::round_robin, Router::shortest_queue, Router::shared_queue}) {
    SimResult steady = run_with_outage({}, router);
    // Two of four replicas gone for 600 s at 3 requests/s against a capacity of 2: a backlog of
    // about 600 requests builds and clears once they return.
    SimResult lost = run_with_outage({{2000, {2, 3}, 600}}, router);
    EXPECT_EQ(lost.requests, steady.requests);
    ASSERT_EQ(lost.outages.size(), 1u);
    EXPECT_GE(lost.outages[0].drained_s, 0);
    EXPECT_LT(lost.outages[0].drained_s, 60);  // what they held, at 1 s a request
    EXPECT_DOUBLE_EQ(lost.outages[0].replaced_s, 600);
    EXPECT_GT(lost.latency.quantile(0.99), 10 * steady.latency.quantile(0.99)) << static_cast<int>(router);
    EXPECT_GT(lost.replicas[0].requests, steady.replicas[0].requests);
    EXPECT_LT(lost.replicas[2].requests, steady.replicas[2].requests);
    expect_littles_law(lost);
    // A replacement that is ready at once leaves little trace.
    SimResult blip = run_with_outage({{2000, {3}, 0}}, router);
    EXPECT_LT(blip.latency.quantile(0.99), 1.5 * steady.latency.quantile(0.99));
  }
  Rng rng(1);
  ArrivalOptions arrivals;
  arrivals.rate_rps = 1;
  auto process = make_arrivals(arrivals, classic_service(), rng);
  std::vector<ReplicaConfig> configs(1);
  configs[0].batch_time = [](int, Rng&) { return 0.1; };
  SimOptions options;
  options.outages = {{10, {1}, 5}};
  EXPECT_FALSE(simulate(*process, configs, options).ok());
}

// The Azure conversation trace through 1, 2 and 4 replicas of an 8B model on two accelerators.
SimResult run_trace(const std::string& accelerator, int replicas) {
  Catalog catalog = Catalog::embedded().value();
  static ModelArch arch = load_preset("llama-3.1-8b").value();
  PerfSetup setup;
  setup.accelerator = catalog.find_accelerator(accelerator);
  setup.efficiency = default_efficiency(*setup.accelerator);
  auto model = std::make_shared<LlmStepModel>(arch, setup);
  InferenceMemoryOptions memory;
  MemoryEstimate e = estimate_inference(arch, memory);
  double free = setup.accelerator->memory_bytes() * 0.9 - e.weights_bytes - e.activation_bytes - e.overhead_bytes;
  std::vector<ReplicaConfig> configs(static_cast<size_t>(replicas));
  for (auto& c : configs) {
    c.batching = SimBatching::continuous;
    c.max_batch = 256;
    c.llm = model;
    c.kv_blocks = static_cast<long long>(free / (model->kv_bytes_per_token() * 16));
  }
  ArrivalOptions arrivals;
  arrivals.process = "trace";
  arrivals.trace_path = std::string(GPUWISE_SOURCE_DIR) + "/examples/traces/azure-llm-2023-conv.csv";
  arrivals.trace_format = TraceFormat::azure;
  arrivals.time_scale = 4;  // four times the trace's rate, so one replica is loaded
  Rng rng(1);
  ServiceSpec service;
  auto process = make_arrivals(arrivals, service, rng);
  SimOptions options;
  options.max_requests = 1000000;
  options.router = Router::least_tokens;
  auto r = simulate(*process, configs, options);
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.value();
}

TEST(Simulator, AzureTracePercentilesFallAsReplicasAndBandwidthGrow) {
  for (const char* accelerator : {"L40S", "H100"}) {
    SimResult one = run_trace(accelerator, 1), two = run_trace(accelerator, 2), four = run_trace(accelerator, 4);
    EXPECT_EQ(one.requests + one.rejected, 19366);
    for (const SimResult* r : {&one, &two, &four}) expect_littles_law(*r);
    // More replicas: less queueing, so TTFT and TPOT percentiles cannot rise.
    EXPECT_GE(one.ttft.quantile(0.99), two.ttft.quantile(0.99)) << accelerator;
    EXPECT_GE(two.ttft.quantile(0.99), four.ttft.quantile(0.99)) << accelerator;
    EXPECT_GE(one.tpot.quantile(0.5), two.tpot.quantile(0.5)) << accelerator;
    EXPECT_GE(two.tpot.quantile(0.5), four.tpot.quantile(0.5)) << accelerator;
    EXPECT_GE(one.replicas[0].busy_fraction, four.replicas[0].busy_fraction);
  }
  // H100 has 3.9x the L40S's memory bandwidth: decode steps, hence TPOT, are faster.
  EXPECT_LT(run_trace("H100", 2).tpot.quantile(0.5), run_trace("L40S", 2).tpot.quantile(0.5));
}

TEST(Simulator, KvCachePressurePreemptsAndRecomputes) {
  Catalog catalog = Catalog::embedded().value();
  ModelArch arch = load_preset("llama-3.1-8b").value();
  PerfSetup setup;
  setup.accelerator = catalog.find_accelerator("H100");
  setup.efficiency = default_efficiency(*setup.accelerator);
  auto model = std::make_shared<LlmStepModel>(arch, setup);
  ReplicaConfig c;
  c.batching = SimBatching::continuous;
  c.max_batch = 256;
  c.llm = model;
  c.kv_blocks = 600;  // 9,600 tokens: a handful of long requests fill it
  ServiceSpec service;
  service.input_tokens.sample = {1000};
  service.output_tokens.sample = {1500};
  Rng rng(5);
  ArrivalOptions arrivals;
  arrivals.rate_rps = 5;
  auto process = make_arrivals(arrivals, service, rng);
  SimOptions options;
  options.max_requests = 300;
  auto r = simulate(*process, {c}, options);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r.value().preemptions, 0);
  EXPECT_EQ(r.value().requests, 300);  // every preempted request still completes
  expect_littles_law(r.value());
}

// Twice the arrivals one server can take, clients that give up after 10 s: the queue stays at
// about the arrivals of one timeout (without the timeout it holds half of all arrivals by the
// end), every request is served or given up once, none is served after its client left, and
// about half give up (the server takes one a second of the two that come).
TEST(Simulator, ClientsThatGiveUpBoundAnOverloadedQueue) {
  auto one_second = [](int, Rng&) { return 1.0; };
  const SimResult bounded = run_classic(2.0, one_second, 1, SimBatching::none, 1, 20000, Router::round_robin, 7, 10.0);
  EXPECT_EQ(bounded.requests + bounded.timed_out, bounded.admitted);
  EXPECT_NEAR(static_cast<double>(bounded.timed_out) / static_cast<double>(bounded.admitted), 0.5, 0.02);
  EXPECT_LE(bounded.peak_in_flight, 2 * 10 * 2);
  EXPECT_LT(bounded.wait.max(), 10.0);
  EXPECT_TRUE(bounded.overloaded);
  EXPECT_NEAR(bounded.timed_out_share, 0.5, 0.03);
  // No SLO given: every served request is good, and attainment is the share served.
  EXPECT_NEAR(bounded.slo_attainment, static_cast<double>(bounded.requests) / static_cast<double>(bounded.admitted), 1e-12);
  const SimResult unbounded = run_classic(2.0, one_second, 1, SimBatching::none, 1, 20000);
  EXPECT_EQ(unbounded.timed_out, 0);
  EXPECT_GT(unbounded.peak_in_flight, 9000);
  EXPECT_TRUE(unbounded.overloaded);
}

// A timeout no request reaches changes nothing: the same requests served at the same times.
TEST(Simulator, ATimeoutNobodyReachesChangesNoLatency) {
  auto exponential = [](int, Rng& rng) { return rng.exponential(1.0); };
  const SimResult free = run_classic(3.2, exponential, 4, SimBatching::none, 1, 200000, Router::shared_queue);
  const SimResult timed = run_classic(3.2, exponential, 4, SimBatching::none, 1, 200000, Router::shared_queue, 7, 1e5);
  EXPECT_EQ(timed.timed_out, 0);
  EXPECT_EQ(timed.requests, free.requests);
  EXPECT_EQ(timed.latency.quantile(0.99), free.latency.quantile(0.99));
  EXPECT_EQ(timed.latency.mean(), free.latency.mean());
  EXPECT_EQ(timed.wait.max(), free.wait.max());
  EXPECT_FALSE(timed.overloaded);
}

// A timed-out request is longer than any served one: 99 served and 1 timed out leave the p99
// at the slowest served; 2 timed out put it beyond every served latency.
TEST(Simulator, QuantilesCountTimedOutRequestsAsTheLongest) {
  LogHistogram served;
  for (int i = 1; i <= 99; ++i) served.add(i);
  EXPECT_EQ(quantile_with_timeouts(served, 0, 0.5), served.quantile(0.5));
  EXPECT_NEAR(quantile_with_timeouts(served, 1, 0.99), 99, 99 * 0.01);
  EXPECT_NEAR(quantile_with_timeouts(served, 1, 0.5), 50, 50 * 0.01);
  EXPECT_TRUE(std::isinf(quantile_with_timeouts(served, 2, 0.99)));
  EXPECT_EQ(quantile_with_timeouts(LogHistogram{}, 0, 0.99), 0);
}

}  // namespace
}  // namespace gw
