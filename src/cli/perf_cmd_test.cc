// The CLI end to end: plan's failure exits and perf (step times, throughput, calibration).
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
