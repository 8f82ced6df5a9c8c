// The training time model: data-parallel volumes per ZeRO stage against hand-computed cases,
// the node's NICs carrying every shard's ring, NVLink collectives against measured NCCL times,
// sensitivity to the network, FP8, and spot preemptions scaling with the node count.
#include "plan/training.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/csv.h"
#include "core/text.h"
#include "model/presets.h"
#include "plan/training_plan.h"

namespace gw {
namespace {

const Catalog& training_catalog() {
  static Catalog c = Catalog::embedded().value();
  return c;
}

ModelArch model(const std::string& name) { return resolve_model(name).value(); }

TrainingHardware cluster(const std::string& accelerator, int count, double gbps, const std::string& fabric) {
  TrainingHardware hw;
  hw.accelerator = training_catalog().find_accelerator(accelerator);
  hw.count = count;
  hw.devices_per_node = 8;
  hw.node_network_gbps = gbps;
  hw.fabric = fabric;
  return hw;
}

TrainingJob job_of(const ModelArch& arch, double tokens, long long sequence, double batch_sequences) {
  TrainingJob job;
  job.arch = &arch;
  job.tokens = tokens;
  job.sequence_length = sequence;
  job.global_batch_tokens = batch_sequences * static_cast<double>(sequence);
  return job;
}

TEST(DataParallelVolume, ZeroStagesMoveTheHandComputedBytes) {
  // 1 GB of gradients per rank over a ring of 4: (n-1)/n = 0.75.
  EXPECT_DOUBLE_EQ(data_parallel_bytes_per_rank(1e9, 4, 0, 8), 1.5e9);   // all-reduce: 2 x 0.75
  EXPECT_DOUBLE_EQ(data_parallel_bytes_per_rank(1e9, 4, 1, 8), 1.5e9);   // reduce-scatter + all-gather
  EXPECT_DOUBLE_EQ(data_parallel_bytes_per_rank(1e9, 4, 2, 8), 1.5e9);
  EXPECT_DOUBLE_EQ(data_parallel_bytes_per_rank(1e9, 4, 3, 8), 18e9);    // 3 x 0.75 per micro-batch, 8 of them
  EXPECT_DOUBLE_EQ(data_parallel_bytes_per_rank(1e9, 4, 3, 1), 2.25e9);
  EXPECT_DOUBLE_EQ(data_parallel_bytes_per_rank(1e9, 1, 0, 8), 0.0);     // no data parallelism, no traffic
  EXPECT_DOUBLE_EQ(data_parallel_bytes_per_rank(1e9, 2, 0, 1), 1e9);
}

TEST(DataParallelVolume, EveryShardOfANodeRunsItsRingThroughTheNodesNics) {
  // GPT-3 175B, tp8 inside each node, pp4 across nodes, dp12: a node holds one pipeline stage's
  // eight tensor shards, so it sends the stage's whole gradient, 175B/4 x 2 B x 2 x 11/12.
  ModelArch arch = model("gpt3-175b");
  TrainingJob job = job_of(arch, 1e9, 2048, 1536);
  TrainingHardware hw = cluster("A100-80GB", 384, 400, "efa");
  TrainingLayout layout{8, 4, 12, 1, Recompute::full, 1, 1};
  TrainingEstimate e = estimate_training_layout(job, hw, layout, nullptr, 1.0);
  ASSERT_TRUE(e.feasible) << e.reason;
  double params = count_params(arch).total();
  EXPECT_NEAR(e.dp_node_bytes, params / 4 * 2 * 2 * 11.0 / 12, 1e-9 * e.dp_node_bytes);
  EXPECT_NEAR(e.dp_rank_bytes, params / 32 * 2 * 2 * 11.0 / 12, 1e-9 * e.dp_rank_bytes);
  EXPECT_EQ(e.nodes, 48);

  // tp2 and four data-parallel ranks in each node (16 devices, two nodes): reduced inside the node
  // first, then each node sends its two shards' worth, i.e. the whole model's gradient, once.
  ModelArch small = model("llama-2-7b");
  job = job_of(small, 1e9, 4096, 64);
  TrainingHardware two = cluster("A100-80GB", 16, 400, "efa");
  TrainingEstimate f = estimate_training_layout(job, two, TrainingLayout{2, 1, 8, 1, Recompute::selective, 1, 1}, nullptr, 1.0);
  ASSERT_TRUE(f.feasible) << f.reason;
  EXPECT_NEAR(f.dp_node_bytes, count_params(small).total() * 2 * 2 * 0.5, 1e-9 * f.dp_node_bytes);

  // Inside one node nothing crosses the network.
  TrainingHardware one = cluster("A100-80GB", 8, 400, "efa");
  TrainingEstimate g = estimate_training_layout(job, one, TrainingLayout{2, 1, 4, 1, Recompute::selective, 1, 1}, nullptr, 1.0);
  ASSERT_TRUE(g.feasible) << g.reason;
  EXPECT_EQ(g.dp_node_bytes, 0.0);
  EXPECT_GT(g.dp_comm_s, 0.0);
}

// NCCL all-reduce times measured on one DGX A100 and one DGX H100 (Vidur 7d47513), 2-8 GPUs,
// 1-64 MiB: the NVLink collective model's median error stays within 10%, worst within 70%
// (the small-message end, where NCCL switches protocols).
TEST(NvlinkCollectives, MatchMeasuredNcclAllReduceTimes) {
  for (const auto& [file, accelerator] : {std::pair<std::string, std::string>{"a100_dgx", "A100-80GB"}, {"h100_dgx", "H100"}}) {
    std::string path = std::string(GPUWISE_SOURCE_DIR) + "/bench/profiles/vidur-7d47513/network/" + file + "/all_reduce.csv";
    std::string text, message;
    ASSERT_TRUE(read_file(path, text, message)) << message;
    auto table = parse_csv(text, path);
    ASSERT_TRUE(table.ok());
    const Accelerator* a = training_catalog().find_accelerator(accelerator);
    std::vector<double> errors;
    for (const auto& row : table.value().rows) {
      CsvRecord r(table.value(), row);
      int workers = static_cast<int>(r.number("num_workers", 1, 64));
      if (workers != static_cast<int>(r.number("devices_per_node", 1, 64))) continue;  // one node only
      double bytes = r.number("size", 0, 1e12);
      if (bytes < (1 << 20)) continue;
      double measured_s = r.number("time_stats.all_reduce.median", 0, 1e6) / 1e3;
      double modelled_s = intra_node_collective_s(*a, 2.0 * (workers - 1) / workers * bytes);
      errors.push_back(std::fabs(modelled_s / measured_s - 1));
    }
    ASSERT_GT(errors.size(), 1000u) << file;
    std::sort(errors.begin(), errors.end());
    EXPECT_LT(errors[errors.size() / 2], 0.10) << file;
    EXPECT_LT(errors.back(), 0.70) << file;
  }
}

TrainingJob gpt3_job(const ModelArch& arch) { return job_of(arch, 300e9, 2048, 1536); }

TEST(TrainingSensitivity, AStepSlowsWhenTheNetworkFalls) {
  ModelArch arch = model("gpt3-175b");
  TrainingJob job = gpt3_job(arch);
  TrainingEstimate tcp = estimate_training_run(job, cluster("A100-40GB", 384, 100, ""), nullptr);
  TrainingEstimate efa = estimate_training_run(job, cluster("A100-40GB", 384, 400, "efa"), nullptr);
  TrainingEstimate ib = estimate_training_run(job, cluster("A100-40GB", 384, 3200, "infiniband"), nullptr);
  ASSERT_TRUE(tcp.feasible && efa.feasible && ib.feasible);
  EXPECT_GT(tcp.step_time_s, efa.step_time_s * 1.15);
  EXPECT_GT(efa.step_time_s, ib.step_time_s);
  // The same layout pinned: slower exactly where communication is exposed.
  TrainingEstimate pinned_tcp = estimate_training_layout(job, cluster("A100-40GB", 384, 100, ""), efa.layout, nullptr);
  EXPECT_GT(pinned_tcp.dp_comm_s, 4 * efa.dp_comm_s);  // 100 Gbps at 50% against 400 at 80%: 6.4x
  EXPECT_GT(pinned_tcp.step_time_s, efa.step_time_s);

  // Nodes in different zones: half the bandwidth, never faster.
  TrainingHardware zones = cluster("A100-40GB", 384, 400, "efa");
  zones.cross_zone = true;
  TrainingEstimate cross = estimate_training_layout(job, zones, efa.layout, nullptr);
  EXPECT_GT(cross.step_time_s, efa.step_time_s);
  EXPECT_NEAR(cross.network_bytes_per_s, efa.network_bytes_per_s / 2, 1);
}

TEST(TrainingSensitivity, ZeroThreeStaysOffASlowNetworkWhenPipelinesAreFaster) {
  ModelArch arch = model("gpt3-175b");
  TrainingJob job = gpt3_job(arch);
  TrainingHardware tcp = cluster("A100-40GB", 384, 100, "");
  TrainingEstimate best = estimate_training_run(job, tcp, nullptr);
  ASSERT_TRUE(best.feasible);
  EXPECT_LT(best.layout.zero_stage, 3);
  EXPECT_GT(best.layout.pipeline_parallel, 1);
  job.zero_stage = 3;
  TrainingEstimate zero3 = estimate_training_run(job, tcp, nullptr);
  ASSERT_TRUE(zero3.feasible) << zero3.reason;
  EXPECT_GT(zero3.step_time_s, best.step_time_s);
  EXPECT_FALSE(best.runner_up.empty());
}

TEST(TrainingSensitivity, MoreNodesNeverBeatPerfectScaling) {
  ModelArch arch = model("llama-2-7b");
  TrainingJob job = job_of(arch, 1e12, 4096, 1024);
  for (auto [gbps, fabric] : {std::pair<double, std::string>{100, ""}, {400, "efa"}, {3200, "infiniband"}}) {
    TrainingEstimate one = estimate_training_run(job, cluster("H100", 8, gbps, fabric), nullptr);
    ASSERT_TRUE(one.feasible);
    for (int devices = 16; devices <= 1024; devices *= 2) {
      TrainingEstimate many = estimate_training_run(job, cluster("H100", devices, gbps, fabric), nullptr);
      ASSERT_TRUE(many.feasible) << devices;
      EXPECT_LE(many.tokens_per_s / devices, one.tokens_per_s / 8 * (1 + 1e-9)) << devices << " on " << gbps;
    }
  }
}

TEST(Fp8Training, FasterOnHopperAndRefusedWithoutFp8TensorCores) {
  ModelArch arch = model("llama-2-70b");
  TrainingJob job;
  job.arch = &arch;
  job.tokens = 1e12;
  TrainingEstimate bf16 = estimate_training_run(job, cluster("H100", 64, 3200, "infiniband"), nullptr);
  job.precision = Precision::fp8;
  TrainingEstimate fp8 = estimate_training_run(job, cluster("H100", 64, 3200, "infiniband"), nullptr);
  ASSERT_TRUE(bf16.feasible && fp8.feasible);
  EXPECT_LT(fp8.compute_s, bf16.compute_s * 0.8);  // FP8 GEMMs, bf16 attention
  EXPECT_GT(fp8.compute_s, bf16.compute_s * 0.4);  // never the full 2x: attention and the rest stay bf16
  TrainingEstimate a100 = estimate_training_run(job, cluster("A100-80GB", 64, 1600, "infiniband"), nullptr);
  EXPECT_FALSE(a100.feasible);
  EXPECT_NE(a100.reason.find("no fp8 tensor cores"), std::string::npos) << a100.reason;
}

TEST(TrainingMemory, Fp8KeepsBf16WeightsWithAnFp8Copy) {
  ModelArch arch = model("llama-2-7b");
  TrainingMemoryOptions o;
  o.precision = Precision::bf16;
  MemoryEstimate bf16 = estimate_training(arch, o);
  o.precision = Precision::fp8;
  MemoryEstimate fp8 = estimate_training(arch, o);
  EXPECT_NEAR(fp8.weights_bytes, bf16.weights_bytes * 1.5, 1e-6 * bf16.weights_bytes);
  EXPECT_DOUBLE_EQ(fp8.gradient_bytes, bf16.gradient_bytes);
  double fp8_layer = training_activation_bytes_per_layer(arch, o);
  o.precision = Precision::bf16;
  // Within 0.1%: the fp32 softmax statistics (and the logits) do not shrink.
  EXPECT_NEAR(fp8_layer, training_activation_bytes_per_layer(arch, o) * 0.8, 1e-3 * fp8_layer);
}

TEST(SpotTraining, ASynchronousJobOf128NodesIsInterrupted128TimesAsOften) {
  TrainingCandidate one, many;
  for (TrainingCandidate* c : {&one, &many}) {
    c->pricing = Pricing::spot;
    c->estimate.time_s = 100 * 3600.0;
    c->estimate.checkpoint_bytes = 1e12;
    c->usd_per_hour = 10;
  }
  one.instances = 1;
  many.instances = 128;
  SpotSettings spot;
  spot.preemptions_per_hour = 0.05;
  price_candidate(one, spot);
  price_candidate(many, spot);
  EXPECT_DOUBLE_EQ(one.preemptions_per_hour, 0.05);
  EXPECT_DOUBLE_EQ(many.preemptions_per_hour, 128 * 0.05);
  EXPECT_GT(many.restart_s, one.restart_s - one.checkpoint_s);  // job start grows with the nodes
  EXPECT_GT(many.expected_time_s / many.estimate.time_s, one.expected_time_s / one.estimate.time_s);

  // The Monte Carlo agrees: preemptions per hour of work, 128 nodes against one.
  auto simulated = [](const TrainingCandidate& c) {
    SpotRunInputs in;
    in.work_s = c.estimate.time_s;
    in.checkpoint_s = c.checkpoint_s;
    in.restart_s = c.restart_s;
    in.interval_s = c.checkpoint_interval_s;
    in.preemptions_per_hour = c.preemptions_per_hour;
    in.spot_usd_per_hour = 1;
    SpotOutcome o = simulate_spot(in, SpotPolicy::spot_only, 400, 7);
    return o.mean_preemptions / (o.mean_time_s / 3600);
  };
  EXPECT_NEAR(simulated(many) / simulated(one), 128, 128 * 0.1);
}

TEST(TrainingPlanClusters, MultiNodeJobsRunOnAFabricOrATpuSlice) {
  ModelArch arch = model(std::string(GPUWISE_SOURCE_DIR) + "/bench/models/llama-2-13b.json");
  TrainingJob job;
  job.arch = &arch;
  job.tokens = 1e12;
  TrainingSearch search;
  search.deadline_s = 30 * 86400.0;
  SpotSettings spot;
  TrainingPlan plan = plan_training(training_catalog(), job, search, spot);
  ASSERT_TRUE(plan.best) << plan.binding;
  EXPECT_GT(plan.skipped_no_fabric, 0);
  for (const auto& c : plan.pareto) {
    EXPECT_TRUE(c.instances == 1 || !c.offering->fabric.empty()) << c.offering->instance_type << " x" << c.instances;
    EXPECT_GT(c.offering->accelerator_count, 1) << c.offering->instance_type;  // not 128 single-chip VMs
  }
  search.allow_unfabric_clusters = true;
  TrainingPlan open = plan_training(training_catalog(), job, search, spot);
  EXPECT_EQ(open.skipped_no_fabric, 0);
  EXPECT_GT(open.candidates, 0);
}

// The batch asked for is the batch run: 4,096 H100s with a 4M-token batch of 4,096-token
// sequences hold at most 1,024 data-parallel ranks, not 4,096 x 4,096 tokens per step.
TEST(TrainingBatch, TheGlobalBatchAskedForIsTheBatchRun) {
  ModelArch arch = model("llama-2-7b");
  TrainingJob job = job_of(arch, 1e12, 4096, 1024);
  TrainingEstimate e = estimate_training_run(job, cluster("H100", 4096, 3200, "infiniband"), nullptr);
  ASSERT_TRUE(e.feasible) << e.reason;
  EXPECT_DOUBLE_EQ(e.global_batch_tokens, 4194304);
  EXPECT_LE(e.layout.data_parallel * e.layout.micro_batch * e.layout.micro_batches, 1024);
  EXPECT_GE(e.layout.tensor_parallel * e.layout.pipeline_parallel, 4);
  // A layout that cannot split the batch is refused, naming why.
  TrainingLayout wide{1, 1, 4096, 1, Recompute::full, 1, 1};
  TrainingEstimate refused = estimate_training_layout(job, cluster("H100", 4096, 3200, "infiniband"), wide, nullptr);
  EXPECT_FALSE(refused.feasible);
  EXPECT_NE(refused.reason.find("more than the global batch of 1024"), std::string::npos) << refused.reason;
  // 17 nodes: 136 ranks do not divide 1,024 sequences within 5%; tp2 gives 68 x 15 = 1,020.
  TrainingEstimate odd = estimate_training_run(job, cluster("H100", 136, 3200, "infiniband"), nullptr);
  ASSERT_TRUE(odd.feasible) << odd.reason;
  EXPECT_LE(odd.global_batch_tokens, 4194304);
  EXPECT_GE(odd.global_batch_tokens, 0.95 * 4194304);
}

// With no batch given, the critical batch for the run's compute (DeepSeek LLM's fit): ~7.5M
// tokens for a 7B model on 1T tokens, more for more compute, whole sequences.
TEST(TrainingBatch, DefaultIsTheCriticalBatchForTheCompute) {
  ModelArch seven = model("llama-2-7b");
  double b = critical_batch_tokens(seven, 1e12, 4096);
  EXPECT_GT(b, 6e6);
  EXPECT_LT(b, 9e6);
  EXPECT_DOUBLE_EQ(std::fmod(b, 4096), 0.0);
  EXPECT_GT(critical_batch_tokens(model("llama-2-70b"), 2e12, 4096), b);
  TrainingJob job;
  job.arch = &seven;
  job.tokens = 1e12;
  EXPECT_DOUBLE_EQ(global_batch_tokens_of(job), b);
}

TEST(TrainingPlanCounts, NodeCountsBeyondPowersOfTwo) {
  std::vector<int> grid = node_count_grid(512);
  EXPECT_EQ(grid.front(), 1);
  EXPECT_EQ(grid.back(), 512);
  for (int n : {3, 5, 12, 17, 19, 23, 27, 45, 181, 362}) EXPECT_NE(std::find(grid.begin(), grid.end(), n), grid.end()) << n;
  EXPECT_LT(grid.size(), 80u);
  EXPECT_TRUE(std::is_sorted(grid.begin(), grid.end()));
}

// A deadline search settles on the fewest nodes that meet it, whatever the count, and a deadline
// no single node meets says that multi-node runs were left out for want of a fabric.
TEST(TrainingPlanCounts, TheDeadlineFindsTheFewestNodesThatMeetIt) {
  ModelArch arch = model("llama-2-7b");
  TrainingJob job = job_of(arch, 1e12, 4096, 1024);
  TrainingSearch search;
  search.accelerators = {training_catalog().find_accelerator("A100-80GB")};
  search.clouds = {"gcp"};
  search.deadline_s = 30 * 86400.0;
  search.allow_unfabric_clusters = true;
  SpotSettings spot;
  TrainingPlan plan = plan_training(training_catalog(), job, search, spot);
  ASSERT_TRUE(plan.best) << plan.binding;
  EXPECT_LE(plan.best->expected_time_s, 30 * 86400.0);
  // One node fewer misses the deadline (or does not fit the batch).
  const int nodes = plan.best->instances;
  ASSERT_GT(nodes, 1);
  TrainingEstimate fewer = estimate_training_run(
      job, hardware_of(*plan.best->offering, *training_catalog().find_accelerator("A100-80GB"), (nodes - 1) * plan.best->offering->accelerator_count),
      nullptr);
  if (fewer.feasible) {
    EXPECT_GT(fewer.time_s, 30 * 86400.0 / (1 + plan.best->checkpoint_s / plan.best->checkpoint_interval_s) * 0.99);
  }
  search.allow_unfabric_clusters = false;
  TrainingPlan closed = plan_training(training_catalog(), job, search, spot);
  ASSERT_FALSE(closed.best);
  EXPECT_NE(closed.binding.find("left out"), std::string::npos) << closed.binding;
  EXPECT_NE(closed.binding.find("--allow-tcp-clusters"), std::string::npos) << closed.binding;
}

}  // namespace
}  // namespace gw
