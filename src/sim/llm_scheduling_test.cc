// The LLM replicas under memory pressure: a hand-traced preemption, invariants checked after
// every event across random traces x schedulers x tiny KV caches x seeds, and the Azure
// conversation trace on Llama-2-70B without chunked prefill (whose KV use once fell to -69.9).
#include <gtest/gtest.h>

#include "sim/disaggregated_replica_test.h"
#include "sim/linear_step_timer_test.h"
#include "sim/list_arrivals_test.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "catalog/catalog.h"
#include "model/presets.h"
#include "sim/deployment.h"
#include "sim/simulator.h"

namespace gw {
namespace {

using testing_support::checked_sim_options;
using testing_support::LinearStepTimer;
using testing_support::ListArrivals;


long long pick(Rng& rng, long long n) { return std::min(n - 1, static_cast<long long>(rng.uniform() * static_cast<double>(n))); }


ReplicaConfig llm_replica(LlmScheduler scheduler, long long kv_blocks, int block_tokens, int max_batch, int budget) {
  ReplicaConfig c;
  c.name = std::string(llm_scheduler_name(scheduler));
  c.batching = SimBatching::continuous;
  c.scheduler = scheduler;
  c.llm = std::make_shared<LinearStepTimer>();
  c.kv_blocks = kv_blocks;
  c.block_tokens = block_tokens;
  c.max_batch = max_batch;
  c.token_budget = budget;
  c.watermark_fraction = 0;
  c.swap_bytes_per_s = 25e9;
  return c;
}

// Gives each request a prompt-block chain of block_tokens tokens: the first blocks from one of a
// few shared prefixes (a system prompt, a conversation's earlier turns), the rest its own.
void add_random_chains(Rng& rng, std::vector<Arrival>& list, int block_tokens) {
  unsigned long long next_own = 1'000'000;
  for (Arrival& a : list) {
    const auto blocks = static_cast<size_t>(std::ceil(a.input_tokens / block_tokens));
    const unsigned long long root = static_cast<unsigned long long>(pick(rng, 4));
    const auto shared = static_cast<size_t>(pick(rng, static_cast<long long>(blocks) + 1));
    a.prefix_block_tokens = block_tokens;
    for (size_t j = 0; j < blocks; ++j) a.prefix_block_ids.push_back(j < shared ? root * 1000 + j : next_own++);
  }
}

// Prefix caching off, in the KV cache, in a small room of its own, or unlimited.
void random_prefix_caching(Rng& rng, ReplicaConfig& c) {
  const int mode = static_cast<int>(pick(rng, 4));
  c.prefix_caching = mode == 0 ? PrefixCaching::off : mode == 1 ? PrefixCaching::in_kv : PrefixCaching::own_room;
  c.prefix_room_tokens = mode == 2 ? static_cast<double>(pick(rng, 200)) : std::numeric_limits<double>::infinity();
}

// 30-89 requests of 1-100 prompt and 1-80 output tokens, gaps exponential around mean_gap_s, a
// burst_share of them at the instant of the one before.
std::vector<Arrival> random_requests(Rng& rng, double mean_gap_s, double burst_share) {
  std::vector<Arrival> list;
  double t = 0;
  const int requests = 30 + static_cast<int>(pick(rng, 60));
  for (int i = 0; i < requests; ++i) {
    t += burst_share > 0 && rng.uniform() < burst_share ? 0 : rng.exponential(mean_gap_s);
    list.push_back({t, 1.0 + static_cast<double>(pick(rng, 100)), 1.0 + static_cast<double>(pick(rng, 80))});
  }
  return list;
}

// One of the four schedulers by seed, a KV cache of 20 to 20 + extra_blocks blocks of 4 tokens,
// 1-8 sequences, a 64-token budget and context.
ReplicaConfig random_small_replica(Rng& rng, uint64_t seed, long long extra_blocks) {
  const LlmScheduler schedulers[] = {LlmScheduler::vllm_v0, LlmScheduler::vllm_v1, LlmScheduler::sarathi, LlmScheduler::orca};
  ReplicaConfig c = llm_replica(schedulers[seed % 4], 20 + pick(rng, extra_blocks), 4, 1 + static_cast<int>(pick(rng, 8)), 64);
  c.max_sequence_tokens = 64;
  return c;
}

// Up to three replicas that start after a random delay (half that on a warm node), under a
// scaler that asks for 0-3 of them at random at every scrape.
ScalingOptions random_scaler(Rng& rng, uint64_t seed) {
  ScalingOptions scaling;
  scaling.interval_s = 0.05 + rng.uniform() * 0.2;
  scaling.max_replicas = 3;
  scaling.initial_replicas = static_cast<int>(pick(rng, 3));
  scaling.start_s = rng.uniform() * 0.5;
  scaling.warm_start_s = scaling.start_s / 2;
  scaling.warm_pool = static_cast<int>(pick(rng, 2));
  auto decisions = std::make_shared<Rng>(seed * 7919);
  scaling.decide = [decisions](const ScaleObservation&) { return static_cast<int>(pick(*decisions, 4)); };
  return scaling;
}

// Two prompts of 4 tokens wanting 4 tokens each in 10 one-token blocks, traced by hand as
// vLLM v0 runs them: A prefills, then B (prompts before decodes; 8 blocks); decode 1 takes 2
// blocks (10); decode 2 needs 2 more, so the later arrival B (5 tokens of KV, 2 generated) is
// preempted; A decodes to its end (7 blocks) and frees them; B prefills 4 + 2 tokens again,
// emits its 3rd token, decodes its 4th.
TEST(LlmScheduling, VllmV0PreemptsTheLatestArrivalAndKeepsItsTokens) {
  ListArrivals arrivals({{0, 4, 4}, {0, 4, 4}});
  ReplicaConfig c = llm_replica(LlmScheduler::vllm_v0, 10, 1, 2, 4096);
  auto r = simulate(arrivals, {c}, checked_sim_options());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r.value().requests, 2);
  EXPECT_EQ(r.value().preemptions, 1);
  EXPECT_EQ(r.value().recomputed_tokens, 5);
  EXPECT_EQ(r.value().replicas[0].steps, 7);  // prefill x2, decode x3, prefill, decode
  EXPECT_EQ(r.value().rejected, 0);
}

// Under swap the same victim's KV goes to host and comes back once A is done: no recompute.
TEST(LlmScheduling, SwapMovesTheVictimsKvInsteadOfRecomputingIt) {
  ListArrivals arrivals({{0, 4, 4}, {0, 4, 4}});
  ReplicaConfig c = llm_replica(LlmScheduler::vllm_v0, 10, 1, 2, 4096);
  c.preemption = Preemption::swap;
  auto r = simulate(arrivals, {c}, checked_sim_options());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r.value().requests, 2);
  EXPECT_EQ(r.value().preemptions, 1);
  EXPECT_EQ(r.value().recomputed_tokens, 0);
  EXPECT_EQ(r.value().swapped_tokens, 5);
  EXPECT_EQ(r.value().replicas[0].steps, 7);  // prefill x2, decode x3, decode x2 (B swapped in)
}

