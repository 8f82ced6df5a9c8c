// The command line end to end: outputs, JSON keys, exit codes and error messages.
#include "cli/app.h"
#include "cli/cli_test_run.h"

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

// gpt-oss-120b as it ships (MXFP4 experts, bf16 attention): one 80 GB A100 or H100, as vLLM's
// recipe runs it; refused where no MXFP4 kernel runs (TPU, Turing), the recipe named.
TEST(Cli, FitGptOssInMxfp4OnOneEightyGigabyteGpu) {
  CliRun r = run({"fit", "gpt-oss-120b", "--precision", "mxfp4", "--accelerator", "A100-80GB", "H100", "TPU-v6e", "T4",
                  "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_NEAR(doc["weights_bytes"].get<double>() / (1024.0 * 1024 * 1024), 60.8, 0.6);  // the checkpoint's 60.8 GiB
  ASSERT_EQ(doc["fits"].size(), 2u);
  for (const auto& fit : doc["fits"]) EXPECT_EQ(fit["count"].get<int>(), 1) << fit["accelerator"];
  ASSERT_EQ(doc["does_not_fit"].size(), 2u);
  for (const auto& refused : doc["does_not_fit"]) {
    EXPECT_TRUE(refused["precision_unsupported"].get<bool>());
    EXPECT_NE(refused["reason"].get<std::string>().find("no MXFP4 kernels"), std::string::npos) << refused["reason"];
  }
  // No precision given: the checkpoint's, as vLLM serves it.
  CliRun text = run({"fit", "gpt-oss-120b", "--accelerator", "H100"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("inference mxfp4"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Ada/Hopper has no fp4 tensor cores: MXFP4 experts run weight-only"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("OpenAI/GPT-OSS.md"), std::string::npos) << text.out;
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
  EXPECT_NO_THROW({
    nlohmann::json parsed = nlohmann::json::parse(in);
    (void)parsed;
  });
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
