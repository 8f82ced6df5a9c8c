// The CLI end to end: simulate, unit suffixes, precisions plan refuses.
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
  // AWQ weights on a V100: no kernels (AWQ needs Turing); the same bytes named gptq run there.
  std::ofstream(path) << "constraints: {accelerators: [V100-32GB, T4]}\n"
                      << "models: {chat: {preset: llama-3.2-1b, precision: awq}}\n"
                      << "services:\n  - name: chat\n    model: chat\n    traffic: {rps: 1}\n"
                      << "    tokens: {input: 300, output: 100}\n    slo: {ttft_p99_s: 5, tpot_p99_s: 0.2}\n";
  CliRun awq = run({"plan", path, "--explain", "--no-simulate", "--format", "json"});
  ASSERT_EQ(awq.code, 0) << awq.err << awq.out;
  const auto awq_plan = nlohmann::json::parse(awq.out)["services"][0];
  EXPECT_EQ(awq_plan["best"]["accelerator"], "T4");
  for (const auto& row : awq_plan["pareto"]) EXPECT_NE(row["accelerator"], "V100-32GB");
  EXPECT_NE(awq_plan["assumptions"].dump().find("not considered: V100-32GB: Pascal/Volta has no AWQ kernels"), std::string::npos)
      << awq_plan["assumptions"].dump();
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

// Speculative decoding gains at low load and loses at high load, by the step model alone: at one
// request a second the decode steps are memory-bound and verifying five tokens costs about what
// one does; at twelve they are compute-bound and the rejected proposals are paid for. The sign
// flip vLLM published for Llama-3-70B on 4 x H100 (1.5x faster at QPS 1, 1.4x slower at high QPS).
TEST(CliSimulate, SpeculativeDecodingGainsAtLowLoadAndLosesAtHighLoad) {
  long long kv_blocks[2] = {0, 0};  // without, with speculation
  auto mean_latency = [&kv_blocks](double rps, bool speculative) {
    std::string path = temp_path("spec.yaml");
    std::ofstream(path) << fmt::format(R"(
models: {{m: {{preset: llama-3.1-70b}}}}
services:
  - name: chat
    model: m
    traffic: {{rps: {}}}
    tokens: {{input: {{mean: 250, p99: 1500}}, output: {{mean: 250, p99: 1000}}}}
    deployment:
      accelerator: H100
      tp: 4
      replicas: 1
{}
)", rps, speculative ? "      speculative: {method: draft, draft_model: llama-3.2-1b, tokens: 4, acceptance: 0.535}" : "");
    CliRun r = run({"simulate", path, "--requests", "1500", "--format", "json"});
    EXPECT_EQ(r.code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out)["services"][0];
    kv_blocks[speculative] = doc["replicas"][0]["kv_capacity_blocks"].get<long long>();
    return doc["latency_s"]["mean"].get<double>();
  };
  const double low_gain = mean_latency(1, false) / mean_latency(1, true);
  const double high_loss = mean_latency(12, true) / mean_latency(12, false);
  EXPECT_GT(low_gain, 1.2);
  EXPECT_LT(low_gain, 2.0);
  EXPECT_GT(high_loss, 1.2);
  // The draft's weights and KV per token, and a full batch's lookahead slots (256 sequences x 4
  // tokens = 64 blocks of 16), come out of the cache.
  EXPECT_LT(kv_blocks[1], kv_blocks[0] - 64);

  std::string bad = temp_path("spec-bad.yaml");
  std::ofstream(bad) << R"(
models: {m: {preset: llama-3.1-70b}}
services:
  - name: chat
    model: m
    traffic: {rps: 1}
    tokens: {input: {mean: 250}, output: {mean: 250}}
    deployment:
      accelerator: H100
      tp: 4
      replicas: 1
      speculative: {method: draft, draft_model: llama-9b, tokens: 4, acceptance: 0.5}
)";
  CliRun r = run({"simulate", bad});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("deployment.speculative.draft_model"), std::string::npos) << r.err;
}