// A request that can never fit is rejected, once, and counted; the rest complete.
TEST(LlmScheduling, APromptLargerThanTheCacheIsRejectedOnce) {
  for (LlmScheduler s : {LlmScheduler::vllm_v0, LlmScheduler::vllm_v1, LlmScheduler::sarathi, LlmScheduler::orca}) {
    ListArrivals arrivals({{0, 500, 3}, {0.001, 10, 3}});
    ReplicaConfig c = llm_replica(s, 40, 4, 8, 64);
    c.max_sequence_tokens = 16;
    auto r = simulate(arrivals, {c}, checked_sim_options());
    ASSERT_TRUE(r.ok()) << llm_scheduler_name(s) << ": " << r.error().to_string();
    EXPECT_EQ(r.value().rejected, 1) << llm_scheduler_name(s);
    EXPECT_EQ(r.value().requests, 1) << llm_scheduler_name(s);
  }
}

// Random traces x schedulers x preemption modes x tiny caches that force preemption storms:
// every invariant holds after every event, and every request completes or is rejected once.
TEST(LlmScheduling, InvariantsHoldUnderPreemptionStormsAcrossSeeds) {
  const LlmScheduler schedulers[] = {LlmScheduler::vllm_v0, LlmScheduler::vllm_v1, LlmScheduler::sarathi,
                                     LlmScheduler::orca};
  long long preemptions = 0, swapped = 0, runs = 0;
  double saved_prefill = 0;
  long long disaggregated_runs = 0, transfers = 0, pipelined_runs = 0, pulled_runs = 0, pulled_pipeline_runs = 0;
  long long windowed_runs = 0;
  for (uint64_t seed = 1; seed <= 4000; ++seed) {
    Rng rng(seed);
    const LlmScheduler scheduler = schedulers[seed % 4];
    const int block = std::array{1, 4, 16}[static_cast<size_t>(pick(rng, 3))];
    const int requests = 10 + static_cast<int>(pick(rng, 40));
    std::vector<Arrival> list;
    double t = 0;
    for (int i = 0; i < requests; ++i) {
      t += rng.uniform() < 0.3 ? 0 : rng.exponential(0.02);  // bursts: several at one instant
      list.push_back({t, 1.0 + static_cast<double>(pick(rng, 120)), 1.0 + static_cast<double>(pick(rng, 90))});
    }
    // From a cache that holds one long request to one that holds a few.
    long long blocks = static_cast<long long>((40 + pick(rng, 400)) / block) + 1;
    ReplicaConfig c = llm_replica(scheduler, blocks, block, 1 + static_cast<int>(pick(rng, 16)),
                                  16 + static_cast<int>(pick(rng, 200)));
    c.max_sequence_tokens = 64 + static_cast<double>(pick(rng, 200));
    c.watermark_fraction = rng.uniform() < 0.5 ? 0 : 0.05;
    if ((scheduler == LlmScheduler::vllm_v0 || scheduler == LlmScheduler::sarathi) && rng.uniform() < 0.5)
      c.preemption = Preemption::swap;
    if (seed % 7 == 3) {
      // Sliding-window layers in groups of their own, blocks counted per group: every layer
      // sliding (Mistral), half (gpt-oss), most (Gemma 3); windows the sequences pass.
      c.kv_groups.full_groups = static_cast<int>(pick(rng, 3));
      c.kv_groups.sliding_groups = 1 + static_cast<int>(pick(rng, 5));
      c.kv_groups.layers_per_group = 1;
      c.kv_groups.window_blocks = 1 + pick(rng, 6);
      c.kv_blocks *= c.kv_groups.groups();
      ++windowed_runs;
    }
    // Prompts that share prefixes, cached in one of four ways.
    if (seed % 3 != 0) {
      add_random_chains(rng, list, block * static_cast<int>(1 + pick(rng, 3)));
      random_prefix_caching(rng, c);
    }
    std::vector<ReplicaConfig> configs{c};
    if (seed % 5 == 0) configs.push_back(c);  // two replicas behind the router
    if (seed % 13 == 0 && seed % 11 != 0) {
      // A replica of two or three pipeline stages, its lanes on one pool of blocks or on shares.
      c.pipeline_lanes = 2 + static_cast<int>(seed % 2);
      c.lanes_share_kv = seed % 4 != 0;
      configs.assign(static_cast<size_t>(c.pipeline_lanes), c);
      ++pipelined_runs;
    }
    if (seed % 11 == 0) {
      // Disaggregated: prompts on one or two prefill replicas, their KV over a link to one or two
      // decode replicas (which may preempt and recompute it all).
      // Half of them pull the KV between the decode replicas' steps (kv_pull.cc), a third of
      // those onto a decode replica of two pipeline stages.
      const bool pulled = seed % 4 < 2;
      ReplicaConfig prefill = c, decode = c;
      prefill.role = ReplicaRole::prefill;
      decode.role = ReplicaRole::decode;
      for (ReplicaConfig* r : {&prefill, &decode}) {
        r->kv_bytes_per_token_replica = 1e5;
        r->kv_link_bytes_per_s = 1e8 * (1 + static_cast<double>(pick(rng, 100)));
        r->layers = 4;
        r->kv_pulled_between_steps = pulled;
        r->kv_pull_call_s = pulled ? 5e-4 : 0;
      }
      configs = {prefill, decode};
      if (seed % 2) configs.push_back(prefill);
      if (seed % 3) configs.push_back(decode);
      if (pulled && seed % 3 == 0) {
        decode.pipeline_lanes = 2;
        decode.lanes_share_kv = true;
        configs = {prefill, decode, decode};
        ++pulled_pipeline_runs;
      }
      ++disaggregated_runs;
      pulled_runs += pulled;
    }
    ListArrivals arrivals(list);
    SimOptions options = checked_sim_options();
    options.router = seed % 7 == 0 ? Router::prefix_affinity : seed % 2 ? Router::least_tokens : Router::round_robin;
    auto r = simulate(arrivals, configs, options);
    ASSERT_TRUE(r.ok()) << fmt::format("seed {} {} block {} kv {}: ", seed, llm_scheduler_name(scheduler), block, blocks)
                        << r.error().to_string();
    ASSERT_EQ(r.value().requests + r.value().rejected, requests) << seed;
    for (const auto& s : r.value().timeseries) {
      ASSERT_GE(s.kv_used_fraction, 0) << seed;
      ASSERT_LE(s.kv_used_fraction, 1) << seed;
    }
    preemptions += r.value().preemptions;
    swapped += r.value().swapped_tokens;
    saved_prefill += r.value().prefix_cache.saved_prefill_tokens;
    transfers += r.value().kv_transfers;
    ++runs;
  }
  EXPECT_GT(saved_prefill, 0) << "prefix caching was exercised";
  EXPECT_GT(disaggregated_runs, 300);
  EXPECT_GT(pulled_runs, 150);
  EXPECT_GT(pulled_pipeline_runs, 40);
  EXPECT_GT(pipelined_runs, 200);
  EXPECT_GT(windowed_runs, 500);
  EXPECT_GT(transfers, 5000) << "prompts' KV went from prefill to decode replicas";
  // The storms happened: most runs preempted, swap was exercised.
  EXPECT_GT(preemptions, runs);
  EXPECT_GT(swapped, 0);
}

