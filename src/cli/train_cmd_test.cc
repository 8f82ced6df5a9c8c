// The CLI end to end: train, and training jobs in plan.
#include "cli/app.h"

#include "perf/layer_operators.h"
#include "plan/queueing.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>
#include "cli/cli_test_run.h"

namespace gw {
namespace {

int doc_nodes(const std::string& out) { return nlohmann::json::parse(out)["nodes"].get<int>(); }

TEST(CliTrain, EstimatesARunWithTheDocumentedKeys) {
  // GCP's A100 nodes share no RDMA fabric: eight of them only when the user allows it.
  CliRun refused = run({"train", "llama-2-7b", "--tokens", "500e9", "--accelerator", "A100-80GB", "--count", "64",
                        "--cloud", "gcp"});
  EXPECT_EQ(refused.code, 3);
  EXPECT_NE(refused.err.find("--allow-tcp-clusters"), std::string::npos) << refused.err;
  CliRun r = run({"train", "llama-2-7b", "--tokens", "500e9", "--accelerator", "A100-80GB", "--count", "64",
                  "--pricing", "on-demand", "--cloud", "gcp", "--allow-tcp-clusters", "--runs", "200", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(doc_nodes(r.out), 8);
  auto doc = nlohmann::json::parse(r.out);
  for (const char* key : {"time_s", "gpu_hours", "usd", "mfu", "tokens_per_s", "checkpoint_interval_s", "bound"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["count"], 64);
  EXPECT_GT(doc["mfu"].get<double>(), 0.3);
  EXPECT_LT(doc["mfu"].get<double>(), 0.65);
  EXPECT_NEAR(doc["gpu_hours"].get<double>(), doc["time_s"].get<double>() / 3600 * 64, 1e-6 * doc["gpu_hours"].get<double>());
  EXPECT_FALSE(doc["spot_policies"].empty());
}

TEST(CliTrain, ATcpClusterIsSlowerThanEfaByWhatTheVolumesImply) {
  auto step = [](const std::string& offering) {
    CliRun r = run({"train", "gpt3-175b", "--tokens", "300e9", "--count", "384", "--offering", offering,
                    "--sequence-length", "2048", "--global-batch-tokens", "3145728", "--format", "json", "--runs", "50"});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  auto tcp = step("gpu_8x_a100"), efa = step("p4d.24xlarge");
  EXPECT_EQ(tcp["nodes"], 48);
  EXPECT_GT(tcp["step_time_s"].get<double>(), 1.2 * efa["step_time_s"].get<double>());
  // Each node's NICs carry one ring per tensor-parallel shard it holds: tp x 2(N-1)/N x the
  // shard, N the nodes a data-parallel ring spans (the layout's dp over the dp ranks in a node).
  const auto& layout = efa["layout"];
  int tp = layout["tensor_parallel"], dp = layout["data_parallel"];
  ASSERT_LT(layout["zero_stage"].get<int>(), 3);
  ASSERT_GE(dp * tp, 8);
  double shard = efa["step"]["data_parallel_bytes_per_rank"].get<double>() / (2.0 * (dp - 1) / dp);
  double nodes_in_ring = dp / (8.0 / tp);
  EXPECT_NEAR(efa["step"]["data_parallel_bytes_per_node"].get<double>(), tp * 2 * (nodes_in_ring - 1) / nodes_in_ring * shard,
              1e-6 * shard);
  EXPECT_LT(tcp["step"]["node_network_bytes_per_s"].get<double>(), efa["step"]["node_network_bytes_per_s"].get<double>() / 4);
  CliRun explained = run({"train", "gpt3-175b", "--tokens", "300e9", "--count", "384", "--offering", "gpu_8x_a100", "--explain",
                          "--runs", "50"});
  EXPECT_NE(explained.out.find("through each node's NICs"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("runner-up layout"), std::string::npos);
}

TEST(CliTrain, Fp8RunsOnHopperAndIsRefusedOnAmpere) {
  CliRun fp8 = run({"train", "llama-3.1-70b", "--tokens", "1e12", "--accelerator", "H100", "--count", "64", "--precision", "fp8",
                    "--format", "json", "--runs", "50"});
  ASSERT_EQ(fp8.code, 0) << fp8.err;
  CliRun bf16 = run({"train", "llama-3.1-70b", "--tokens", "1e12", "--accelerator", "H100", "--count", "64", "--format", "json",
                     "--runs", "50"});
  ASSERT_EQ(bf16.code, 0) << bf16.err;
  EXPECT_LT(nlohmann::json::parse(fp8.out)["time_without_interruptions_s"].get<double>(),
            0.85 * nlohmann::json::parse(bf16.out)["time_without_interruptions_s"].get<double>());
  CliRun a100 = run({"train", "llama-3.1-70b", "--tokens", "1e12", "--accelerator", "A100-80GB", "--precision", "fp8"});
  EXPECT_EQ(a100.code, 1);
  EXPECT_NE(a100.err.find("Ampere has no fp8 tensor cores"), std::string::npos) << a100.err;
  EXPECT_NE(a100.err.find("A100-80GB"), std::string::npos) << a100.err;
  EXPECT_TRUE(a100.out.empty());
}

TEST(CliTrain, TheSpotComparisonUsesTheBestOfferingWithASpotPrice) {
  CliRun r = run({"train", "llama-3.2-1b", "--tokens", "1e10", "--accelerator", "H100", "--format", "json", "--runs", "50"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_FALSE(doc["spot_policies"].empty());
  for (const auto& p : doc["spot_policies"]) EXPECT_FALSE(p["instance_type"].get<std::string>().empty());
}

// The snapshot's spot row for p6-b200 in us-east-1 is the Atlanta Local Zone's: a run priced
// there says so, in the text, the frontier, the JSON and the assumptions.
TEST(CliTrain, ASpotRunPricedInALocalZoneNamesIt) {
  const std::vector<std::string> args = {"train", "qwen2.5-7b", "--tokens", "20B", "--accelerator", "B200", "--count", "16",
                                         "--pricing", "spot", "--cloud", "aws", "--region", "us-east-1", "--runs", "50"};
  CliRun text = run(args);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("(aws us-east-1 Local Zone use1-atl2-az1 p6-b200.48xlarge, 2 nodes"), std::string::npos) << text.out;
  std::vector<std::string> explain = args;
  explain.push_back("--explain");
  CliRun explained = run(explain);
  EXPECT_NE(explained.out.find("opt in (aws ec2 modify-availability-zone-group)"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("needs EFA and a cluster placement group there"), std::string::npos) << explained.out;
  std::vector<std::string> as_json = args;
  as_json.insert(as_json.end(), {"--format", "json"});
  CliRun doc = run(as_json);
  ASSERT_EQ(doc.code, 0) << doc.err;
  EXPECT_EQ(nlohmann::json::parse(doc.out)["zone"], "use1-atl2-az1");
  // On demand the region's price and the region's name: no zone named.
  CliRun on_demand = run({"train", "qwen2.5-7b", "--tokens", "20B", "--accelerator", "B200", "--count", "16", "--pricing",
                          "on-demand", "--cloud", "aws", "--region", "us-east-1", "--runs", "50"});
  ASSERT_EQ(on_demand.code, 0) << on_demand.err;
  EXPECT_EQ(on_demand.out.find("Local Zone"), std::string::npos) << on_demand.out;
  // A spec's training job alike.
  const std::string spec = temp_path("local_zone_training.yaml");
  std::ofstream(spec) << "models: {q: {preset: qwen2.5-7b}}\ntraining:\n  - {name: ft, model: q, tokens: 20e9, deadline_days: 3, "
                         "interruptible: true}\nconstraints: {clouds: [aws], regions: [us-east-1], accelerators: [B200], "
                         "pricing: [on-demand, spot]}\n";
  CliRun planned = run({"plan", spec});
  ASSERT_EQ(planned.code, 0) << planned.err;
  EXPECT_NE(planned.out.find("on aws us-east-1 Local Zone use1-atl2-az1 p6-b200.48xlarge"), std::string::npos) << planned.out;
  EXPECT_NE(planned.out.find("note: spot for p6-b200.48xlarge"), std::string::npos) << planned.out;
  CliRun planned_json = run({"plan", spec, "--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(planned_json.out)["training"][0]["best"]["zone"], "use1-atl2-az1");
}

TEST(CliTrain, AnImpossibleDeadlineExitsThreeNamingIt) {
  CliRun r = run({"train", "llama-3.1-70b", "--tokens", "15e12", "--accelerator", "A100-80GB", "--count", "64",
                  "--deadline-days", "30"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("deadline 30.0 days cannot be met"), std::string::npos) << r.err;
}

TEST(CliTrain, BadInputIsAClearError) {
  EXPECT_EQ(run({"train", "gpt2", "--tokens", "0"}).code, 1);
  CliRun past = run({"train", "gpt2", "--tokens", "1e9", "--deadline-days", "-2"});
  EXPECT_EQ(past.code, 1);
  EXPECT_NE(past.err.find("--deadline-days"), std::string::npos);
  CliRun rate = run({"train", "gpt2", "--tokens", "1e9", "--preemption-rate", "7200"});
  EXPECT_EQ(rate.code, 1);
  EXPECT_NE(rate.err.find("one preemption per second"), std::string::npos);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

TEST(CliPlan, TrainingJobsArePlannedAgainstTheirDeadline) {
  CliRun r = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/pretrain-7b.yaml", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  const auto& job = doc["training"][0];
  EXPECT_TRUE(job["feasible"].get<bool>());
  EXPECT_LE(job["best"]["time_s"].get<double>(), 20 * 86400.0);
  for (const char* key : {"time_s", "gpu_hours", "usd", "mfu", "tokens_per_s", "checkpoint_interval_s", "bound"})
    EXPECT_TRUE(job["best"].contains(key)) << key;
  std::string path = temp_path("impossible_training.yaml");
  std::ofstream(path) << "constraints: {accelerators: [T4]}\ntraining:\n  - name: huge\n    model: llama-3.1-70b\n"
                         "    tokens: 15e12\n    deadline_days: 10\n";
  CliRun impossible = run({"plan", path});
  EXPECT_EQ(impossible.code, 3);
  EXPECT_NE(impossible.err.find("training job 'huge' cannot be planned"), std::string::npos) << impossible.err;
}

}  // namespace
}  // namespace gw