// Llama-3.1-70B in bf16 (131 GiB of weights) does not fit on one A100-80GB; in four pipeline
// stages of one device each it does (33 GiB per device), and the replica runs as four
// micro-batch lanes, which --explain says. Speculative decoding beside pipeline stages is
// refused, by name.
TEST(CliSimulate, PipelineStagesFitWhatTensorParallelismAloneCannot) {
  auto spec = [](const std::string& layout, const std::string& extra) {
    std::string path = temp_path("pp.yaml");
    std::ofstream(path) << "models: {m: {preset: llama-3.1-70b, precision: bf16}}\n"
                           "services:\n  - name: chat\n    model: m\n    traffic: {rps: 2}\n"
                           "    tokens: {input: {mean: 500}, output: {mean: 200}}\n"
                           "    deployment: {accelerator: A100-80GB, replicas: 1, " + layout + extra + "}\n";
    return path;
  };
  CliRun one = run({"simulate", spec("tp: 1", ""), "--requests", "200"});
  EXPECT_EQ(one.code, 1);
  EXPECT_NE(one.err.find("does not fit on 1 x A100-80GB"), std::string::npos) << one.err;
  CliRun pp = run({"simulate", spec("tp: 1, pp: 4", ""), "--requests", "200", "--format", "json"});
  ASSERT_EQ(pp.code, 0) << pp.err;
  const auto doc = nlohmann::json::parse(pp.out)["services"][0];
  EXPECT_EQ(doc["replicas"].size(), 4u);  // one replica, four lanes
  for (const auto& lane : doc["replicas"]) EXPECT_TRUE(lane.contains("stage_wait_fraction")) << lane;
  EXPECT_EQ(doc["requests"].get<long long>(), 200);
  CliRun explained = run({"simulate", spec("tp: 1, pp: 4", ""), "--requests", "200", "--explain"});
  ASSERT_EQ(explained.code, 0) << explained.err;
  EXPECT_NE(explained.out.find("4 micro-batch lanes"), std::string::npos) << explained.out;
  // vLLM V1 (the default scheduler) keeps one pool of KV blocks for the micro-batches; V0 a share each.
  EXPECT_NE(explained.out.find("per replica, one pool for its 4 micro-batch lanes"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("deployment.pipeline_kv: shared"), std::string::npos) << explained.out;
  CliRun v0 = run({"simulate", spec("tp: 1, pp: 4", ", scheduler: vllm-v0"), "--requests", "200", "--explain"});
  ASSERT_EQ(v0.code, 0) << v0.err;
  EXPECT_NE(v0.out.find("per micro-batch lane (4 lanes a replica, each its own share)"), std::string::npos) << v0.out;
  CliRun v0_shared = run({"simulate", spec("tp: 1, pp: 4", ", scheduler: vllm-v0, pipeline_kv: shared"), "--requests", "200", "--explain"});
  ASSERT_EQ(v0_shared.code, 0) << v0_shared.err;
  EXPECT_NE(v0_shared.out.find("one pool for its 4 micro-batch lanes"), std::string::npos) << v0_shared.out;
  EXPECT_NE(explained.out.find("once per micro-batch, not at every stage"), std::string::npos) << explained.out;
  // Calibrated, the host time the calibration holds is still the micro-batch's, said so.
  const std::string calibration = temp_path("pp-calibration.csv");
  std::ofstream(calibration) << "accelerator,compute,compute_8bit,memory,network,overhead_per_layer_s,measurements,median_abs_error\n"
                                "A100-80GB,0.5283,0.4000,0.5171,0.7000,2e-05,2,0.0000\n";
  CliRun calibrated = run({"simulate", spec("tp: 1, pp: 4", ""), "--requests", "200", "--explain", "--calibration", calibration});
  ASSERT_EQ(calibrated.code, 0) << calibrated.err;
  EXPECT_NE(calibrated.out.find("once per micro-batch, not at every stage"), std::string::npos) << calibrated.out;
  CliRun speculative = run({"simulate", spec("tp: 1, pp: 4", ", speculative: {method: ngram, tokens: 3, acceptance: 0.5}"), "--requests", "200"});
  EXPECT_EQ(speculative.code, 1);
  EXPECT_NE(speculative.err.find("deployment.pp"), std::string::npos) << speculative.err;
}

// A spec of one prefill and one decode replica of Llama-3.1-8B on H100s at 4 requests/s.
std::string pooled_spec_path(const std::string& file, const std::string& disaggregation) {
  std::string path = temp_path(file);
  std::ofstream(path) << "models: {m: {preset: llama-3.1-8b, precision: bf16}}\n"
                         "services:\n  - name: chat\n    model: m\n    traffic: {rps: 4}\n"
                         "    tokens: {input: {mean: 1000}, output: {mean: 100}}\n"
                         "    deployment:\n      replicas:\n"
                         "        - {accelerator: H100, tp: 1, count: 1, role: prefill}\n"
                         "        - {accelerator: H100, tp: 1, count: 1, role: decode}\n"
                         "      disaggregation: "
                      << disaggregation << "\n";
  return path;
}

// A prefill pool and a decode pool on one accelerator: its step model is said once.
TEST(CliSimulate, ExplainSaysEachAcceleratorsStepModelOnce) {
  std::string path = pooled_spec_path("pools.yaml", "{link: nvlink}");
  CliRun explained = run({"simulate", path, "--requests", "200", "--explain"});
  ASSERT_EQ(explained.code, 0) << explained.err;
  const size_t first = explained.out.find("step times on H100");
  ASSERT_NE(first, std::string::npos) << explained.out;
  EXPECT_EQ(explained.out.find("step times on H100", first + 1), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("per decode replica ("), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("tokens per decode replica, from"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("kv_transfer: overlapped"), std::string::npos) << explained.out;
}

// The decode replica pulling each request's KV between its steps: said under --explain, and the
// time its steps stopped reported beside the transfers (none when the KV streams behind the prefill).
TEST(CliSimulate, KvPulledBetweenStepsIsExplainedAndItsStallReported) {
  auto stall_of = [](const std::string& kv_transfer, std::string* explained) {
    const std::string path = pooled_spec_path("pulled-" + kv_transfer + ".yaml", "{link: nvlink, kv_transfer: " + kv_transfer + "}");
    CliRun json = run({"simulate", path, "--requests", "200", "--format", "json"});
    EXPECT_EQ(json.code, 0) << json.err;
    if (explained) *explained = run({"simulate", path, "--requests", "200", "--explain"}).out;
    auto doc = nlohmann::json::parse(json.out, nullptr, false);
    if (doc.is_discarded() || !doc["services"][0]["kv_transfer"].is_object()) return -1.0;
    EXPECT_EQ(doc["services"][0]["kv_transfer"]["transfers"].get<long long>(), 200);
    return doc["services"][0]["kv_transfer"]["pull_stall_s"].get<double>();
  };
  std::string explained;
  const double pulled = stall_of("between_steps", &explained);
  // 200 pulls, each 1,000 tokens' KV (128 KiB a token) over NVLink plus a worker call: at least the calls.
  EXPECT_GT(pulled, 200 * 0.00049);
  EXPECT_EQ(stall_of("overlapped", nullptr), 0);
  EXPECT_NE(explained.find("kv_transfer: between_steps"), std::string::npos) << explained;
  EXPECT_NE(explained.find("pulled by the decode replica between its steps"), std::string::npos) << explained;
}

// gpt-oss attends within 128 tokens on half its layers: those keep only the window's blocks (vLLM
// V1's hybrid allocator), so a replica holds about twice the long sequences it would if every
// layer kept every token, and at a load that fills it, runs the larger batches.
TEST(CliSimulate, SlidingWindowLayersHoldOnlyTheirWindowsBlocks) {
  std::ifstream preset(std::string(GPUWISE_SOURCE_DIR) + "/catalog/models/gpt-oss-120b.json");
  nlohmann::json config = nlohmann::json::parse(preset);
  config.erase("sliding_window");
  config["layer_types"] = std::vector<std::string>(36, "full_attention");
  const std::string windowless = temp_path("windowless-config.json");
  std::ofstream(windowless) << config.dump();
  auto simulate_with = [&](const std::string& model, const std::string& path) {
    std::ofstream(path) << "models: {oss: {" << model << "}}\n"
                        << "services:\n  - name: long\n    model: oss\n    traffic: {rps: 6}\n"
                        << "    tokens: {input: 16000, output: 400}\n    slo: {ttft_p99_s: 30, tpot_p99_s: 0.2}\n"
                        << "    deployment: {replicas: 1, accelerator: H100, batching: continuous, max_batch: 256}\n";
    CliRun r = run({"simulate", path, "--requests", "400", "--format", "json"});
    EXPECT_EQ(r.code, 0) << r.err;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    return nlohmann::json(doc["services"][0]["replicas"][0]);
  };
  const auto windowed = simulate_with("preset: gpt-oss-120b", temp_path("windowed.yaml"));
  const auto every_token = simulate_with("config: " + windowless, temp_path("windowless.yaml"));
  EXPECT_EQ(windowed["kv_layer_groups"], 2);  // 18 full-attention layers, 18 sliding
  EXPECT_FALSE(every_token.contains("kv_layer_groups"));
  // The same bytes: a block is half the layers' here, so twice the blocks, the same all-layer tokens.
  EXPECT_EQ(windowed["kv_capacity_blocks"].get<long long>(), 2 * every_token["kv_capacity_blocks"].get<long long>());
  EXPECT_EQ(windowed["kv_capacity_tokens"], every_token["kv_capacity_tokens"]);
  // A 16,400-token sequence holds 1,025 full blocks and 9 of its window's: 1,034 against 2,050.
  const double ratio = windowed["mean_batch"].get<double>() / every_token["mean_batch"].get<double>();
  EXPECT_GT(ratio, 1.7) << windowed.dump() << "\n" << every_token.dump();
  EXPECT_LT(ratio, 2.1);
  CliRun text = run({"simulate", temp_path("windowed.yaml"), "--requests", "50", "--explain"});
  EXPECT_NE(text.out.find("KV blocks by layer group"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("18 full-attention + 18 sliding-window layers (window 128: 9 blocks of 16"), std::string::npos)
      << text.out;
  // Disaggregated, a KV connector moves the cache: vLLM turns its hybrid manager off, every token kept.
  const std::string split = temp_path("windowed-disaggregated.yaml");
  std::ofstream(split) << "models: {oss: {preset: gpt-oss-120b}}\nservices:\n  - name: long\n    model: oss\n"
                       << "    traffic: {rps: 2}\n    tokens: {input: 16000, output: 400}\n"
                       << "    slo: {ttft_p99_s: 30, tpot_p99_s: 0.2}\n"
                       << "    deployment: {replicas: [{accelerator: H100, count: 1, role: prefill}, {accelerator: H100, count: 1, "
                       << "role: decode}], batching: continuous, disaggregation: {link: nvlink}}\n";
  CliRun disaggregated = run({"simulate", split, "--requests", "30", "--format", "json"});
  ASSERT_EQ(disaggregated.code, 0) << disaggregated.err;
  const nlohmann::json split_doc = nlohmann::json::parse(disaggregated.out);
  for (const auto& replica : split_doc["services"][0]["replicas"]) EXPECT_FALSE(replica.contains("kv_layer_groups")) << replica.dump();
  CliRun said = run({"simulate", split, "--requests", "30", "--explain"});
  EXPECT_NE(said.out.find("sliding-window layers keep every token's KV, as the model's other layers do: vLLM turns its "
                          "hybrid KV cache manager off where a KV connector moves the cache"),
            std::string::npos)
      << said.out;
}

}  // namespace
}  // namespace gw