// Replicas that start, drain and stop under a scaler that changes its mind at random, with LLM
// requests in flight and preemptions: the same invariants hold and every request ends once.
TEST(LlmScheduling, InvariantsHoldWhileAutoscalingDrainsAndStartsReplicas) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Rng rng(seed);
    std::vector<Arrival> list = random_requests(rng, 0.05, 0);
    const long long requests = static_cast<long long>(list.size());
    ReplicaConfig c = random_small_replica(rng, seed, 40);
    add_random_chains(rng, list, 4);  // replicas that stop forget their caches
    random_prefix_caching(rng, c);
    SimOptions options = checked_sim_options();
    options.router = seed % 2 ? Router::least_tokens : Router::prefix_affinity;
    options.scaling = random_scaler(rng, seed);
    ListArrivals arrivals(list);
    auto r = simulate(arrivals, {c}, options);
    ASSERT_TRUE(r.ok()) << fmt::format("seed {}: ", seed) << r.error().to_string();
    ASSERT_EQ(r.value().requests + r.value().rejected, requests) << seed;
  }
}

// Clients that give up while LLM replicas preempt, and while a scaler starts and drains them
// (one seed in four, replicas of two pipeline lanes moved whole): the invariants hold, every request is
// served, rejected or given up exactly once, none is served after its client left, and a
// preempted one (its stream started) is never given up.
TEST(LlmScheduling, InvariantsHoldWhenClientsGiveUp) {
  long long timed_out = 0, served = 0;
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    Rng rng(seed);
    const std::vector<Arrival> list = random_requests(rng, 0.01, 0.3);
    const long long requests = static_cast<long long>(list.size());
    ReplicaConfig c = random_small_replica(rng, seed, 60);
    SimOptions options = checked_sim_options();
    options.router = Router::least_tokens;
    options.client_timeout_s = 0.02 + rng.uniform() * 0.3;
    std::vector<ReplicaConfig> configs{c};
    if (seed % 2) {
      options.scaling = random_scaler(rng, seed);
      if (seed % 4 == 1) {
        // Replicas of two pipeline stages, their lanes on one pool of blocks or on shares.
        options.scaling->lanes_per_replica = 2;
        c.pipeline_lanes = 2;
        c.lanes_share_kv = seed % 8 == 1;
        configs = {c, c};
      }
    } else if (seed % 3 == 0) {
      configs.push_back(c);
    }
    ListArrivals arrivals(list);
    auto r = simulate(arrivals, configs, options);
    ASSERT_TRUE(r.ok()) << fmt::format("seed {}: ", seed) << r.error().to_string();
    ASSERT_EQ(r.value().requests + r.value().rejected + r.value().timed_out, requests) << seed;
    if (r.value().wait.count() > 0) {
      ASSERT_LT(r.value().wait.max(), options.client_timeout_s) << seed;
    }
    timed_out += r.value().timed_out;
    served += r.value().requests;
  }
  // Both happened, often.
  EXPECT_GT(timed_out, 1000);
  EXPECT_GT(served, 1000);
}

