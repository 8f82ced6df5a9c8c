// The CLI end to end: simulate's measured service times, mix, plan's manifests, host CPUs and quotas, fleet's buy versus rent.
#include "cli/app.h"

#include "perf/layer_operators.h"
#include "plan/queueing.h"
#include "core/formatting.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>
#include <unistd.h>
#include "cli/cli_test_run.h"

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
  // Each unit's two prices per month, as the headline is: the chosen ones add up to it (the table
  // showed them over the curve's week beside a monthly total).
  double chosen_per_month = 0;
  for (const auto& level : doc["levels"])
    chosen_per_month += level["choice"] == "on-demand" ? level["usd_per_month_if_not_reserved"].get<double>()
                                                       : level["usd_per_month_if_reserved"].get<double>();
  EXPECT_NEAR(chosen_per_month, doc["usd_per_month"].get<double>(), 1e-6);
  CliRun table = run({"mix", csv, "--on-demand", "4", "--reserved-1y", "2.5", "--reserved-3y", "1.8"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("per month if reserved"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(format_usd(1.8 * 730)), std::string::npos) << table.out;  // a unit on a 3-year term
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

// A spec's demand in replicas as the plan verified them: Qwen2.5-72B on 2 x H100 replicas needs
// five at its 9 requests/s peak in simulation (the screen's capacity said three), and never fewer
// than min_replicas (2) while requests come (one replica served the quiet hours).
TEST(CliMix, ASpecsReplicasAreThePlansVerifiedCountNeverUnderItsFloor) {
  const std::string path = temp_path("mix_support.yaml");
  std::ofstream(path) << "constraints: {clouds: [gcp], pricing: [on-demand, reserved-1y], accelerators: [H100]}\n"
                      << "models: {m: {preset: qwen2.5-72b, precision: fp8}}\n"
                      << "services:\n  - name: support\n    model: m\n"
                      << "    traffic: {rps: {average: 3, peak: 9}, profile: weekday-business-hours}\n"
                      << "    tokens: {input: {mean: 2500, p99: 8000}, output: 300}\n"
                      << "    slo: {ttft_p99_s: 1.5, tpot_p99_s: 0.05}\n";
  CliRun r = run({"mix", path, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["peak_units"].get<double>(), 5) << doc["source"];
  ASSERT_GE(doc["levels"].size(), 2u);
  // Every hour has requests (the profile's quietest hours keep some): two replicas throughout.
  EXPECT_DOUBLE_EQ(doc["levels"][0]["firm_hour_share"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(doc["levels"][1]["firm_hour_share"].get<double>(), 1.0);
  EXPECT_NE(doc["source"].get<std::string>().find("at least 2 while requests come"), std::string::npos) << doc["source"];
  std::filesystem::remove(path);
}

TEST(CliMix, NeedsPrices) {
  CliRun r = run({"mix", std::string(GPUWISE_SOURCE_DIR) + "/examples/demand-week.csv"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--on-demand"), std::string::npos) << r.err;
}


// --emit-k8s: five manifests per service; scale to zero where the simulation says it pays
// (the weekday dev endpoint, woken by the HTTP add-on's interceptor through its router, since no
// replica exports a queue metric at zero), not where traffic never stops (the image service: a Prometheus trigger).
TEST(CliPlan, EmitK8sWritesManifestsWithTheirFigures) {
  std::string dir = temp_path("k8s");
  std::filesystem::remove_all(dir);
  CliRun r = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/dev-endpoint-weekdays.yaml", "--emit-k8s", dir, "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* file : {"dev-assistant-deployment.yaml", "dev-assistant-service.yaml", "dev-assistant-interceptorroute.yaml",
                           "dev-assistant-keda-scaledobject.yaml", "dev-assistant-hpa.yaml", "dev-assistant-karpenter-nodepool.yaml"})
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / file)) << file;
  YAML::Node from_zero = YAML::LoadFile((std::filesystem::path(dir) / "dev-assistant-keda-scaledobject.yaml").string());
  EXPECT_EQ(from_zero["spec"]["minReplicaCount"].as<int>(), 0);
  EXPECT_EQ(from_zero["spec"]["cooldownPeriod"].as<int>(), 600);  // the spec's keep_alive_s
  EXPECT_EQ(from_zero["spec"]["triggers"][0]["type"].as<std::string>(), "external-push");  // the interceptor's count
  YAML::Node route = YAML::LoadFile((std::filesystem::path(dir) / "dev-assistant-interceptorroute.yaml").string());
  EXPECT_EQ(route["spec"]["target"]["service"].as<std::string>(), "dev-assistant");
  // That Service is the vLLM Router's, ready once a replica is: the interceptor waits for it, and
  // the pool at zero is routed as it was verified.
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / "dev-assistant-router-deployment.yaml"));
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

// The manifests route as the plan was verified: behind the vLLM Router with round_robin by
// default (--explain says so), with power_of_two where the spec's deployment.router says so, and
// through a plain Service (kube-proxy, at random) where it says random.
TEST(CliPlan, EmitK8sRoutesAsThePlanWasVerified) {
  auto emit = [](const std::string& router, const std::string& dir) {
    const std::string spec = temp_path("routed.yaml");
    std::ofstream(spec) << "constraints: {clouds: [aws], pricing: [on-demand], accelerators: [L4]}\n"
                           "models: {m: {preset: llama-3.1-8b, precision: bf16}}\n"
                           "services:\n  - name: chat\n    model: m\n    traffic: {rps: 4}\n    tokens: {input: 1000, output: 200}\n"
                           "    slo: {ttft_p99_s: 2.0, tpot_p99_s: 0.1}\n"
                        << (router.empty() ? "" : "    deployment: {router: " + router + "}\n");
    std::filesystem::remove_all(dir);
    // Routing, not figures, is checked here: a shorter replay keeps five plans quick under the sanitizers.
    return run({"plan", spec, "--explain", "--emit-k8s", dir, "--sim-requests", "4000"});
  };
  auto text_of = [](const std::filesystem::path& path) {
    std::ifstream in(path.string());
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  const std::filesystem::path dir = temp_path("k8s-routed");
  CliRun r = emit("", dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("simulated with the routing plan --emit-k8s deploys: the vLLM Router in front"), std::string::npos) << r.out;
  EXPECT_NE(text_of(dir / "chat-router-deployment.yaml").find("--policy, round_robin"), std::string::npos);
  EXPECT_EQ(YAML::LoadFile((dir / "chat-service.yaml").string())["spec"]["selector"]["gpuwise.dev/router"].as<std::string>(), "chat");
  EXPECT_TRUE(std::filesystem::exists(dir / "chat-replicas-service.yaml"));
  // One router by default, moved off a lost node within seconds.
  EXPECT_EQ(YAML::LoadFile((dir / "chat-router-deployment.yaml").string())["spec"]["replicas"].as<int>(), 1);

  r = emit("power-of-two", dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("simulated with the spec's deployment.router (how you route): the vLLM Router in front with --policy power_of_two"),
            std::string::npos) << r.out;
  EXPECT_NE(text_of(dir / "chat-router-deployment.yaml").find("--policy, power_of_two"), std::string::npos);

  r = emit("random", dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kube-proxy sends each connection to a ready replica at random"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "chat-router-deployment.yaml"));
  EXPECT_EQ(YAML::LoadFile((dir / "chat-service.yaml").string())["spec"]["selector"]["gpuwise.dev/service"].as<std::string>(), "chat");

  // deployment.router_replicas asks for more routers than one, each dealing its own turns, and the
  // plan is verified so.
  r = emit("round-robin, router_replicas: 2", dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node two = YAML::LoadFile((dir / "chat-router-deployment.yaml").string());
  EXPECT_EQ(two["spec"]["replicas"].as<int>(), 2);
  EXPECT_FALSE(two["spec"]["template"]["spec"]["tolerations"]);

  // A policy the vLLM Router lacks that HAProxy has: the fewest requests in flight (leastconn).
  r = emit("join-shortest-queue", dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("the spec's deployment.router (how you route): HAProxy in front with balance leastconn"), std::string::npos) << r.out;
  EXPECT_NE(text_of(dir / "chat-router-configmap.yaml").find("balance leastconn"), std::string::npos);
  EXPECT_NE(text_of(dir / "chat-router-deployment.yaml").find("haproxy:"), std::string::npos);
  EXPECT_EQ(YAML::LoadFile((dir / "chat-service.yaml").string())["spec"]["selector"]["gpuwise.dev/router"].as<std::string>(), "chat");
  std::filesystem::remove_all(dir);
}

// A plan on GCP TPUs: the manifests run there. The pods request TPU chips in vLLM's TPU image
// and select a GKE ComputeClass of the plan's slice (no Karpenter NodePool: it does not run on
// GKE); a slice GKE has no node for (TPU v3) is a clear error that writes nothing.
TEST(CliPlan, EmitK8sForTpusWritesAGkeComputeClass) {
  auto emit = [](const std::string& accelerator, const std::string& dir) {
    const std::string spec = temp_path("tpu-" + accelerator + ".yaml");
    std::ofstream(spec) << "constraints: {clouds: [gcp], pricing: [on-demand], accelerators: [" << accelerator << "]}\n"
                           "models: {m: {preset: llama-3.1-8b, precision: bf16}}\n"
                           "services:\n  - name: chat\n    model: m\n    traffic: {rps: 6}\n    tokens: {input: 1000, output: 200}\n"
                           "    slo: {ttft_p99_s: 2.0, tpot_p99_s: 0.1}\n";
    std::filesystem::remove_all(dir);
    return run({"plan", spec, "--emit-k8s", dir, "--sim-requests", "3000", "-q"});
  };
  const std::filesystem::path dir = temp_path("k8s-tpu");
  CliRun r = emit("TPU-v6e", dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "chat-karpenter-nodepool.yaml"));
  const YAML::Node cc = YAML::LoadFile((dir / "chat-gke-computeclass.yaml").string());
  EXPECT_EQ(cc["spec"]["priorities"][0]["tpu"]["type"].as<std::string>(), "tpu-v6e-slice");
  const YAML::Node pod = YAML::LoadFile((dir / "chat-deployment.yaml").string())["spec"]["template"]["spec"];
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/compute-class"].as<std::string>(), "chat-tpu");
  EXPECT_TRUE(pod["containers"][0]["resources"]["limits"]["google.com/tpu"]);
  EXPECT_NE(pod["containers"][0]["image"].as<std::string>().find("vllm-tpu"), std::string::npos);

  r = emit("TPU-v3", dir.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("runs as a Cloud TPU VM, not as a GKE node"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// Batch jobs get what runs them: per job an Indexed Job on its cron schedule (a CronJob), the
// driver's ConfigMap and the nodes, the parts read from and written to the spec's prefixes.
TEST(CliPlan, EmitK8sWritesABatchJobsCronJob) {
  const std::filesystem::path dir = temp_path("k8s-batch");
  std::filesystem::remove_all(dir);
  CliRun r = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/nightly-batch.yaml", "--emit-k8s", dir.string(), "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* job : {"nightly-summaries", "churn-scoring"})
    for (const char* file : {"-cronjob.yaml", "-driver-configmap.yaml", "-karpenter-nodepool.yaml"})
      EXPECT_TRUE(std::filesystem::exists(dir / (std::string(job) + file))) << job << file;
  const YAML::Node cron = YAML::LoadFile((dir / "nightly-summaries-cronjob.yaml").string());
  EXPECT_EQ(cron["spec"]["schedule"].as<std::string>(), "0 1 * * *");
  const YAML::Node job = cron["spec"]["jobTemplate"]["spec"];
  EXPECT_EQ(job["completions"].as<int>(), 8);  // the plan's replicas: eight B200s on one node
  EXPECT_NE(job["template"]["spec"]["initContainers"][1]["command"][2].as<std::string>().find("s3://ticket-batches/summaries/input/part-"),
            std::string::npos);
  // Its spot price is the Atlanta Local Zone's: the plan says so and the nodes are kept there.
  EXPECT_NE(r.out.find("us-east-1 Local Zone use1-atl2-az1 p6-b200.48xlarge (spot)"), std::string::npos) << r.out;
  const YAML::Node needs = YAML::LoadFile((dir / "nightly-summaries-karpenter-nodepool.yaml").string())["spec"]["template"]["spec"]["requirements"];
  EXPECT_EQ(needs[2]["key"].as<std::string>(), "topology.k8s.aws/zone-id");
  EXPECT_EQ(needs[2]["values"][0].as<std::string>(), "use1-atl2-az1");
  EXPECT_EQ(YAML::LoadFile((dir / "churn-scoring-cronjob.yaml").string())["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"][3]
                ["value"].as<std::string>(),
            "kserve-v2");
  std::filesystem::remove_all(dir);
}

// --format csv is a table for a spreadsheet, not the text report.
TEST(CliPlan, FormatCsvIsARowPerWorkload) {
  CliRun r = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/nightly-batch.yaml", "--format", "csv", "--sim-requests", "2000"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("kind,name,model,accelerator,", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\nbatch_job,nightly-summaries,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("cost-latency frontier"), std::string::npos);
}

// A model served one request at a time was verified with one queue its replicas share (M/G/c);
// --emit-k8s puts HAProxy in front with that queue (each replica takes one request at a time),
// not a Service that spreads requests at random. Batched per replica: round robin.
TEST(CliPlan, EmitK8sQueuesAClassicModelInHaproxy) {
  auto emit = [](const std::string& batching, const std::string& dir) {
    const std::string spec = temp_path("classic-routed.yaml");
    std::ofstream(spec) << "constraints: {clouds: [aws], pricing: [on-demand], accelerators: [T4]}\n"
                           "models:\n  spam-model:\n    params: 110e6\n"
                           "    service_time: {accelerator: T4, batch_ms: {1: 50, 8: 58, 16: 70, 32: 92}}\n"
                           "services:\n  - name: spam\n    model: spam-model\n    traffic: {rps: 40}\n"
                           "    slo: {latency_p99_s: 0.5}\n    batching: "
                        << batching << "\n";
    std::filesystem::remove_all(dir);
    return run({"plan", spec, "--explain", "--emit-k8s", dir});
  };
  auto text_of = [](const std::filesystem::path& path) {
    std::ifstream in(path.string());
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  const std::filesystem::path dir = temp_path("k8s-classic");
  CliRun r = emit("none", dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("simulated with the routing plan --emit-k8s deploys: HAProxy in front"), std::string::npos) << r.out;
  const std::string config = text_of(dir / "spam-router-configmap.yaml");
  EXPECT_NE(config.find("balance leastconn"), std::string::npos) << config;
  EXPECT_NE(config.find(" maxconn 1 "), std::string::npos) << config;
  EXPECT_NE(text_of(dir / "spam-keda-scaledobject.yaml").find("haproxy_backend_current_queue"), std::string::npos);
  EXPECT_EQ(text_of(dir / "spam-service.yaml").find("verified with"), std::string::npos);

  r = emit("dynamic", dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("HAProxy in front with balance roundrobin"), std::string::npos) << r.out;
  EXPECT_NE(text_of(dir / "spam-router-configmap.yaml").find("balance roundrobin"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A disaggregated plan's manifests: the plan with --emit-k8s is the plan without it (both pools
// kept), written as a Deployment per pool, the vLLM Router with its RBAC, its Service and a NodePool per pool.
TEST(CliPlan, EmitK8sWritesADisaggregatedPlansPools) {
  const std::string spec = temp_path("rag.yaml");
  std::ofstream(spec) << "constraints: {clouds: [aws], pricing: [on-demand], accelerators: [H100]}\n"
                         "models: {m: {preset: llama-3.1-70b, precision: fp8}}\n"
                         "services:\n  - name: rag\n    model: m\n    traffic: {rps: 16}\n    tokens: {input: 6000, output: 300}\n"
                         "    slo: {ttft_p99_s: 2.0, tpot_p99_s: 0.025}\n";
  const std::string dir = temp_path("k8s-rag");
  std::filesystem::remove_all(dir);
  CliRun plain = run({"plan", spec, "--format", "json", "-q"});
  CliRun emitted = run({"plan", spec, "--format", "json", "-q", "--emit-k8s", dir});
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(emitted.code, 0) << emitted.err;
  const auto best = nlohmann::json::parse(emitted.out)["services"][0]["best"];
  EXPECT_EQ(best, nlohmann::json::parse(plain.out)["services"][0]["best"]);
  ASSERT_TRUE(best.contains("disaggregated")) << best.dump();
  for (const char* file : {"rag-prefill-deployment.yaml", "rag-decode-deployment.yaml", "rag-router-deployment.yaml",
                           "rag-router-serviceaccount.yaml", "rag-router-role.yaml", "rag-router-rolebinding.yaml", "rag-service.yaml",
                           "rag-prefill-karpenter-nodepool.yaml", "rag-decode-karpenter-nodepool.yaml"})
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / file)) << file;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir) / "rag-deployment.yaml"));
  YAML::Node decode = YAML::LoadFile((std::filesystem::path(dir) / "rag-decode-deployment.yaml").string());
  EXPECT_EQ(decode["spec"]["replicas"].as<int>(), best["disaggregated"]["decode_replicas"].get<int>());
  YAML::Node prefill_nodes = YAML::LoadFile((std::filesystem::path(dir) / "rag-prefill-karpenter-nodepool.yaml").string());
  YAML::Node decode_nodes = YAML::LoadFile((std::filesystem::path(dir) / "rag-decode-karpenter-nodepool.yaml").string());
  EXPECT_EQ(prefill_nodes["spec"]["limits"]["nvidia.com/gpu"].as<int>(), best["disaggregated"]["prefill_gpus"].get<int>());
  EXPECT_EQ(decode_nodes["spec"]["limits"]["nvidia.com/gpu"].as<int>(), best["disaggregated"]["decode_gpus"].get<int>());
  // A flat rate: scaling the pools was simulated and did not pay, so their counts stay fixed and say why.
  for (const char* file : {"rag-prefill-keda-scaledobject.yaml", "rag-decode-hpa.yaml", "rag-prefill-service.yaml"})
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir) / file)) << file;
  std::ifstream decode_file((std::filesystem::path(dir) / "rag-decode-deployment.yaml").string());
  const std::string decode_text((std::istreambuf_iterator<char>(decode_file)), {});
  EXPECT_NE(decode_text.find("no autoscaler is written: the fixed pools cost $"), std::string::npos) << decode_text;
  std::filesystem::remove_all(dir);
}

// Where the traffic falls from its peak, scaling the pools pays: each pool's KEDA ScaledObject on
// its own signal (the prefill pool's GPU duty cycle at the spec's target, the decode pool's queue
// depth), never under the service's min_replicas, the Deployments starting at the plan's counts,
// and each NodePool holding the most its autoscaler may ask for.
TEST(CliPlan, EmitK8sScalesDisaggregatedPoolsWhereThatPays) {
  const std::string dir = temp_path("k8s-rag-scaled");
  std::filesystem::remove_all(dir);
  CliRun r = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/rag-autoscaled-pools.yaml", "--format", "json", "-q", "--emit-k8s", dir});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto best = nlohmann::json::parse(r.out)["services"][0]["best"];
  const std::filesystem::path out(dir);
  YAML::Node prefill = YAML::LoadFile((out / "rag-prefill-keda-scaledobject.yaml").string());
  YAML::Node decode = YAML::LoadFile((out / "rag-decode-keda-scaledobject.yaml").string());
  EXPECT_NE(prefill["spec"]["triggers"][0]["metadata"]["query"].as<std::string>().find("DCGM_FI_DEV_GPU_UTIL"), std::string::npos);
  // The prefill pool holds the duty cycle at which the plan's count met the SLO at the peak (the
  // spec sets no target).
  EXPECT_EQ(prefill["spec"]["triggers"][0]["metadata"]["threshold"].as<std::string>(),
            fmt::format("{:.3g}", best["simulated"]["prefill_duty_cycle"].get<double>() * 100));
  EXPECT_NE(decode["spec"]["triggers"][0]["metadata"]["query"].as<std::string>().find("vllm:num_requests_running{service=\"rag-decode\"}"),
            std::string::npos);
  EXPECT_GT(std::stod(decode["spec"]["triggers"][0]["metadata"]["threshold"].as<std::string>()), 1);
  for (const auto& [scaler, role, replicas] : {std::tuple{prefill, "prefill", best["replicas"].get<int>()},
                                               std::tuple{decode, "decode", best["disaggregated"]["decode_replicas"].get<int>()}}) {
    EXPECT_EQ(scaler["spec"]["minReplicaCount"].as<int>(), 2) << role;  // the service's min_replicas
    const int most = scaler["spec"]["maxReplicaCount"].as<int>();
    EXPECT_GE(most, replicas) << role;
    YAML::Node deployment = YAML::LoadFile((out / fmt::format("rag-{}-deployment.yaml", role)).string());
    EXPECT_EQ(deployment["spec"]["replicas"].as<int>(), replicas) << role;
    YAML::Node nodes = YAML::LoadFile((out / fmt::format("rag-{}-karpenter-nodepool.yaml", role)).string());
    const int gpus_per_replica = std::stoi(deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<std::string>());
    EXPECT_EQ(nodes["spec"]["limits"]["nvidia.com/gpu"].as<int>(), most * gpus_per_replica) << role;
    EXPECT_TRUE(std::filesystem::exists(out / fmt::format("rag-{}-service.yaml", role))) << role;
    EXPECT_TRUE(std::filesystem::exists(out / fmt::format("rag-{}-hpa.yaml", role))) << role;
  }
  // The decode pool's query reads vLLM's gauges through its ServiceMonitor; the prefill pool's reads dcgm-exporter's.
  EXPECT_TRUE(std::filesystem::exists(out / "rag-decode-servicemonitor.yaml"));
  EXPECT_FALSE(std::filesystem::exists(out / "rag-prefill-servicemonitor.yaml"));
  std::ifstream prefill_file((out / "rag-prefill-deployment.yaml").string());
  const std::string prefill_text((std::istreambuf_iterator<char>(prefill_file)), {});
  EXPECT_NE(prefill_text.find("scaling each pool on its own met the SLO for less: pool-signals"), std::string::npos) << prefill_text;
  std::filesystem::remove_all(dir);
}

// A reserved plan that autoscales was billed as a reserved floor and on-demand bursts: each
// Deployment says to reserve the floor (a pool's min_replicas, none for a service scaled to
// zero), not the peak's count the plan priced.
std::string reserved_variant(const std::string& example) {
  std::ifstream in(std::string(GPUWISE_SOURCE_DIR) + "/examples/" + example);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string line = "pricing: [on-demand]";
  text.replace(text.find(line), line.size(), "pricing: [reserved-1y]");
  const std::string path = temp_path("reserved-" + example);
  std::ofstream(path) << text;
  return path;
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(CliPlan, EmitK8sSaysToReserveTheFloorTheAutoscalerWasBilledAt) {
  const std::filesystem::path dir = temp_path("k8s-reserved");
  std::filesystem::remove_all(dir);
  CliRun r = run({"plan", reserved_variant("rag-autoscaled-pools.yaml"), "-q", "--emit-k8s", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(dir / "rag-prefill-keda-scaledobject.yaml"));
  const std::string prefill = file_text(dir / "rag-prefill-deployment.yaml"), decode = file_text(dir / "rag-decode-deployment.yaml");
  EXPECT_NE(prefill.find("# Pricing: reserved-1y for the floor: the simulation reserved this pool's 2 replica(s) every hour"),
            std::string::npos) << prefill;
  EXPECT_NE(prefill.find("reserve the floor's nodes, not the peak's 11 replicas'"), std::string::npos) << prefill;
  EXPECT_NE(decode.find("reserve the floor's nodes.\n"), std::string::npos) << decode;  // the floor is the plan's two
  std::filesystem::remove_all(dir);
  r = run({"plan", reserved_variant("dev-endpoint-weekdays.yaml"), "-q", "--emit-k8s", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(dir / "dev-assistant-interceptorroute.yaml"));
  EXPECT_NE(file_text(dir / "dev-assistant-deployment.yaml").find("reserve none"), std::string::npos);
  std::filesystem::remove_all(dir);
  r = run({"plan", std::string(GPUWISE_SOURCE_DIR) + "/examples/dev-endpoint-weekdays.yaml", "-q", "--emit-k8s", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(file_text(dir / "dev-assistant-deployment.yaml").find("# Pricing:"), std::string::npos);  // on demand: nothing to reserve
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

// fleet's pools name the instance and its host CPU in the table (a Graviton host needs arm64
// images), and cpu_architectures moves them to x86_64 hosts.
TEST(CliFleet, PoolsNameTheirInstanceAndHostCpu) {
  const std::string pool = "models:\n  ranker: {preset: bert-base, precision: fp16}\nservices:\n  - name: rank\n    model: ranker\n"
                           "    traffic: {rps: 40}\n    slo: {latency_p99_s: 0.08}\n  - name: rerank\n    model: ranker\n    traffic: {rps: 10}\n"
                           "    slo: {latency_p99_s: 0.2}\nfleet:\n  shared_pools: true\n";
  for (const std::string arch : {"", "  cpu_architectures: [x86_64]\n"}) {
    const std::string path = temp_path("pool-host.yaml");
    std::ofstream(path) << "version: 1\nname: pool-host\nconstraints:\n  clouds: [aws]\n  pricing: [on-demand]\n"
                           "  accelerators: [T4]\n" + arch + pool;
    CliRun r = run({"fleet", path});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find(arch.empty() ? "g5g.xlarge (arm64)" : "g4dn.xlarge (x86_64)"), std::string::npos) << r.out;
    std::filesystem::remove(path);
  }
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

// Buy vs rent naming only the GPU: the rent side is the catalog's price for it, said where from.
TEST(CliFleet, BuyVsRentRentsAtTheCatalogsPriceWhenNoneIsGiven) {
  const std::string path = temp_path("buy-h100.yaml");
  std::ofstream(path) << "name: buy or rent\nconstraints: {clouds: [aws]}\nfleet:\n  buy_vs_rent: {gpus: 16, purchase_usd: 500000, "
                         "accelerator: H100, utilization: 0.7}\n";
  CliRun r = run({"fleet", path, "--format", "json", "--explain"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_GT(doc["buy_vs_rent"]["on_demand_usd_per_month"].get<double>(), 0);
  bool said = false;
  for (const auto& a : doc["assumptions"]) said |= a.get<std::string>().find("rent prices per GPU-hour from aws ") == 0;
  EXPECT_TRUE(said) << doc["assumptions"].dump();
  std::ofstream(path) << "name: buy or rent\nfleet:\n  buy_vs_rent: {gpus: 16, purchase_usd: 500000, watts_per_gpu: 700, utilization: 0.7}\n";
  CliRun unnamed = run({"fleet", path});
  EXPECT_EQ(unnamed.code, 1);
  EXPECT_NE(unnamed.err.find("field 'fleet.buy_vs_rent.on_demand_usd_per_gpu_hour': required unless accelerator names the GPU"),
            std::string::npos)
      << unnamed.err;
  std::filesystem::remove(path);
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
// plan (replayed in full: it was the frontier's 5,000-request run), and what the missing quota
// would save is named.
TEST(CliPlan, AQuotaThatRulesOutTheCheapestPicksTheCheapestWithin) {
  std::string path = spec_with_quotas("running-on-demand-g-and-vt-instances-vcpu: 0, running-on-demand-p-instances-vcpu: 192");
  CliRun r = run({"plan", path, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  const auto& service = doc["services"][0];
  EXPECT_EQ(service["best"]["instance_type"].get<std::string>().rfind("p", 0), 0u) << service["best"];
  EXPECT_TRUE(service["best"]["simulated"]["meets_slo"].get<bool>());
  // Replayed in full as every plan's best is (the frontier's rows had shorter runs).
  EXPECT_EQ(service["best"]["simulated"]["requests"], 20000) << service["best"];
  const std::string choice = service["quota_choice"];
  EXPECT_NE(choice.find("g6.xlarge"), std::string::npos) << choice;
  EXPECT_NE(choice.find("4 more would save"), std::string::npos) << choice;
  for (const auto& need : doc["quota_needed"]) EXPECT_EQ(need["short_by"], 0) << need;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gw


namespace gw {
namespace {

// A Llama 3.1 405B bf16 chat service on H100s (replicas of two nodes), with this traffic and
// these lines of the service besides; the spec's path.
std::string llama405_spec(const std::string& file, const std::string& traffic, const std::string& service_lines = "") {
  const std::string path = temp_path(file);
  std::ofstream(path) << "version: 1\nconstraints: {pricing: [on-demand], accelerators: [H100]}\n"
                         "models: {big: {preset: llama-3.1-405b, precision: bf16}}\nservices:\n  - name: chat\n    model: big\n"
                      << service_lines << "    traffic: " << traffic
                      << "\n    tokens: {input: 1000, output: 200}\n    slo: {ttft_p99_s: 5, tpot_p99_s: 0.1}\n";
  return path;
}

// A 405B service on 2-node replicas (a 977 s cold start) on weekday business hours: queue depth
// alone falls behind the morning ramp, so the manifests add each hour's replicas as KEDA cron
// triggers, in the profile's clock, asked a cold start before 09:00.
TEST(CliPlan, SlowReplicasOnAProfileGetCronTriggersAhead) {
  const std::string path = llama405_spec("llama405-scheduled.yaml",
                                         "{rps: {average: 3, peak: 8}, profile: weekday-business-hours, timezone: America/New_York}",
                                         "    min_replicas: 1\n");
  const std::string dir = temp_path("k8s-scheduled");
  std::filesystem::remove_all(dir);
  CliRun k8s = run({"plan", path, "-q", "--emit-k8s", dir});
  ASSERT_EQ(k8s.code, 0) << k8s.err;
  std::ifstream keda(dir + "/chat-keda-scaledobject.yaml");
  const std::string scaler((std::istreambuf_iterator<char>(keda)), {});
  EXPECT_NE(scaler.find("queue depth alone missed the SLO"), std::string::npos) << scaler;
  const YAML::Node triggers = YAML::Load(scaler)["spec"]["triggers"];
  ASSERT_EQ(triggers.size(), 2u) << scaler;
  const YAML::Node cron = triggers[1]["metadata"];
  EXPECT_EQ(cron["timezone"].as<std::string>(), "America/New_York");
  EXPECT_EQ(cron["end"].as<std::string>(), "0 18 * * 1-5");
  int minute = 0, hour = 0;
  ASSERT_EQ(std::sscanf(cron["start"].as<std::string>().c_str(), "%d %d", &minute, &hour), 2) << scaler;
  EXPECT_LE(hour * 60 + minute, 9 * 60 - 977 / 60) << scaler;  // a cold start before the hour
  EXPECT_GE(hour * 60 + minute, 8 * 60) << scaler;
  EXPECT_GT(std::stoi(cron["desiredReplicas"].as<std::string>()), 1);
  // Without KEDA: the HPA's floor set to the same count at the same times by CronJobs.
  std::map<std::string, std::string> floor_at;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().find("-hpa-schedule-") == std::string::npos ||
        entry.path().filename().string().find("cronjob") == std::string::npos)
      continue;
    const YAML::Node job = YAML::LoadFile(entry.path().string());
    EXPECT_EQ(job["spec"]["timeZone"].as<std::string>(), "America/New_York");
    floor_at[job["spec"]["schedule"].as<std::string>()] = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"][4].as<std::string>();
  }
  ASSERT_EQ(floor_at.size(), 2u);
  EXPECT_EQ(floor_at[cron["start"].as<std::string>()], "--patch={\"spec\":{\"minReplicas\":" + cron["desiredReplicas"].as<std::string>() + "}}");
  EXPECT_EQ(floor_at["0 18 * * 1-5"], "--patch={\"spec\":{\"minReplicas\":1}}");
  std::filesystem::remove_all(dir);
  std::filesystem::remove(path);
}

// A replica across nodes: planned and simulated as such (JSON says its stages), written as a
// LeaderWorkerSet (no Deployment of pods asking for more GPUs than a node has), and autoscaled
// by `scale` in whole replicas, each priced as all its nodes.
TEST(CliPlan, ReplicasAcrossNodesArePlannedAndWrittenAsGroupsOfPods) {
  const std::string path = llama405_spec("llama405.yaml", "{rps: 1}");
  CliRun r = run({"plan", path, "--format", "json", "-q"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto best = nlohmann::json::parse(r.out)["services"][0]["best"];
  EXPECT_EQ(best["tensor_parallel"], 8);
  EXPECT_EQ(best["pipeline_parallel"], 2);
  EXPECT_EQ(best["instances"].get<int>(), 2 * best["replicas"].get<int>());
  EXPECT_TRUE(best["simulated"]["meets_slo"].get<bool>()) << best;

  const std::string dir = temp_path("k8s-across-nodes");
  std::filesystem::remove_all(dir);
  CliRun k8s = run({"plan", path, "-q", "--emit-k8s", dir});
  ASSERT_EQ(k8s.code, 0) << k8s.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/chat-leaderworkerset.yaml"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/chat-service.yaml"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/chat-karpenter-nodepool.yaml"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/chat-deployment.yaml"));
  // Autoscaled in whole groups: KEDA scales the LeaderWorkerSet.
  std::ifstream keda(dir + "/chat-keda-scaledobject.yaml");
  const std::string scaler((std::istreambuf_iterator<char>(keda)), {});
  EXPECT_NE(scaler.find("    kind: LeaderWorkerSet\n"), std::string::npos) << scaler;
  std::ifstream lws(dir + "/chat-leaderworkerset.yaml");
  const std::string text((std::istreambuf_iterator<char>(lws)), {});
  EXPECT_NE(text.find(fmt::format("  replicas: {}\n", best["replicas"].get<int>())), std::string::npos) << text;
  EXPECT_NE(text.find("    size: 2\n"), std::string::npos) << text;
  std::filesystem::remove_all(dir);
  CliRun scale = run({"scale", path, "-q", "--format", "json"});
  ASSERT_EQ(scale.code, 0) << scale.err;
  const auto scaled = nlohmann::json::parse(scale.out)["services"];
  ASSERT_EQ(scaled.size(), 1u);
  const auto& replica = scaled[0]["replica"];
  EXPECT_EQ(replica["pipeline_parallel"], 2);
  EXPECT_EQ(replica["tensor_parallel"], 8);
  EXPECT_NEAR(replica["usd_per_replica_hour"].get<double>(),
              best["usd_per_hour"].get<double>() / best["replicas"].get<double>(), 1e-6);
  const double hours = scaled[0]["duration_s"].get<double>() / 3600;
  for (const auto& policy : scaled[0]["policies"]) {
    // In replicas of 16 GPUs: GPU-hours are replica-hours x 16, dollars replica-hours x the replica's price.
    EXPECT_NEAR(policy["gpu_hours"].get<double>(), 16 * policy["replica_hours"].get<double>(), 1e-6) << policy["name"];
    EXPECT_NEAR(policy["usd"].get<double>(), policy["replica_hours"].get<double>() * replica["usd_per_replica_hour"].get<double>(),
                1e-3) << policy["name"];
    if (policy["name"] == "static-peak") {
      EXPECT_NEAR(policy["replica_hours"].get<double>(), best["replicas"].get<double>() * hours, 0.01 * hours) << policy;
    }
    for (const auto& point : policy["series"]) EXPECT_LE(point["ready"].get<int>(), policy["max_replicas"].get<int>()) << policy["name"];
  }
  bool said = false;
  for (const auto& a : scaled[0]["assumptions"]) said = said || a.get<std::string>().find("a replica spans 2 nodes") == 0;
  EXPECT_TRUE(said) << scaled[0]["assumptions"];
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gw
