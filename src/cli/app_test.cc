// The command line end to end: outputs, JSON keys, exit codes and error messages.
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

namespace gw {
namespace {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun run(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpuwise_cli_test_" + name)).string();
}

TEST(Cli, FitPrintsABreakdownAndPlacements) {
  CliRun r = run({"fit", "llama-3.1-70b", "--precision", "bf16", "--context", "8192", "--batch", "16"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("weights_bytes"), std::string::npos);
  EXPECT_NE(r.out.find("KV cache per token: 320.0 KiB"), std::string::npos);
  EXPECT_NE(r.out.find("H100"), std::string::npos);
}

TEST(Cli, FitJsonHasTheDocumentedKeys) {
  CliRun r = run({"fit", "llama-3.1-70b", "--precision", "bf16", "--context", "8192", "--batch", "16", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  for (const char* key : {"params", "weights_bytes", "kv_cache_bytes_per_token", "kv_cache_bytes", "activation_bytes",
                          "gradient_bytes", "optimizer_bytes", "total_bytes_per_device", "fits", "schema_version"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["params"].get<double>(), 70553706496.0);
  EXPECT_EQ(doc["kv_cache_bytes"].get<double>(), 16.0 * 8192 * 327680);
  ASSERT_FALSE(doc["fits"].empty());
  for (const char* key : {"accelerator", "count", "offering", "usd_per_hour"}) EXPECT_TRUE(doc["fits"][0].contains(key)) << key;
}

TEST(Cli, FitTrainingFromAConfigFileWithZero3) {
  std::string path = temp_path("config.json");
  std::ofstream(path) << R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
    "max_position_embeddings": 131072})";
  CliRun r = run({"fit", path, "--train", "--zero", "3", "--dp", "64", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["params"].get<double>(), 8030261248.0);
  EXPECT_NEAR(doc["optimizer_bytes"].get<double>(), 8030261248.0 * 8 / 64, 1.0);
  EXPECT_NEAR(doc["gradient_bytes"].get<double>(), 8030261248.0 * 2 / 64, 1.0);
  EXPECT_EQ(doc["inputs"]["zero_stage"], 3);
  CliRun table = run({"fit", path, "--train", "--zero", "3", "--dp", "64", "--explain"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("ZeRO-3 over dp"), std::string::npos);
  EXPECT_NE(table.out.find("Korthikanti"), std::string::npos);
}

TEST(Cli, GlobalOptionsGoBeforeOrAfterTheSubcommand) {
  CliRun before = run({"--format", "json", "catalog", "accelerators", "--accelerator", "H100"});
  CliRun after = run({"catalog", "accelerators", "--accelerator", "H100", "--format", "json"});
  ASSERT_EQ(before.code, 0) << before.err;
  EXPECT_EQ(before.out, after.out);
  auto doc = nlohmann::json::parse(before.out);
  EXPECT_EQ(doc["accelerators"].size(), 1u);
  EXPECT_EQ(doc["accelerators"][0]["dense_peak_tflops"]["bf16"], 989.4);
}

TEST(Cli, CheapestEightyGigabyteGpuInEuropeInOneLine) {
  CliRun r = run({"catalog", "offerings", "--min-vram-gib", "80", "--geo", "europe", "--limit", "1", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["offerings"].size(), 1u);
  EXPECT_EQ(doc["offerings"][0]["region"].get<std::string>().substr(0, 6), "europe");
  CliRun csv = run({"catalog", "offerings", "--cloud", "lambda", "--format", "csv"});
  ASSERT_EQ(csv.code, 0);
  EXPECT_EQ(csv.out.substr(0, 19), "cloud,region,instan");
}

TEST(Cli, BadInputIsOneLineNamingTheFieldWithExitOne) {
  CliRun unknown = run({"fit", "llama-9000"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("unknown model 'llama-9000'"), std::string::npos);
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1);

  CliRun accelerator = run({"fit", "gpt2", "--accelerator", "H1000"});
  EXPECT_EQ(accelerator.code, 1);
  EXPECT_NE(accelerator.err.find("did you mean"), std::string::npos);

  std::string path = temp_path("truncated.json");
  std::ofstream(path) << "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 40";
  CliRun truncated = run({"fit", path});
  EXPECT_EQ(truncated.code, 1);
  EXPECT_NE(truncated.err.find(path + ":3:"), std::string::npos) << truncated.err;

  CliRun context = run({"fit", "gpt2", "--context", "5000"});
  EXPECT_EQ(context.code, 1);
  EXPECT_NE(context.err.find("--context"), std::string::npos);

  CliRun tp = run({"fit", "falcon-7b", "--tp", "2"});
  EXPECT_EQ(tp.code, 1);
  EXPECT_NE(tp.err.find("71 attention heads"), std::string::npos);
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run({"fit", "gpt2", "--batch", "-3"}).code, 2);
  EXPECT_EQ(run({"fit", "gpt2", "--zero", "4"}).code, 2);
  EXPECT_EQ(run({"fit"}).code, 2);
  EXPECT_EQ(run({"nonsense"}).code, 2);
  EXPECT_EQ(run({"catalog", "offerings", "--format", "xml"}).code, 2);
}

TEST(Cli, NothingFitsExitsThree) {
  CliRun r = run({"fit", "llama-3.1-405b", "--accelerator", "T4", "--max-devices", "8"});
  EXPECT_EQ(r.code, 3);
}

TEST(Cli, OutputFileIsWholeOrAbsent) {
  std::string out = temp_path("out.json");
  std::filesystem::remove(out);
  CliRun bad = run({"fit", "no-such-model", "-o", out});
  EXPECT_EQ(bad.code, 1);
  EXPECT_FALSE(std::filesystem::exists(out));
  CliRun good = run({"fit", "gpt2", "--format", "json", "-o", out});
  ASSERT_EQ(good.code, 0) << good.err;
  std::ifstream in(out);
  EXPECT_NO_THROW(nlohmann::json::parse(in));
  // An output path equal to the input is refused.
  std::string config = temp_path("same.json");
  std::ofstream(config) << R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 2, "n_positions": 128, "vocab_size": 100})";
  CliRun same = run({"fit", config, "-o", config});
  EXPECT_EQ(same.code, 1);
  EXPECT_NE(same.err.find("refusing to overwrite"), std::string::npos);
}

TEST(Cli, BadCatalogOverrideNamesTheFile) {
  std::string dir = temp_path("catalog");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/accelerators.csv") << "name,memory_gib,memory_gb_per_s,source,as_of\nX9,lots,100,me,2026-01-01\n";
  CliRun r = run({"--catalog", dir, "catalog", "accelerators"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(dir + "/accelerators.csv:2: field 'memory_gib'"), std::string::npos) << r.err;
}

TEST(Cli, SkypilotImportRoundTrips) {
  std::string dir = temp_path("skypilot");
  std::filesystem::create_directories(dir + "/lambda");
  std::ofstream(dir + "/lambda/vms.csv")
      << "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuMemoryMiB,Price,SpotPrice,Region\n"
         "gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,81920,23.92,,us-east-1\n";
  std::string out = temp_path("imported");
  std::filesystem::create_directories(out);
  CliRun r = run({"catalog", "import", "--skypilot", dir, "--as-of", "2026-11-30", "-o", out + "/offerings.csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  CliRun listed = run({"--catalog", out, "catalog", "offerings", "--cloud", "lambda", "--accelerator", "H100", "--format", "json"});
  ASSERT_EQ(listed.code, 0) << listed.err;
  auto doc = nlohmann::json::parse(listed.out);
  bool found = false;
  for (const auto& o : doc["offerings"]) found = found || (o["instance_type"] == "gpu_8x_h100_sxm5" && o["as_of"] == "2026-11-30");
  EXPECT_TRUE(found);
}

TEST(Cli, TheBinaryRunsAndNeverLeavesPartialFiles) {
  std::string out = temp_path("binary.txt");
  std::filesystem::remove(out);
  std::string command = std::string(GPUWISE_BINARY) + " fit llama-3.1-8b --context 999999999 -o " + out + " 2>/dev/null";
  int status = std::system(command.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

TEST(CliPlan, PlansTheExamplesAndReportsCosts) {
  CliRun r = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/chat-azure.yaml", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  const auto& service = doc["services"][0];
  EXPECT_TRUE(service["feasible"].get<bool>());
  for (const char* key : {"accelerator", "instance_type", "instances", "replicas", "batching", "ttft_p99_s", "tpot_p99_s",
                          "utilization", "usd_per_hour", "usd_per_month", "usd_per_1k_inferences", "usd_per_million_tokens"})
    EXPECT_TRUE(service["best"].contains(key)) << key;
  EXPECT_LE(service["best"]["ttft_p99_s"].get<double>(), 2.0);
  EXPECT_LE(service["best"]["tpot_p99_s"].get<double>(), 0.1);
  EXPECT_GT(service["batching_saves_usd_per_month"].get<double>(), 0);
  EXPECT_EQ(service["mean_input_tokens"].get<double>() > 1000, true);  // read from the Azure trace
  EXPECT_TRUE(service["best"]["simulated"]["meets_slo"].get<bool>());
  // The latencies shown are the simulation's; the screen's stay under "screen".
  EXPECT_EQ(service["best"]["latencies_from"], "simulation");
  for (const char* key : {"ttft_p99_s", "tpot_p99_s", "latency_p99_s"})
    EXPECT_DOUBLE_EQ(service["best"][key].get<double>(), service["best"]["simulated"][key].get<double>()) << key;
  EXPECT_TRUE(service["best"]["screen"].contains("ttft_p99_s"));
  ASSERT_FALSE(service["pareto"].empty());
  EXPECT_DOUBLE_EQ(service["pareto"][0]["usd_per_month"].get<double>(), service["best"]["usd_per_month"].get<double>());
  for (const auto& option : service["pareto"]) EXPECT_TRUE(option["simulated"]["meets_slo"].get<bool>());
  // The frontier shows nothing the full replay dropped: on the code trace the cheaper layouts
  // the screen passes miss the TTFT p99 over the whole hour's bursts, so the plan leads with
  // what passed.
  {
    CliRun code = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/code-azure.yaml", "--format", "json"});
    ASSERT_EQ(code.code, 0) << code.err;
    const nlohmann::json code_doc = nlohmann::json::parse(code.out);
    const auto& coding = code_doc["services"][0];
    ASSERT_FALSE(coding["dropped_after_simulation"].empty());
    for (const auto& dropped : coding["dropped_after_simulation"]) {
      std::string text = dropped.get<std::string>();
      for (const auto& option : coding["pareto"]) {
        std::string layout = fmt::format("{} x{} tp{} ({} replicas", option["accelerator"].get<std::string>(),
                                         option["gpus"].get<int>(), option["tensor_parallel"].get<int>(),
                                         option["replicas"].get<int>());
        EXPECT_NE(text.rfind(layout, 0), 0u) << text;
      }
    }
    EXPECT_DOUBLE_EQ(coding["pareto"][0]["usd_per_month"].get<double>(), coding["best"]["usd_per_month"].get<double>());
  }
  // Every example's plan is verified by simulation.
  for (const char* example : {"recommendations", "spam-filter", "llama-70b"}) {
    CliRun e = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/" + example + ".yaml", "--format", "json"});
    ASSERT_EQ(e.code, 0) << example << ": " << e.err;
    auto plan = nlohmann::json::parse(e.out);
    EXPECT_TRUE(plan["services"][0]["best"]["simulated"]["meets_slo"].get<bool>()) << example;
  }
}

TEST(CliPlan, ImpossibleSloExitsThreeNamingTheConstraint) {
  std::string path = temp_path("impossible.yaml");
  std::ofstream(path) << "models: {m: {preset: llama-3.1-8b}}\nservices:\n  - name: chat\n    model: m\n"
                         "    traffic: {rps: 1}\n    tokens: {input: 4000, output: 100}\n"
                         "    slo: {ttft_p99_s: 0.001, tpot_p99_s: 0.1}\n";
  CliRun r = run({"plan", path});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("ttft_p99_s 0.001 s cannot be met"), std::string::npos) << r.err;
}

TEST(CliPlan, OverBudgetExitsThree) {
  std::string path = temp_path("budget.yaml");
  std::ofstream(path) << "constraints: {budget_usd_per_month: 10}\nservices:\n  - name: img\n    model: resnet-50\n"
                         "    traffic: {rps: 50}\n    slo: {latency_p99_s: 0.1}\n";
  CliRun r = run({"plan", path});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("over the budget"), std::string::npos) << r.err;
}

TEST(CliPlan, BadSpecIsExitOneWithFileLineAndKey) {
  std::string path = temp_path("bad.yaml");
  std::ofstream(path) << "services:\n  - name: a\n    model: resnet-50\n    traffic: {rps: 5}\n    slo: {latency_p99: 1}\n";
  CliRun r = run({"plan", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(path + ":5: field 'services.a.slo.latency_p99'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'latency_p99_s'"), std::string::npos) << r.err;
}

TEST(CliPerf, StepTimeAndMaxThroughputJson) {
  CliRun step = run({"perf", "llama-3.1-8b", "--accelerator", "H100", "--phase", "decode", "--batch", "8", "--context",
                     "2048", "--format", "json"});
  ASSERT_EQ(step.code, 0) << step.err;
  auto doc = nlohmann::json::parse(step.out);
  for (const char* key : {"step_time_s", "tokens_per_s", "requests_per_s", "batch", "bound"}) EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["bound"], "memory");  // decode at batch 8 streams the weights
  CliRun max = run({"perf", "llama-3.1-70b", "--accelerator", "H100", "--count", "4", "--max-throughput",
                    "--input-tokens", "1024", "--output-tokens", "256", "--format", "json"});
  ASSERT_EQ(max.code, 0) << max.err;
  auto m = nlohmann::json::parse(max.out);
  EXPECT_GT(m["batch"].get<double>(), 1);
  EXPECT_GT(m["tokens_per_s"].get<double>(), 0);
  CliRun too_small = run({"perf", "llama-3.1-70b", "--accelerator", "L4", "--max-throughput", "--input-tokens", "10",
                          "--output-tokens", "10"});
  EXPECT_EQ(too_small.code, 1);
}

// --max-throughput on --count devices without --tp searches the tensor-parallel layouts and
// says which limit caps the batch: --max-batch when the KV cache would hold more.
TEST(CliPerf, MaxThroughputSearchesLayoutsAndNamesTheBatchLimit) {
  CliRun searched = run({"perf", "llama-2-70b", "--accelerator", "H100", "--count", "8", "--precision", "fp8",
                         "--max-throughput", "--input-tokens", "1024", "--output-tokens", "256", "--format", "json"});
  ASSERT_EQ(searched.code, 0) << searched.err;
  auto best = nlohmann::json::parse(searched.out);
  ASSERT_EQ(best["layouts"].size(), 4u);  // tp 1, 2, 4, 8
  for (const auto& layout : best["layouts"]) {
    EXPECT_LE(layout["tokens_per_s"].get<double>(), best["tokens_per_s"].get<double>() + 1e-9);
    EXPECT_EQ(layout["tensor_parallel"].get<int>() * layout["replicas"].get<int>(), 8);
  }
  CliRun pinned = run({"perf", "llama-2-70b", "--accelerator", "H100", "--count", "8", "--tp", "8", "--precision", "fp8",
                       "--max-throughput", "--input-tokens", "1024", "--output-tokens", "256", "--format", "json"});
  ASSERT_EQ(pinned.code, 0) << pinned.err;
  auto tp8 = nlohmann::json::parse(pinned.out);
  EXPECT_EQ(tp8["layouts"].size(), 1u);
  EXPECT_LT(tp8["tokens_per_s"].get<double>(), best["tokens_per_s"].get<double>());
  // fp8 weights on eight H100s leave KV cache for far more than the default 256 sequences.
  EXPECT_EQ(tp8["batch"].get<double>(), 256);
  EXPECT_EQ(tp8["batch_limit"], "max batch");
  EXPECT_GT(tp8["kv_cache_batch"].get<double>(), 1000);
  CliRun text = run({"perf", "llama-2-70b", "--accelerator", "H100", "--count", "8", "--tp", "8", "--precision", "fp8",
                     "--max-throughput", "--input-tokens", "1024", "--output-tokens", "256"});
  EXPECT_NE(text.out.find("--max-batch limit; the KV cache would hold"), std::string::npos) << text.out;
}

// A profiled (accelerator, model) answers its layers from the measured tables; --step-model
// roofline keeps the whole-step roofline; the profiles are listed with their source.
TEST(CliPerf, LayersByOperatorFromTheShippedProfiles) {
  CliRun ops = run({"perf", "llama-2-70b", "--accelerator", "H100", "--tp", "8", "--phase", "decode", "--batch", "64",
                    "--context", "2048", "--format", "json"});
  ASSERT_EQ(ops.code, 0) << ops.err;
  auto by_operator = nlohmann::json::parse(ops.out);
  EXPECT_EQ(by_operator["measured_operators"].get<int>(), 9);
  EXPECT_GT(by_operator["layer_operators_s"].get<double>(), 0);
  CliRun roof = run({"perf", "llama-2-70b", "--accelerator", "H100", "--tp", "8", "--phase", "decode", "--batch", "64",
                     "--context", "2048", "--format", "json", "--step-model", "roofline"});
  ASSERT_EQ(roof.code, 0) << roof.err;
  auto roofline = nlohmann::json::parse(roof.out);
  EXPECT_EQ(roofline["layer_operators_s"].get<double>(), 0);
  EXPECT_NE(roofline["step_time_s"].get<double>(), by_operator["step_time_s"].get<double>());
  CliRun explain = run({"perf", "llama-3.1-8b", "--accelerator", "L4", "--phase", "prefill", "--context", "512", "--explain"});
  ASSERT_EQ(explain.code, 0) << explain.err;
  EXPECT_NE(explain.out.find("fitted to A40 profiles"), std::string::npos) << explain.out;
  CliRun list = run({"catalog", "profiles", "--format", "json"});
  ASSERT_EQ(list.code, 0) << list.err;
  auto profiles = nlohmann::json::parse(list.out);
  EXPECT_EQ(profiles["profiles"].size(), 17u);
  EXPECT_NE(profiles["source"].get<std::string>().find("7d47513"), std::string::npos);
}

// --decode-attention per-query-head times an engine whose decode kernel runs a block per query
// head: a grouped-query model's decode step grows (its KV heads read once per query head), a
// multi-head model's does not, --explain says which kernel and at what L2 rate, and an unknown
// kernel is an error naming the option.
TEST(CliPerf, PerQueryHeadDecodeAttention) {
  auto step = [](const std::string& model, const std::string& kernel) {
    CliRun r = run({"perf", model, "--accelerator", "A100-80GB", "--tp", model == "llama-2-70b" ? "4" : "1", "--phase",
                    "decode", "--batch", "64", "--context", "2048", "--format", "json", "--decode-attention", kernel});
    EXPECT_EQ(r.code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["decode_attention"], kernel);
    return j["step_time_s"].get<double>();
  };
  EXPECT_GT(step("llama-2-70b", "per-query-head"), 1.2 * step("llama-2-70b", "grouped"));
  EXPECT_DOUBLE_EQ(step("llama-2-7b", "per-query-head"), step("llama-2-7b", "grouped"));
  CliRun explain = run({"perf", "llama-2-70b", "--accelerator", "A100-80GB", "--tp", "4", "--phase", "decode",
                        "--decode-attention", "per-query-head", "--explain"});
  ASSERT_EQ(explain.code, 0) << explain.err;
  EXPECT_NE(explain.out.find("decode attention: per query head, each KV head's cache read by its 8 query heads, from "
                             "memory once and the rest from L2 at 5403 GB/s"),
            std::string::npos)
      << explain.out;
  CliRun grouped = run({"perf", "llama-2-70b", "--accelerator", "A100-80GB", "--tp", "4", "--phase", "decode", "--explain"});
  EXPECT_NE(grouped.out.find("decode attention: grouped"), std::string::npos) << grouped.out;
  // An fp8 cache: the grouped kernel reads half the bytes, the per-query-head one converts each
  // element, so its L2 stream costs what a 16-bit cache's does and --explain says so.
  auto attention_s = [](const std::string& kernel, const std::string& kv) {
    CliRun r = run({"perf", "llama-2-70b", "--accelerator", "H100", "--tp", "2", "--precision", "fp8",
                    "--kv-precision", kv, "--phase", "decode", "--batch", "64", "--context", "3072", "--format",
                    "json", "--decode-attention", kernel});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["attention_s"].get<double>();
  };
  EXPECT_LT(attention_s("grouped", "fp8"), 0.6 * attention_s("grouped", "bf16"));
  EXPECT_NEAR(attention_s("per-query-head", "fp8"), attention_s("per-query-head", "bf16"),
              0.02 * attention_s("per-query-head", "bf16"));
  CliRun fp8 = run({"perf", "llama-2-70b", "--accelerator", "H100", "--tp", "2", "--precision", "fp8", "--phase",
                    "decode", "--decode-attention", "per-query-head", "--explain"});
  ASSERT_EQ(fp8.code, 0) << fp8.err;
  EXPECT_NE(fp8.out.find("the fp8 cache's elements stream from L2 at the 16-bit rate"), std::string::npos) << fp8.out;
  CliRun bad = run({"perf", "llama-2-70b", "--accelerator", "A100-80GB", "--decode-attention", "xqa"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("--decode-attention"), std::string::npos) << bad.err;
}

// --max-throughput under a bound on the time per output token: the largest batch whose step fits,
// said in the text and the JSON; a bound no batch meets is an error naming the option.
TEST(CliPerf, MaxThroughputWithinATpotBound) {
  auto json_of = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"perf", "llama-3.1-8b", "--accelerator", "H100", "--precision", "fp8",
                                     "--max-throughput", "--input-tokens", "1000", "--output-tokens", "500",
                                     "--max-batch", "4096", "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliRun r = run(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  auto widest = json_of({});
  EXPECT_TRUE(widest["tpot_limit_ms"].is_null());
  double bound_ms = widest["step_time_s"].get<double>() * 1e3 / 2;
  auto bounded = json_of({"--tpot-ms", std::to_string(bound_ms)});
  EXPECT_EQ(bounded["batch_limit"], "TPOT");
  EXPECT_DOUBLE_EQ(bounded["tpot_limit_ms"].get<double>(), std::stod(std::to_string(bound_ms)));
  EXPECT_LE(bounded["step_time_s"].get<double>() * 1e3, bound_ms);
  EXPECT_LT(bounded["batch"].get<double>(), widest["batch"].get<double>());
  CliRun text = run({"perf", "llama-3.1-8b", "--accelerator", "H100", "--precision", "fp8", "--max-throughput",
                     "--input-tokens", "1000", "--output-tokens", "500", "--max-batch", "4096", "--tpot-ms",
                     std::to_string(bound_ms)});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("--tpot-ms limit"), std::string::npos) << text.out;
  CliRun impossible = run({"perf", "llama-3.1-8b", "--accelerator", "H100", "--precision", "fp8", "--max-throughput",
                           "--input-tokens", "1000", "--output-tokens", "500", "--tpot-ms", "0.01"});
  EXPECT_NE(impossible.code, 0);
  EXPECT_NE(impossible.err.find("--tpot-ms"), std::string::npos) << impossible.err;
}

// --max-throughput over a file of requests' lengths (gpuwise's columns or an Azure trace's): the
// batch runs their mix, long answers holding their slots longer than a mean-length request would.
TEST(CliPerf, MaxThroughputOverRequestLengths) {
  namespace fs = std::filesystem;
  fs::path file = fs::temp_directory_path() / ("gpuwise_lengths_" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream f(file);
    f << "input_length,output_length\n";
    for (int i = 0; i < 20; ++i) f << "2000,100\n2000,1900\n";
  }
  auto throughput = [](std::vector<std::string> args) {
    std::vector<std::string> all = {"perf", "llama-3.1-70b", "--accelerator", "H100", "--count", "2", "--tp", "2",
                                    "--precision", "fp8", "--max-throughput", "--max-batch", "4096", "--format", "json"};
    all.insert(all.end(), args.begin(), args.end());
    CliRun r = run(all);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  auto mix = throughput({"--lengths", file.string()});
  auto mean = throughput({"--input-tokens", "2000", "--output-tokens", "1000"});
  EXPECT_EQ(mix["request_lengths"]["requests"], 40);
  EXPECT_DOUBLE_EQ(mix["request_lengths"]["mean_output_tokens"].get<double>(), 1000);
  EXPECT_EQ(mean["request_lengths"]["requests"], 0);
  // Each slot reserves (100 x 2,100 + 1,900 x 3,900) / 2,000 tokens, not 3,000: fewer sequences fit.
  EXPECT_DOUBLE_EQ(mix["request_lengths"]["slot_reserved_tokens"].get<double>(), (100.0 * 2100 + 1900.0 * 3900) / 2000);
  EXPECT_LT(mix["batch"].get<double>(), 0.85 * mean["batch"].get<double>());
  EXPECT_LT(mix["tokens_per_s"].get<double>(), mean["tokens_per_s"].get<double>());
  CliRun explained = run({"perf", "llama-3.1-70b", "--accelerator", "H100", "--count", "2", "--precision", "fp8",
                          "--max-throughput", "--lengths", file.string(), "--explain"});
  ASSERT_EQ(explained.code, 0) << explained.err;
  EXPECT_NE(explained.out.find("request lengths: 40 requests from"), std::string::npos) << explained.out;
  CliRun both = run({"perf", "llama-3.1-70b", "--accelerator", "H100", "--count", "2", "--precision", "fp8",
                     "--max-throughput", "--lengths", file.string(), "--input-tokens", "100"});
  EXPECT_NE(both.code, 0);
  EXPECT_NE(both.err.find("--lengths"), std::string::npos) << both.err;
  {
    std::ofstream f(file);
    f << "input_length,output_length\n2000,100\n2000,x\n";
  }
  CliRun bad = run({"perf", "llama-3.1-70b", "--accelerator", "H100", "--count", "2", "--precision", "fp8",
                    "--max-throughput", "--lengths", file.string()});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find(file.string() + ":3"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("output_length"), std::string::npos) << bad.err;
  fs::remove(file);
  CliRun absent = run({"perf", "llama-3.1-70b", "--accelerator", "H100", "--count", "2", "--precision", "fp8",
                       "--max-throughput", "--lengths", "/nonexistent/lengths.csv"});
  EXPECT_NE(absent.code, 0);
  EXPECT_NE(absent.err.find("/nonexistent/lengths.csv"), std::string::npos) << absent.err;
}

// A team's own profiles (Vidur's layout, the folder naming the accelerator): calibrate fits a
// roofline to them, and --profiles has perf time that accelerator's layers from the tables.
TEST(CliPerf, OwnOperatorProfilesCalibrateAndPlan) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("gpuwise_own_profiles_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "compute" / "l40s" / "meta-llama" / "Llama-2-70b-hf");
  // The shipped H100 measurements, filed as if taken on an L40S (the numbers only need to be a
  // real profile; the test checks where they are used).
  fs::copy_file(fs::path(GPUWISE_SOURCE_DIR) / "catalog/profiles/vidur-7d47513/compute/h100/meta-llama/Llama-2-70b-hf/mlp.csv",
                dir / "compute" / "l40s" / "meta-llama" / "Llama-2-70b-hf" / "mlp.csv");
  CliRun calibrated = run({"calibrate", dir.string()});
  ASSERT_EQ(calibrated.code, 0) << calibrated.err;
  EXPECT_EQ(calibrated.out.rfind("device,peak_flops", 0), 0u) << calibrated.out;
  EXPECT_NE(calibrated.out.find("\nL40S,"), std::string::npos) << calibrated.out;
  EXPECT_NE(calibrated.err.find("L40S: 1044 profiled layers"), std::string::npos) << calibrated.err;
  std::vector<std::string> step = {"perf", "llama-2-70b", "--accelerator", "L40S", "--tp", "8", "--phase", "decode",
                                   "--batch", "16", "--format", "json"};
  CliRun shipped = run(step);
  ASSERT_EQ(shipped.code, 0) << shipped.err;
  EXPECT_EQ(nlohmann::json::parse(shipped.out)["measured_operators"].get<int>(), 0);
  step.insert(step.end(), {"--profiles", dir.string()});
  CliRun own = run(step);
  ASSERT_EQ(own.code, 0) << own.err;
  auto mine = nlohmann::json::parse(own.out);
  EXPECT_EQ(mine["measured_operators"].get<int>(), 9);
  // The profile's own per-layer sum at 16 tokens, tp 8, times the 80 layers.
  double layer_s = 0;
  {
    std::ifstream in(dir / "compute" / "l40s" / "meta-llama" / "Llama-2-70b-hf" / "mlp.csv");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto rows = parse_vidur_layer_profile(text, "mlp.csv", "l40s", "llama");
    ASSERT_TRUE(rows.ok());
    for (const auto& r : rows.value())
      if (r.tokens == 16 && r.dims.tensor_parallel == 8) layer_s = r.total_s();
  }
  ASSERT_GT(layer_s, 0);
  EXPECT_NEAR(mine["layer_operators_s"].get<double>(), 80 * layer_s, 1e-9);
  // A folder naming no catalog accelerator is a clear error.
  fs::rename(dir / "compute" / "l40s", dir / "compute" / "l40z");
  CliRun bad = run({"calibrate", dir.string()});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("compute/l40z: field 'device': 'l40z' is not a catalog accelerator (did you mean '"), std::string::npos) << bad.err;
  fs::remove_all(dir);
}

TEST(CliPerf, CalibrateWritesFactorsPlansCanUse) {
  std::string out = temp_path("calibration.csv");
  CliRun r = run({"calibrate", std::string(GPUWISE_SOURCE_DIR) + "/bench/perf_measurements.csv", "-o", out, "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  CliRun plan = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/llama-70b.yaml", "--calibration", out});
  EXPECT_EQ(plan.code, 0) << plan.err;
  std::string bad = temp_path("bad_measurements.csv");
  std::ofstream(bad) << "accelerator,model,phase,batch,tokens,latency_ms\nH100,llama-2-7b,decode,1,100,-4\n";
  CliRun error = run({"calibrate", bad});
  EXPECT_EQ(error.code, 1);
  EXPECT_NE(error.err.find(":2: field 'latency_ms'"), std::string::npos) << error.err;
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

TEST(CliSimulate, ReportsPercentilesAndIsByteForByteDeterministic) {
  std::string path = temp_path("sim.yaml");
  std::ofstream(path) << R"(
models: {chat: {preset: llama-3.1-8b}}
services:
  - name: chat
    model: chat
    traffic: {rps: 20, process: gamma, cv: 2}
    tokens: {input: {mean: 800, p99: 3000}, output: {mean: 150, p99: 600}}
    slo: {ttft_p99_s: 2, tpot_p99_s: 0.1}
    deployment: {replicas: 2, accelerator: H100, batching: continuous, router: least-outstanding-tokens}
)";
  CliRun a = run({"simulate", path, "--seed", "7", "--requests", "3000", "--format", "json"});
  CliRun b = run({"simulate", path, "--seed", "7", "--requests", "3000", "--format", "json"});
  CliRun c = run({"simulate", path, "--seed", "8", "--requests", "3000", "--format", "json"});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  auto doc = nlohmann::json::parse(a.out);
  const auto& s = doc["services"][0];
  EXPECT_EQ(s["requests"], 3000);
  for (const char* key : {"requests", "throughput_rps", "slo_attainment", "latency_s", "wait_s", "ttft_s", "tpot_s"})
    EXPECT_TRUE(s.contains(key)) << key;
  for (const char* key : {"mean", "p50", "p90", "p99", "p999"}) EXPECT_TRUE(s["ttft_s"].contains(key)) << key;
  EXPECT_LE(s["ttft_s"]["p50"].get<double>(), s["ttft_s"]["p99"].get<double>());
  EXPECT_EQ(s["replicas"].size(), 2u);
}

// A simulation that ran exits 0 whatever it found; pipelines ask for exit 3 on a missed SLO.
// The slo is optional for a given deployment, the whole trace runs unless cut, and the engine,
// KV capacity, verdict and preemptions are reported.
// Token counts and context lengths as people write them: 2T is 2e12, 8Ki is 8,192.
TEST(CliCounts, UnitSuffixesMeanTheNumbers) {
  CliRun a = run({"train", "llama-2-7b", "--tokens", "2T", "--deadline-days", "30", "--format", "json"});
  CliRun b = run({"train", "llama-2-7b", "--tokens", "2e12", "--deadline-days", "30", "--format", "json"});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  CliRun c = run({"fit", "llama-3.1-8b", "--context", "8Ki", "--format", "json"});
  CliRun d = run({"fit", "llama-3.1-8b", "--context", "8192", "--format", "json"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out, d.out);
  std::string path = temp_path("train_suffix.yaml");
  std::ofstream(path) << "models: {m: {preset: llama-2-7b}}\ntraining:\n  - name: j\n    model: m\n    tokens: 500B\n"
                         "    deadline_days: 30\n    sequence_length: 4Ki\n";
  CliRun e = run({"plan", path, "--format", "json"});
  ASSERT_EQ(e.code, 0) << e.err;
  std::string plain = temp_path("train_plain.yaml");
  std::ofstream(plain) << "models: {m: {preset: llama-2-7b}}\ntraining:\n  - name: j\n    model: m\n    tokens: 5e11\n"
                          "    deadline_days: 30\n    sequence_length: 4096\n";
  CliRun f = run({"plan", plain, "--format", "json"});
  ASSERT_EQ(f.code, 0) << f.err;
  auto je = nlohmann::json::parse(e.out), jf = nlohmann::json::parse(f.out);
  je.erase("spec");
  jf.erase("spec");
  EXPECT_EQ(je, jf);
}

// A spec's precision is planned only where kernels run it: fp8 weights never land on a T4, and
// the plan says why it was left out.
TEST(CliPlan, PrecisionsTheHardwareCannotRunAreNotPlanned) {
  std::string path = temp_path("fp8_t4.yaml");
  auto spec = [&](const std::string& accelerators) {
    std::ofstream(path) << "constraints: {accelerators: [" << accelerators << "]}\n"
                        << "models: {chat: {preset: llama-3.2-1b, precision: fp8}}\n"
                        << "services:\n  - name: chat\n    model: chat\n    traffic: {rps: 1}\n"
                        << "    tokens: {input: 300, output: 100}\n    slo: {ttft_p99_s: 5, tpot_p99_s: 0.2}\n";
  };
  spec("T4, L4");
  CliRun r = run({"plan", path, "--explain", "--no-simulate"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("not considered: T4: Turing has no fp8 kernels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1x L4 (tp1"), std::string::npos) << r.out;
  spec("T4");
  CliRun none = run({"plan", path, "--no-simulate"});
  EXPECT_NE(none.code, 0);
}

// On the Azure conversation hour, --explain says what the step times' error rests on: each sampled
// step's parts times their held-out errors; the simulation itself is the same with or without it.
TEST(CliSimulate, ExplainGivesTheStepErrorContributionOnTheAzureTrace) {
  std::string spec = std::string(GPUWISE_SOURCE_DIR) + "/examples/chat-azure.yaml";
  CliRun plain = run({"simulate", spec, "--format", "json"});
  CliRun explained = run({"simulate", spec, "--format", "json", "--explain"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(explained.code, 0) << explained.err;
  auto a = nlohmann::json::parse(plain.out)["services"][0], b = nlohmann::json::parse(explained.out)["services"][0];
  EXPECT_EQ(a["ttft_s"], b["ttft_s"]);
  EXPECT_EQ(a["tpot_s"], b["tpot_s"]);
  EXPECT_FALSE(a.contains("step_error"));
  ASSERT_TRUE(b.contains("step_error"));
  const auto& e = b["step_error"];
  EXPECT_GT(e["sampled_steps"].get<long long>(), 1000);
  // Between the smallest and largest part error (3.2% layers, 12.6% prefill attention).
  EXPECT_GT(e["mean"].get<double>(), 0.02);
  EXPECT_LT(e["mean"].get<double>(), 0.126);
  EXPECT_GE(e["p99"].get<double>(), e["mean"].get<double>());
  EXPECT_EQ(e["dominant"], "layers");
  EXPECT_GT(e["mean_contribution"]["decode attention"].get<double>(), 0);
  CliRun text = run({"simulate", spec, "--explain"});
  EXPECT_NE(text.out.find("step-time error contribution over"), std::string::npos) << text.out;
}

TEST(CliSimulate, RunsWithoutSloExitsZeroOnAMissAndSaysWhatItRan) {
  std::string path = temp_path("sim_pressure.yaml");
  std::string trace = std::string(GPUWISE_SOURCE_DIR) + "/examples/traces/azure-llm-2023-conv.csv";
  auto spec = [&](const std::string& slo, const std::string& extra) {
    std::ofstream(path) << "models: {llama: {preset: llama-2-70b}}\nservices:\n  - name: conv\n    model: llama\n"
                        << "    traffic: {trace: " << trace << "}\n" << slo
                        << "    deployment: {replicas: 1, accelerator: A100-80GB, tp: 2, batching: continuous, max_batch: 128, "
                        << "token_budget: 4096" << extra << "}\n";
  };
  spec("", ", chunked_prefill: false");
  CliRun r = run({"simulate", path, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  const auto& s = doc["services"][0];
  // The whole trace, not 100,000 or fewer: each request served, rejected or given up by its client.
  EXPECT_EQ(s["requests"].get<long long>() + s["rejected"].get<long long>() + s["timed_out"].get<long long>(), 19366);
  EXPECT_GT(s["timed_out"].get<long long>(), 0);  // clients give up on a queue that grows without end (60 s)
  EXPECT_EQ(s["client_timeout_s"], 60);
  EXPECT_FALSE(s["stopped_at_request_limit"].get<bool>());
  EXPECT_TRUE(s["slo_attainment"].is_null());
  EXPECT_EQ(s["verdict"], "overloaded");  // one replica of a 70B model against 5.5 requests/s
  EXPECT_GT(s["preemptions"].get<long long>(), 0);
  EXPECT_GT(s["recomputed_tokens"].get<long long>(), 0);
  EXPECT_EQ(s["replicas"][0]["kv_block_tokens"], 16);
  EXPECT_EQ(s["replicas"][0]["kv_capacity_tokens"].get<long long>(), s["replicas"][0]["kv_capacity_blocks"].get<long long>() * 16);
  for (const auto& t : s["timeseries"]) {
    ASSERT_GE(t["kv_used_fraction"].get<double>(), 0);
    ASSERT_LE(t["kv_used_fraction"].get<double>(), 1);
  }
  CliRun text = run({"simulate", path, "--requests", "500", "--explain"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("stopped after 500 arrivals (--requests)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("engine: vllm-v0 scheduler, recompute preemption"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("scheduler vllm-v0: vLLM 0.4-0.6"), std::string::npos) << text.out;

  // A missed SLO: exit 0, or 3 with --fail-on-slo.
  spec("    slo: {ttft_p99_s: 0.5, tpot_p99_s: 0.05}\n", ", scheduler: sarathi, gpu_memory_utilization: 0.95");
  CliRun missed = run({"simulate", path, "--requests", "2000", "--format", "json"});
  ASSERT_EQ(missed.code, 0) << missed.err;
  auto m = nlohmann::json::parse(missed.out)["services"][0];
  EXPECT_FALSE(m["slo_met"].get<bool>());
  EXPECT_GT(m["replicas"][0]["kv_capacity_blocks"].get<long long>(), s["replicas"][0]["kv_capacity_blocks"].get<long long>());
  EXPECT_EQ(run({"simulate", path, "--requests", "2000", "--fail-on-slo"}).code, 3);

  // Planning still needs the targets, named by file, line and field.
  spec("", "");
  CliRun plan = run({"plan", path});
  EXPECT_EQ(plan.code, 1);
  EXPECT_NE(plan.err.find("services.conv.slo"), std::string::npos) << plan.err;
  // Knobs that contradict each other, or that the engine lacks, are refused.
  spec("", ", scheduler: vllm-v0, chunked_prefill: true");
  CliRun contradiction = run({"simulate", path});
  EXPECT_EQ(contradiction.code, 1);
  EXPECT_NE(contradiction.err.find("deployment.chunked_prefill"), std::string::npos) << contradiction.err;
  spec("", ", scheduler: vllm-v1, preemption: swap");
  CliRun swap = run({"simulate", path});
  EXPECT_EQ(swap.code, 1);
  EXPECT_NE(swap.err.find("recompute only"), std::string::npos) << swap.err;
}

TEST(CliSimulate, BadDeploymentNamesTheKey) {
  std::string path = temp_path("sim_bad.yaml");
  std::ofstream(path) << "services:\n  - name: a\n    model: resnet-50\n    traffic: {rps: 5}\n"
                         "    slo: {latency_p99_s: 1}\n    deployment: {replicas: 2, accelerator: H1OO}\n";
  CliRun r = run({"simulate", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("services.a.deployment.accelerator"), std::string::npos) << r.err;
  std::ofstream(path) << "services:\n  - name: a\n    model: resnet-50\n    traffic: {rps: 5}\n"
                         "    slo: {latency_p99_s: 1}\n    deployment: {replicas: 2, accelerator: T4, batching: continuous}\n";
  CliRun wrong = run({"simulate", path});
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("continuous batching applies to LLMs"), std::string::npos) << wrong.err;
}

}  // namespace
}  // namespace gw

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

namespace gw {
namespace {

TEST(CliSimulate, MeasuredServiceTimeDistributionsFromTheSpec) {
  // M/M/4 from a spec: exponential service with a 1 s mean, one shared queue, 3.2 requests/s.
  std::string path = temp_path("mmc.yaml");
  std::ofstream(path) << R"(
models:
  m: {params: 1e6, service_time: {accelerator: T4, batch_ms: {1: 1000}, distribution: exponential}}
services:
  - name: queue
    model: m
    traffic: {rps: 3.2}
    slo: {latency_p99_s: 100}
    deployment: {replicas: 4, accelerator: T4, batching: none, router: shared-queue}
)";
  CliRun r = run({"simulate", path, "--requests", "300000", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  double wait = doc["services"][0]["wait_s"]["mean"].get<double>();
  double theory = erlang_c(4, 3.2) / (4.0 - 3.2);  // Erlang C / (c mu - lambda) = 0.7455 s
  EXPECT_NEAR(wait, theory, theory * 0.03);
  EXPECT_FALSE(doc["services"][0]["replicas"][0]["batch_size_distribution"].empty());
}

// The issue's worked prices on the example week: the documented keys and their arithmetic.
TEST(CliMix, ExampleWeekWithTheWorkedPrices) {
  std::string csv = std::string(GPUWISE_SOURCE_DIR) + "/examples/demand-week.csv";
  CliRun r = run({"mix", csv, "--on-demand", "4", "--reserved-1y", "2.5", "--reserved-3y", "1.8", "--spot", "1.2", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  for (const char* key : {"reserved_1y", "reserved_3y", "on_demand_unit_hours", "spot_unit_hours", "usd_per_month", "all_on_demand_usd_per_month"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["reserved_3y"], 10);
  EXPECT_EQ(doc["reserved_1y"], 0);
  // 10 units x $1.80 x 168 h + the weekday peak's 4 extra units x 75 h x $4.00, scaled to 730 h.
  double week = 10 * 1.8 * 168 + 4 * 75 * 4.0;
  EXPECT_NEAR(doc["usd_per_month"].get<double>(), week * 730 / 168, 1e-6);
  double all_on_demand = 4.0 * (63 * 6 + 75 * 14 + 30 * 8) + 4.0 * 63 * 4;  // batch work on demand too
  EXPECT_NEAR(doc["all_on_demand_usd_per_month"].get<double>(), all_on_demand * 730 / 168, 1e-6);
  // Over one year, 3-year terms cost three times their rate: 1-year units and spot instead.
  r = run({"mix", csv, "--on-demand", "4", "--reserved-1y", "2.5", "--reserved-3y", "1.8", "--spot", "1.2", "--horizon-months", "12",
           "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["reserved_3y"], 0);
  EXPECT_EQ(doc["reserved_1y"], 8);
  // The night's 4 batch units: 2 fit on reserved units firm demand (6) leaves idle, 2 go to spot.
  EXPECT_DOUBLE_EQ(doc["spot_unit_hours"].get<double>(), 63 * 2);
}

TEST(CliMix, NeedsPrices) {
  CliRun r = run({"mix", std::string(GPUWISE_SOURCE_DIR) + "/examples/demand-week.csv"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--on-demand"), std::string::npos) << r.err;
}


// --emit-k8s: five manifests per service; scale to zero where the simulation says it pays
// (the weekday dev endpoint, woken by the HTTP add-on's interceptor, since no replica exports a
// queue metric at zero), not where traffic never stops (the image service: a Prometheus trigger).
TEST(CliPlan, EmitK8sWritesManifestsWithTheirFigures) {
  std::string dir = temp_path("k8s");
  std::filesystem::remove_all(dir);
  CliRun r = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/dev-endpoint-weekdays.yaml", "--emit-k8s", dir, "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* file : {"dev-assistant-deployment.yaml", "dev-assistant-service.yaml", "dev-assistant-keda-httpscaledobject.yaml",
                           "dev-assistant-hpa.yaml", "dev-assistant-karpenter-nodepool.yaml"})
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / file)) << file;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir) / "dev-assistant-keda-scaledobject.yaml"));
  YAML::Node http = YAML::LoadFile((std::filesystem::path(dir) / "dev-assistant-keda-httpscaledobject.yaml").string());
  EXPECT_EQ(http["spec"]["replicas"]["min"].as<int>(), 0);
  EXPECT_EQ(http["spec"]["scaledownPeriod"].as<int>(), 600);  // the spec's keep_alive_s
  EXPECT_EQ(http["spec"]["scaleTargetRef"]["service"].as<std::string>(), "dev-assistant");
  // Requests within the node's allocatable memory (the comment shows the arithmetic), shm inside the limit.
  YAML::Node pod = YAML::LoadFile((std::filesystem::path(dir) / "dev-assistant-deployment.yaml").string())["spec"]["template"]["spec"];
  double memory_gib = std::stod(pod["containers"][0]["resources"]["requests"]["memory"].as<std::string>());
  double shm = std::stod(pod["volumes"][1]["emptyDir"]["sizeLimit"].as<std::string>());
  EXPECT_LE(shm * 2, memory_gib);
  std::ifstream deployment_file((std::filesystem::path(dir) / "dev-assistant-deployment.yaml").string());
  std::string deployment_text((std::istreambuf_iterator<char>(deployment_file)), {});
  EXPECT_NE(deployment_text.find("allocatable"), std::string::npos);
  r = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/sd-serving-alibaba.yaml", "--emit-k8s", dir, "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  YAML::Node keda = YAML::LoadFile((std::filesystem::path(dir) / "image-generation-keda-scaledobject.yaml").string());
  EXPECT_GE(keda["spec"]["minReplicaCount"].as<int>(), 1);
  // No keep_alive_s in that spec: the cooldown is the cold start rounded up to 30 s (167 s -> 180 s).
  EXPECT_EQ(keda["spec"]["cooldownPeriod"].as<int>(), 180);
  std::filesystem::remove_all(dir);
}

std::string spec_with_constraints(const std::string& lines) {
  std::string path = temp_path("constraints.yaml");
  std::ifstream in(std::string(GPUWISE_SOURCE_DIR) + "/examples/dev-endpoint-weekdays.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string line = "  pricing: [on-demand]";
  text.replace(text.find(line), line.size(), line + "\n" + lines);
  std::ofstream(path) << text;
  return path;
}

// The host CPU is shown where it matters (Graviton, Grace) and selectable.
TEST(CliPlan, HostCpuArchitectureIsShownAndSelectable) {
  std::string path = spec_with_constraints("  accelerators: [T4]");
  CliRun arm = run({"plan", path, "--no-simulate", "--format", "json"});
  ASSERT_EQ(arm.code, 0) << arm.err;
  EXPECT_EQ(nlohmann::json::parse(arm.out)["services"][0]["best"]["cpu_architecture"], "arm64");
  EXPECT_NE(run({"plan", path, "--no-simulate"}).out.find("linux/arm64"), std::string::npos);
  path = spec_with_constraints("  accelerators: [T4]\n  cpu_architectures: [amd64]");
  CliRun x86 = run({"plan", path, "--no-simulate", "--format", "json"});
  ASSERT_EQ(x86.code, 0) << x86.err;
  auto doc = nlohmann::json::parse(x86.out);
  EXPECT_EQ(doc["services"][0]["best"]["cpu_architecture"], "x86_64");
  for (const auto& option : doc["services"][0]["pareto"]) EXPECT_EQ(option["cpu_architecture"], "x86_64");
  std::filesystem::remove(path);
}

// Buy vs rent with the accelerator named: power and colocation for the whole server (an 8-GPU
// server draws ~1.8x its GPUs' TDP, DGX H100's 10.2 kW for 5.6 kW of GPUs), not the GPUs alone.
TEST(CliFleet, BuyVsRentPowersTheWholeServer) {
  CliRun r = run({"fleet", std::string(GPUWISE_SOURCE_DIR) + "/examples/fleet-shared-pool.yaml", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  double colocation = -1;
  for (const auto& line : doc["buy_vs_rent"]["owned_lines"])
    if (line["name"] == "colocation") colocation = line["usd_per_month"].get<double>();
  // 8 L40S x 350 W x 10.2/5.6 = 5.1 kW at $180/kW-month.
  EXPECT_NEAR(colocation, 8 * 0.350 * 10.2 / 5.6 * 180, 1e-6);
}

// A quota of zero for every family that could serve it: exit 3, the request to file named on
// stderr, and the shortfall in the JSON.
std::string spec_with_quotas(const std::string& quotas) {
  std::string path = temp_path("quota.yaml");
  std::ifstream in(std::string(GPUWISE_SOURCE_DIR) + "/examples/dev-endpoint-weekdays.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string line = "  pricing: [on-demand]";
  text.replace(text.find(line), line.size(), line + "\n  quotas:\n    aws: {" + quotas + "}");
  std::ofstream(path) << text;
  return path;
}

TEST(CliPlan, AQuotaOfZeroIsAClearMessage) {
  std::string path = spec_with_quotas("running-on-demand-g-and-vt-instances-vcpu: 0, running-on-demand-p-instances-vcpu: 0");
  CliRun r = run({"plan", path, "--format", "json"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("needs 4 vCPUs of running-on-demand-g-and-vt-instances-vcpu in aws us-east-1 (dev-assistant); the account has 0"),
            std::string::npos) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["quota_needed"].size(), 1u);
  EXPECT_EQ(doc["quota_needed"][0]["short_by"], 4);
  std::filesystem::remove(path);
}

// Where a quota rules out the cheapest option, the cheapest verified one within quota is the
// plan, and what the missing quota would save is named.
TEST(CliPlan, AQuotaThatRulesOutTheCheapestPicksTheCheapestWithin) {
  std::string path = spec_with_quotas("running-on-demand-g-and-vt-instances-vcpu: 0, running-on-demand-p-instances-vcpu: 192");
  CliRun r = run({"plan", path, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  const auto& service = doc["services"][0];
  EXPECT_EQ(service["best"]["instance_type"].get<std::string>().rfind("p", 0), 0u) << service["best"];
  EXPECT_TRUE(service["best"]["simulated"]["meets_slo"].get<bool>());
  const std::string choice = service["quota_choice"];
  EXPECT_NE(choice.find("g6.xlarge"), std::string::npos) << choice;
  EXPECT_NE(choice.find("4 more would save"), std::string::npos) << choice;
  for (const auto& need : doc["quota_needed"]) EXPECT_EQ(need["short_by"], 0) << need;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gw