// The spec that exposed stale decode-heap entries: Llama-2-70B, one tp2 replica on A100-80GB,
// max batch 128, no chunked prefill, the Azure conversation trace (19,366 requests).
TEST(LlmScheduling, AzureConversationOnLlama2_70bWithoutChunkedPrefillKeepsKvInBounds) {
  Catalog catalog = Catalog::embedded().value();
  ModelSpec model;
  model.arch = load_preset("llama-2-70b").value();
  ServiceSpec service;
  Deployment d;
  d.groups = {{"A100-80GB", 2, 1}};
  d.batching = "continuous";
  d.max_batch = 128;
  d.chunked_prefill = false;
  d.token_budget = 4096;
  auto replicas = build_replicas(catalog, model, service, d, {});
  ASSERT_TRUE(replicas.ok()) << replicas.error().to_string();
  EXPECT_EQ(replicas.value()[0].scheduler, LlmScheduler::vllm_v0);
  ArrivalOptions arrivals;
  arrivals.process = "trace";
  arrivals.trace_path = std::string(GPUWISE_SOURCE_DIR) + "/examples/traces/azure-llm-2023-conv.csv";
  arrivals.trace_format = TraceFormat::azure;
  Rng rng(1);
  auto process = make_arrivals(arrivals, service, rng);
  SimOptions options;
  options.max_requests = 1LL << 40;
  options.timeseries_points = 2000;
  auto r = simulate(*process, replicas.value(), options);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const SimResult& result = r.value();
  EXPECT_EQ(result.requests + result.rejected, 19366);
  EXPECT_FALSE(result.stopped_at_request_limit);
  for (const auto& s : result.timeseries) {
    ASSERT_GE(s.kv_used_fraction, 0) << s.time_s;
    ASSERT_LE(s.kv_used_fraction, 1) << s.time_s;
  }
  // Completions cannot outrun the one replica's decode rate: the run lasts past the trace's hour.
  EXPECT_GT(result.preemptions, 0);
  EXPECT_LE(result.throughput_rps, result.arrival_rate_rps * 1.05);
}

// A replica of two pipeline stages is two micro-batch lanes (vLLM V0's virtual engines), each
// with the whole model's step and half the replica's KV blocks; a stage holds half the layers'
// KV, so the lanes together hold what two tensor-parallel devices hold (OPT-13B, 40 layers, on
// A100-80GB: the same weights per device either way).
TEST(LlmScheduling, PipelineStagesAreLanesSharingTheReplicasKvBlocks) {
  Catalog catalog = Catalog::embedded().value();
  ModelSpec model;
  model.arch = load_preset("opt-13b").value();
  model.precision = Precision::fp16;
  ServiceSpec service;
  Deployment d;
  d.groups = {{"A100-80GB", 1, 2, "both", 2}};
  d.batching = "continuous";
  auto lanes = build_replicas(catalog, model, service, d, {});
  ASSERT_TRUE(lanes.ok()) << lanes.error().to_string();
  ASSERT_EQ(lanes.value().size(), 4u);  // two replicas of two lanes
  EXPECT_EQ(lanes.value()[1].name, "A100-80GB tp1 pp2 #1 lane 2/2");
  EXPECT_EQ(lanes.value()[2].name, "A100-80GB tp1 pp2 #2 lane 1/2");
  EXPECT_EQ(lanes.value()[2].pipeline_lanes, 2);
  // One pool for the lanes unless the engine is vLLM V0 (its virtual engines split the blocks).
  EXPECT_TRUE(lanes.value()[0].lanes_share_kv);
  d.scheduler = "vllm-v0";
  auto v0 = build_replicas(catalog, model, service, d, {});
  ASSERT_TRUE(v0.ok());
  EXPECT_FALSE(v0.value()[0].lanes_share_kv);
  d.pipeline_kv = "shared";
  EXPECT_TRUE(build_replicas(catalog, model, service, d, {}).value()[0].lanes_share_kv);
  d.scheduler.clear();
  d.pipeline_kv = "per-micro-batch";
  EXPECT_FALSE(build_replicas(catalog, model, service, d, {}).value()[0].lanes_share_kv);
  d.pipeline_kv.clear();
  d.groups = {{"A100-80GB", 2, 1}};
  auto tp2 = build_replicas(catalog, model, service, d, {});
  ASSERT_TRUE(tp2.ok()) << tp2.error().to_string();
  EXPECT_NEAR(2.0 * lanes.value()[0].kv_blocks, tp2.value()[0].kv_blocks, 0.02 * tp2.value()[0].kv_blocks);
  d.groups = {{"A100-80GB", 1, 1}};
  auto one = build_replicas(catalog, model, service, d, {});
  ASSERT_TRUE(one.ok()) << one.error().to_string();
  // Two devices hold the weights once: more than twice one device's cache.
  EXPECT_GT(2 * lanes.value()[0].kv_blocks, 2 * one.value()[0].kv_blocks);
  // A lane's step is the whole model's at its batch.
  EXPECT_DOUBLE_EQ(lanes.value()[0].llm->step_time_s(8, 1000, 0, 0, 8), one.value()[0].llm->step_time_s(8, 1000, 0, 0, 8));
  // Under load the lanes serve twice the sequences at once: with a batch of 8 per lane and 64
  // requests arriving together, a pp2 replica ends sooner than a tp1 one.
  std::vector<Arrival> list(64, Arrival(0, 500, 100));
  ListArrivals pipelined(list), single(list);
  d.max_batch = 8;
  d.groups = {{"A100-80GB", 1, 1, "both", 2}};
  auto pp_replica = build_replicas(catalog, model, service, d, {});
  d.groups = {{"A100-80GB", 1, 1}};
  auto tp1_replica = build_replicas(catalog, model, service, d, {});
  ASSERT_TRUE(pp_replica.ok() && tp1_replica.ok());
  auto a = simulate(pipelined, pp_replica.value(), checked_sim_options());
  auto b = simulate(single, tp1_replica.value(), checked_sim_options());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value().requests, 64);
  EXPECT_LT(a.value().latency.max(), 0.6 * b.value().latency.max());
}

// A stage runs one micro-batch at a time, so the lanes of a replica step at the pace of the
// larger batch: lane 1 decodes one request while lane 2 decodes sixteen, and lane 1's request
// waits at each stage for lane 2's micro-batch, taking lane 2's step (10 ms + 16 x 0.1 ms)
// per token rather than its own (10.1 ms). Round robin: lane 1 gets the even arrivals, whose
// others end with their prompt.
TEST(LlmScheduling, PipelineLanesStepAtTheLargerMicroBatchsPace) {
  std::vector<Arrival> list;
  for (int i = 0; i < 32; ++i) list.emplace_back(0, 10, i % 2 == 1 || i == 0 ? 101 : 1);
  ReplicaConfig lane = llm_replica(LlmScheduler::vllm_v1, 1000, 16, 64, 2048);
  lane.pipeline_lanes = 2;
  ListArrivals arrivals(list);
  auto r = simulate(arrivals, {lane, lane}, checked_sim_options());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const double lane2_step_s = 0.010 + 16 * 1e-4;
  EXPECT_NEAR(r.value().tpot.quantile(0), lane2_step_s, 0.01 * lane2_step_s);
  EXPECT_NEAR(r.value().tpot.max(), lane2_step_s, 0.01 * lane2_step_s);
  // Lane 1 waits ~1.5 ms of each ~11.6 ms step for a stage lane 2 holds; the report counts it.
  const ReplicaStats& lane1 = r.value().replicas[0];
  EXPECT_EQ(lane1.pipeline_lanes, 2);
  EXPECT_GT(lane1.stage_wait_s, 0.1 * lane1.busy_s);
  EXPECT_LT(lane1.stage_wait_s, 0.2 * lane1.busy_s);
  EXPECT_LT(r.value().replicas[1].stage_wait_s, lane1.stage_wait_s);
  // Lanes of one stage each (separate replicas) step at their own pace.
  lane.pipeline_lanes = 1;
  ListArrivals apart(list);
  auto own = simulate(apart, {lane, lane}, checked_sim_options());
  ASSERT_TRUE(own.ok());
  EXPECT_NEAR(own.value().tpot.quantile(0), 0.010 + 1e-4, 0.01 * 0.0101);
}

// The lanes' KV: each its own share (vLLM V0's virtual engines) or one pool. A prompt of 2,000
// tokens needs 126 blocks of 16: more than a lane's 100, within the pool's 200.
TEST(LlmScheduling, PipelineLanesSharingTheirKvPoolHoldMoreThanAShare) {
  std::vector<Arrival> list = {{0, 2000, 10}, {0, 100, 10}};
  ReplicaConfig lane = llm_replica(LlmScheduler::vllm_v0, 100, 16, 64, 4096);
  lane.pipeline_lanes = 2;
  ListArrivals split_arrivals(list);
  auto split = simulate(split_arrivals, {lane, lane}, checked_sim_options());
  ASSERT_TRUE(split.ok()) << split.error().to_string();
  EXPECT_EQ(split.value().rejected, 1);
  lane.lanes_share_kv = true;
  ListArrivals shared_arrivals(list);
  auto shared = simulate(shared_arrivals, {lane, lane}, checked_sim_options());
  ASSERT_TRUE(shared.ok()) << shared.error().to_string();
  EXPECT_EQ(shared.value().rejected, 0);
  EXPECT_EQ(shared.value().requests, 2);
}

// Prefix caching traced by hand: A (1,024 tokens, blocks 1 and 2 of 512) completes; B (1,500
// tokens, blocks 1, 2, 3) arrives later and finds blocks 1 and 2 cached: 1,024 of its tokens are
// not computed (its third block is partial, so nothing caps the hit). C (1,024 tokens, blocks 1
// and 2 again) may hit one block only: its last token must be computed.
TEST(LlmScheduling, PrefixCachingSkipsTheCachedBlocksOfAPrompt) {
  auto run = [](PrefixCaching caching) {
    std::vector<Arrival> list = {{0, 1024, 2}, {10, 1500, 2}, {20, 1024, 2}};
    list[0].prefix_block_ids = {1, 2};
    list[1].prefix_block_ids = {1, 2, 3};
    list[2].prefix_block_ids = {1, 2};
    for (auto& a : list) a.prefix_block_tokens = 512;
    ListArrivals arrivals(list);
    ReplicaConfig c = llm_replica(LlmScheduler::vllm_v1, 1000, 16, 8, 4096);
    c.prefix_caching = caching;
    auto r = simulate(arrivals, {c}, checked_sim_options());
    EXPECT_TRUE(r.ok()) << r.error().to_string();
    return r.value();
  };
  const SimResult on = run(PrefixCaching::in_kv), off = run(PrefixCaching::off);
  EXPECT_TRUE(on.prefix_cache.on);
  EXPECT_DOUBLE_EQ(on.prefix_cache.saved_prefill_tokens, 1024 + 512);
  EXPECT_DOUBLE_EQ(on.prefix_cache.hit_ratio_tokens, 1536.0 / (1024 + 1500 + 1024));
  EXPECT_DOUBLE_EQ(on.prefix_cache.hit_ratio_requests, 2.0 / 3);
  EXPECT_FALSE(off.prefix_cache.on);
  EXPECT_DOUBLE_EQ(off.prefix_cache.saved_prefill_tokens, 0);
  // The first token comes sooner by the prefill tokens not computed: 2e-5 s each in the linear timer.
  EXPECT_NEAR(off.ttft.mean() - on.ttft.mean(), 1536 * 2e-5 / 3, 0.02 * off.ttft.mean());
  EXPECT_EQ(on.requests, 3);
}

// Conversations from a spec's traffic.prefix: each turn carries the system prompt and the turns
// before; its chain names the system prompt's run alike for all, then this conversation's runs,
// so a turn finds the earlier turns' prompts and answers cached: 496 + 1,856 + 3,216 of 1,650 +
// 3,010 + 4,370 tokens (61.7%) over a conversation of three turns.
TEST(LlmScheduling, ConversationsFindTheirEarlierTurnsCached) {
  ServiceSpec service;
  service.input_tokens.sample = {1150};
  service.output_tokens.sample = {210};
  service.traffic.prefix.system_prompt_tokens = 500;
  service.traffic.prefix.turns = 3;
  service.traffic.prefix.think_time_s = 0;  // each conversation takes the next arrivals
  Rng rng(3);
  ArrivalOptions options;
  options.rate_rps = 0.0005;  // one at a time: every turn has finished (2 s) before the next
  auto process = make_arrivals(options, service, rng);
  std::vector<Arrival> turns;
  for (int i = 0; i < 4; ++i) turns.push_back(*process->next());
  EXPECT_EQ(turns[0].input_tokens, 1650);
  EXPECT_EQ(turns[2].input_tokens, 4370);
  // Runs: the system prompt, then each turn's prompt and prompt with answer (1,650 + 210).
  EXPECT_EQ(turns[0].prefix_block_ends, (std::vector<double>{496, 1648, 1856}));
  EXPECT_EQ(turns[1].prefix_block_ends, (std::vector<double>{496, 1648, 1856, 3008, 3216}));
  EXPECT_EQ(turns[2].prefix_block_ends, (std::vector<double>{496, 1648, 1856, 3008, 3216, 4368, 4576}));
  EXPECT_EQ(turns[1].prefix_block_ids[2], turns[0].prefix_block_ids[2]);
  EXPECT_EQ(turns[2].prefix_block_ids[4], turns[1].prefix_block_ids[4]);
  EXPECT_EQ(turns[3].prefix_block_ids[0], turns[0].prefix_block_ids[0]) << "the system prompt is everyone's";
  EXPECT_NE(turns[3].prefix_block_ids[1], turns[0].prefix_block_ids[1]) << "a new conversation";

  Rng sim_rng(3);
  auto arrivals = make_arrivals(options, service, sim_rng);
  ReplicaConfig c = llm_replica(LlmScheduler::vllm_v1, 4000, 16, 8, 2048);
  SimOptions o = checked_sim_options();
  o.max_requests = 300;  // 100 conversations
  auto r = simulate(*arrivals, {c}, o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  // A turn finds the one before, its answer included: 496, 1,856 and 3,216 tokens. Every turn as
  // traced, except the very first request: it finds nothing cached, not even the system prompt.
  EXPECT_NEAR(r.value().prefix_cache.hit_ratio_tokens, (100 * (496.0 + 1856 + 3216) - 496) / (100 * (1650 + 3010 + 4370)), 1e-12);
  EXPECT_DOUBLE_EQ(r.value().prefix_cache.hit_ratio_requests, 299.0 / 300);
}

// One prefill and one decode replica (1e5 B of KV per token, 4 layers) over a link of this rate.
std::vector<ReplicaConfig> prefill_and_decode(LlmScheduler scheduler, double link_bytes_per_s) {
  ReplicaConfig c = llm_replica(scheduler, 1000, 16, 8, 4096);
  c.kv_bytes_per_token_replica = 1e5;
  c.kv_link_bytes_per_s = link_bytes_per_s;
  c.layers = 4;
  ReplicaConfig prefill = c, decode = c;
  prefill.role = ReplicaRole::prefill;
  decode.role = ReplicaRole::decode;
  return {prefill, decode};
}

// Disaggregated serving traced by hand: one prefill and one decode replica, a link of 1e8 B/s,
// 1e5 B of KV per token. A's 1,000-token prompt is computed on the prefill replica in one step
// (0.010 + 1,000 x 2e-5 = 0.030 s; first token then); its 1e8 bytes take 1 s on the link, which
// starts with the prefill: the KV reaches the decode replica at 1.0 s (0.97 s after the prefill
// ends); there it joins the decodes: 4 decode steps compute the second to fifth tokens.
TEST(LlmScheduling, DisaggregatedPromptsSendTheirKvToADecodeReplica) {
  ListArrivals arrivals({{0, 1000, 5}});
  auto r = simulate(arrivals, prefill_and_decode(LlmScheduler::vllm_v1, 1e8), checked_sim_options());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const SimResult& out = r.value();
  EXPECT_EQ(out.requests, 1);
  EXPECT_EQ(out.kv_transfers, 1);
  EXPECT_DOUBLE_EQ(out.kv_transfer_bytes, 1e8);
  EXPECT_NEAR(out.ttft.mean(), 0.030, 0.0005);
  EXPECT_NEAR(out.kv_transfer_wait.mean(), 0.970, 0.01);
  // At the decode replica: 4 decode steps of 0.0101 s each.
  EXPECT_NEAR(out.latency.mean(), 1.0 + 4 * 0.0101, 0.0005);
  EXPECT_EQ(out.replicas[0].requests, 1);  // the prompt computed
  EXPECT_EQ(out.replicas[1].requests, 1);  // the request completed
  EXPECT_EQ(out.replicas[0].steps, 1);
  EXPECT_EQ(out.replicas[1].steps, 4);
}

// A request whose KV arrives while others decode joins their next step: under vLLM v0's
// prompts-first scheduler as under any other, the decode replica runs no prompt step for it (one
// would stop every decode once per request). A (1,000-token prompt, 20 tokens) reaches the decode
// replica at 0.030 s and decodes 19 steps; B (100 tokens, 5), prefilled while A decodes, joins
// A's steps: the decode replica runs 19 steps in all, and A's tokens come one step apart.
TEST(LlmScheduling, ArrivedKvJoinsTheRunningDecodesWithoutAPromptStep) {
  ListArrivals arrivals({{0, 1000, 20}, {0.05, 100, 5}});
  // The transfers take no time: only the steps count.
  auto r = simulate(arrivals, prefill_and_decode(LlmScheduler::vllm_v0, 1e15), checked_sim_options());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const SimResult& out = r.value();
  EXPECT_EQ(out.requests, 2);
  EXPECT_EQ(out.replicas[0].steps, 2);   // the two prompts
  EXPECT_EQ(out.replicas[1].steps, 19);  // A's decodes, B's 4 among them
  // A: its prompt (0.030 s), then 19 decode steps of at most 0.0103 s (two sequences).
  EXPECT_LT(out.latency.max(), 0.030 + 19 * 0.0103);
}

// A decode replica lost with requests queued on it whose KV had arrived: the prefill replica
// still holds their KV and sends it to the other decode replica, where they join the decodes
// (never to a prefill replica, which would compute them again). Two decode replicas of two
// sequences each, 60 requests in the first second: the lost one has a queue at 1 s.
TEST(LlmScheduling, ALostDecodeReplicasQueuedKvGoesToAnotherDecodeReplica) {
  std::vector<Arrival> list;
  for (int i = 0; i < 60; ++i) list.push_back({i / 60.0, 200, 50});
  ListArrivals arrivals(list);
  std::vector<ReplicaConfig> configs = prefill_and_decode(LlmScheduler::vllm_v0, 1e15);
  configs[1].max_batch = 2;
  configs.push_back(configs[1]);
  SimOptions o = checked_sim_options();
  o.outages = {{1.0, {1}, 30}};
  auto r = simulate(arrivals, configs, o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const SimResult& out = r.value();
  EXPECT_EQ(out.requests, 60);
  ASSERT_EQ(out.outages.size(), 1u);
  EXPECT_GT(out.outages[0].rerouted, 0);
  EXPECT_EQ(out.kv_transfers, 60) << "each prompt computed and sent once";
  EXPECT_EQ(out.replicas[0].requests, 60) << "no prompt computed twice";
}

}  // namespace
}  // namespace gw
