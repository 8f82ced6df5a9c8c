// A disaggregated plan's manifests against the published schemas (RBAC and ServiceAccount
// included), and wired together: the router finds exactly the pools' pods by their labels, the
// Service reaches the router alone, each pool's vLLM runs the NIXL connector in its role, the
// router may read pods and nothing else, and the NodePool holds both pools' GPUs.
#include "k8s/disaggregated_manifests.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <string>
#include <utility>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "k8s/manifest_schemas_test.h"
#include "k8s/yaml_json_test.h"

namespace gw {
namespace {

using testing_support::ManifestSchemas;
using testing_support::to_json;

DisaggregatedManifestInput rag_input() {
  ManifestInput pool;
  pool.service = "RAG";
  pool.llm = true;
  pool.cloud = "aws";
  pool.instance_types = {"p5.48xlarge"};
  pool.capacity_types = {"on-demand"};
  pool.accelerator = "H100";
  pool.model_name = "llama-3.1-70b";
  pool.startup_s = 120;
  pool.cpu_per_replica = 47.8;
  pool.memory_gib_per_replica = 511;
  DisaggregatedManifestInput in;
  in.prefill = in.decode = pool;
  in.prefill.gpus_per_replica = 2;
  in.prefill.replicas = 11;
  in.prefill.min_nodes = 3;
  in.decode.gpus_per_replica = 8;
  in.decode.replicas = 2;
  in.decode.min_nodes = 2;
  in.why_layout = "prefill:decode GPUs 22:16";
  in.link = "efa at 400 Gb/s per GPU";
  return in;
}

// The same pools where scaling them paid: the prefill pool on its GPUs' duty cycle, the decode
// pool on its queue depth (what pool-signals simulated).
DisaggregatedManifestInput rag_autoscaled_input() {
  DisaggregatedManifestInput in = rag_input();
  in.autoscaled = true;
  in.why_scaling = "pool-signals met the SLO for 18% less";
  in.prefill.duty_cycle_target_pct = 70;
  in.prefill.min_replicas = 2;
  in.prefill.max_replicas = 22;
  in.decode.queue_threshold = 56.8;
  in.decode.min_replicas = 2;
  in.decode.max_replicas = 6;
  return in;
}

// "key=value" pieces after a flag, up to the next flag.
std::map<std::string, std::string> selector_after(const YAML::Node& args, const std::string& flag) {
  std::map<std::string, std::string> out;
  bool on = false;
  for (const auto& a : args) {
    const std::string text = a.as<std::string>();
    if (text.rfind("--", 0) == 0) {
      on = text == flag;
      continue;
    }
    if (on) out[text.substr(0, text.find('='))] = text.substr(text.find('=') + 1);
  }
  return out;
}

using testing_support::string_map;

TEST_F(ManifestSchemas, DisaggregatedManifestsValidate) {
  auto manifests = disaggregated_manifests(rag_input());
  ASSERT_EQ(manifests.size(), 9u);
  for (const auto& m : manifests) {
    nlohmann::json document = to_json(YAML::Load(m.yaml));
    EXPECT_EQ(validate(document, schema_for(m.file_name)), 0) << m.file_name << "\n" << m.yaml << "\n" << last_log_;
  }
  // The extracts are strict: a verb list under a misspelt key fails.
  nlohmann::json role = to_json(YAML::Load(manifests[4].yaml));
  ASSERT_EQ(manifests[4].file_name, "rag-router-role.yaml");
  role["rules"][0]["verb"] = role["rules"][0]["verbs"];
  EXPECT_NE(validate(role, schema_for(manifests[4].file_name)), 0);
  nlohmann::json binding = to_json(YAML::Load(manifests[5].yaml));
  binding["roleRef"]["kind"] = "Roles";
  EXPECT_NE(validate(binding, schema_for(manifests[5].file_name)), 0);
}

TEST_F(ManifestSchemas, AutoscaledPoolsManifestsValidate) {
  auto manifests = disaggregated_manifests(rag_autoscaled_input());
  // The nine of fixed pools, per pool its Service, ScaledObject and HPA, and the ServiceMonitor
  // behind the decode pool's queue-depth query (the prefill pool's duty cycle is dcgm-exporter's).
  ASSERT_EQ(manifests.size(), 16u);
  for (const auto& m : manifests) {
    nlohmann::json document = to_json(YAML::Load(m.yaml));
    EXPECT_EQ(validate(document, schema_for(m.file_name)), 0) << m.file_name << "\n" << m.yaml << "\n" << last_log_;
  }
}

// Each pool's autoscalers scale that pool's Deployment alone, between its own counts, on its own
// signal; its Service (the metrics' label) selects exactly its pods; its NodePool holds its most.
TEST(DisaggregatedManifests, EachPoolIsScaledOnItsOwnSignal) {
  std::map<std::string, YAML::Node> by_file;
  for (const auto& m : disaggregated_manifests(rag_autoscaled_input())) by_file[m.file_name] = YAML::Load(m.yaml);
  for (const auto& [role, most, gpus] : {std::tuple{"prefill", 22, 2}, std::tuple{"decode", 6, 8}}) {
    const std::string name = std::string("rag-") + role;
    const YAML::Node deployment = by_file.at(name + "-deployment.yaml");
    const YAML::Node keda = by_file.at(name + "-keda-scaledobject.yaml");
    const YAML::Node hpa = by_file.at(name + "-hpa.yaml");
    const YAML::Node service = by_file.at(name + "-service.yaml");
    for (const auto& scaler : {keda, hpa}) {
      EXPECT_EQ(scaler["spec"]["scaleTargetRef"]["kind"].as<std::string>(), "Deployment");
      EXPECT_EQ(scaler["spec"]["scaleTargetRef"]["name"].as<std::string>(), deployment["metadata"]["name"].as<std::string>());
      EXPECT_EQ(string_map(scaler["metadata"]["labels"]).at("gpuwise.dev/role"), role);
    }
    EXPECT_EQ(keda["spec"]["minReplicaCount"].as<int>(), 2);
    EXPECT_EQ(keda["spec"]["maxReplicaCount"].as<int>(), most);
    EXPECT_EQ(hpa["spec"]["minReplicas"].as<int>(), 2);
    EXPECT_EQ(hpa["spec"]["maxReplicas"].as<int>(), most);
    EXPECT_EQ(service["spec"]["clusterIP"].as<std::string>(), "None");
    EXPECT_EQ(string_map(service["spec"]["selector"]), string_map(deployment["spec"]["selector"]["matchLabels"]));
    EXPECT_EQ(by_file.at(name + "-karpenter-nodepool.yaml")["spec"]["limits"]["nvidia.com/gpu"].as<int>(), most * gpus);
    const std::string query = keda["spec"]["triggers"][0]["metadata"]["query"].as<std::string>();
    if (std::string(role) == "prefill") {
      EXPECT_NE(query.find("DCGM_FI_DEV_GPU_UTIL{pod=~\"rag-prefill-"), std::string::npos) << query;
      EXPECT_EQ(keda["spec"]["triggers"][0]["metadata"]["threshold"].as<std::string>(), "70");
      EXPECT_EQ(by_file.count(name + "-servicemonitor.yaml"), 0u);
    } else {
      // The pool's vLLM gauges, by the Service the ServiceMonitor labels them with: it selects
      // that Service alone (not the router's, nor the other pool's) on its http port.
      EXPECT_NE(query.find("vllm:num_requests_waiting{service=\"" + service["metadata"]["name"].as<std::string>() + "\"}"),
                std::string::npos) << query;
      const YAML::Node monitor = by_file.at(name + "-servicemonitor.yaml");
      int selected = 0;
      for (const auto& [file, doc] : by_file) {
        if (doc["kind"].as<std::string>() != "Service") continue;
        const auto labels = string_map(doc["metadata"]["labels"]);
        bool all = true;
        for (const auto& [key, value] : string_map(monitor["spec"]["selector"]["matchLabels"]))
          all = all && labels.count(key) && labels.at(key) == value;
        if (all) {
          ++selected;
          EXPECT_EQ(file, name + "-service.yaml");
        }
      }
      EXPECT_EQ(selected, 1);
      EXPECT_EQ(monitor["spec"]["endpoints"][0]["port"].as<std::string>(), service["spec"]["ports"][0]["name"].as<std::string>());
      EXPECT_EQ(monitor["spec"]["endpoints"][0]["path"].as<std::string>(), "/metrics");
      EXPECT_EQ(keda["spec"]["triggers"][0]["metadata"]["threshold"].as<std::string>(), "56.8");
    }
  }
  EXPECT_EQ(by_file.at("rag-prefill-deployment.yaml")["spec"]["replicas"].as<int>(), 11);
}

// The triggers' queries as Prometheus evaluates them (promtool test rules): the prefill query is
// the sum over the pool's replicas of their GPUs' mean duty cycle (so that KEDA's AverageValue
// asks ceil(sum / 70) replicas, the HPA's utilization rule), counting no other pod's GPUs; the
// decode query is the pool's waiting + running requests, no other pool's.
TEST(DisaggregatedManifests, TriggerQueriesSelectTheirPoolInPrometheus) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) GTEST_FAIL() << "promtool is required (scripts/bootstrap installs it)";
  std::map<std::string, std::string> query;
  for (const auto& m : disaggregated_manifests(rag_autoscaled_input()))
    if (m.file_name.find("keda") != std::string::npos)
      query[m.file_name.substr(0, m.file_name.find("-keda"))] = YAML::Load(m.yaml)["spec"]["triggers"][0]["metadata"]["query"].as<std::string>();
  ASSERT_EQ(query.size(), 2u);
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_pool_queries_{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "rules.yml") << fmt::format(
      "groups:\n  - name: pools\n    rules:\n"
      "      - {{record: prefill_replicas_busy, expr: {}}}\n"
      "      - {{record: decode_backlog, expr: {}}}\n",
      nlohmann::json(query.at("rag-prefill")).dump(), nlohmann::json(query.at("rag-decode")).dump());
  // Two prefill replicas of 2 GPUs (80/60 and 40/40 %), a decode replica's GPUs, a pod of another
  // Deployment whose name begins alike, and the vLLM gauges of both pools.
  std::ofstream(dir / "test.yml") <<
      "rule_files: [rules.yml]\n"
      "evaluation_interval: 15s\n"
      "tests:\n"
      "  - interval: 15s\n"
      "    input_series:\n"
      "      - {series: 'DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",pod=\"rag-prefill-7c9d8f6b5d-x2k4q\"}', values: '80x4'}\n"
      "      - {series: 'DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",pod=\"rag-prefill-7c9d8f6b5d-x2k4q\"}', values: '60x4'}\n"
      "      - {series: 'DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",pod=\"rag-prefill-7c9d8f6b5d-p9wzt\"}', values: '40x4'}\n"
      "      - {series: 'DCGM_FI_DEV_GPU_UTIL{gpu=\"3\",pod=\"rag-prefill-7c9d8f6b5d-p9wzt\"}', values: '40x4'}\n"
      "      - {series: 'DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",pod=\"rag-decode-5f7b9c8d4-abcde\"}', values: '95x4'}\n"
      "      - {series: 'DCGM_FI_DEV_GPU_UTIL{gpu=\"4\",pod=\"rag-prefill-canary-7c9d8f6b5d-zzzzz\"}', values: '99x4'}\n"
      "      - {series: 'vllm:num_requests_waiting{service=\"rag-decode\",pod=\"rag-decode-5f7b9c8d4-abcde\"}', values: '3x4'}\n"
      "      - {series: 'vllm:num_requests_waiting{service=\"rag-decode\",pod=\"rag-decode-5f7b9c8d4-fghij\"}', values: '5x4'}\n"
      "      - {series: 'vllm:num_requests_running{service=\"rag-decode\",pod=\"rag-decode-5f7b9c8d4-abcde\"}', values: '20x4'}\n"
      "      - {series: 'vllm:num_requests_running{service=\"rag-decode\",pod=\"rag-decode-5f7b9c8d4-fghij\"}', values: '22x4'}\n"
      "      - {series: 'vllm:num_requests_waiting{service=\"rag-prefill\",pod=\"rag-prefill-7c9d8f6b5d-x2k4q\"}', values: '7x4'}\n"
      "      - {series: 'vllm:num_requests_running{service=\"rag-prefill\",pod=\"rag-prefill-7c9d8f6b5d-x2k4q\"}', values: '1x4'}\n"
      "    promql_expr_test:\n"
      "      - {expr: prefill_replicas_busy, eval_time: 30s, exp_samples: [{labels: prefill_replicas_busy, value: 110}]}\n"
      "      - {expr: decode_backlog, eval_time: 30s, exp_samples: [{labels: decode_backlog, value: 50}]}\n";
  const auto log = dir / "log";
  int status = std::system(fmt::format("cd {} && promtool test rules test.yml > {} 2>&1", dir.string(), log.string()).c_str());
  std::ifstream in(log);
  const std::string said((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(status, 0) << said << "\n" << query.at("rag-prefill") << "\n" << query.at("rag-decode");
  std::filesystem::remove_all(dir);
}

// A plan sized for an engine that pulls its KV between steps says what the vLLM written instead
// does, on both pools; a plan for a streamed KV says nothing of it.
TEST(DisaggregatedManifests, APlanForPulledKvSaysTheVllmWrittenReceivesItAsynchronously) {
  DisaggregatedManifestInput in = rag_input();
  for (const auto& m : disaggregated_manifests(in)) EXPECT_EQ(m.yaml.find("between_steps"), std::string::npos) << m.file_name;
  in.planned_kv_pulled_between_steps = true;
  int told = 0;
  for (const auto& m : disaggregated_manifests(in)) {
    if (m.yaml.find("kv_transfer: between_steps") == std::string::npos) continue;
    ++told;
    EXPECT_NE(m.yaml.find("asynchronously through\n# NixlConnector"), std::string::npos) << m.file_name;
    EXPECT_TRUE(YAML::Load(m.yaml)["spec"]) << m.file_name;  // still one valid document
  }
  EXPECT_EQ(told, 2);  // the prefill and the decode Deployment
}

TEST(DisaggregatedManifests, PoolsRouterAndServiceFitTogether) {
  auto manifests = disaggregated_manifests(rag_input());
  std::map<std::string, YAML::Node> by_file;
  for (const auto& m : manifests) by_file[m.file_name] = YAML::Load(m.yaml);
  const YAML::Node prefill = by_file.at("rag-prefill-deployment.yaml");
  const YAML::Node decode = by_file.at("rag-decode-deployment.yaml");
  const YAML::Node router = by_file.at("rag-router-deployment.yaml");
  const YAML::Node service = by_file.at("rag-service.yaml");
  EXPECT_EQ(prefill["spec"]["replicas"].as<int>(), 11);
  EXPECT_EQ(decode["spec"]["replicas"].as<int>(), 2);
  // The router discovers each pool by the labels its pods carry, and no other pods.
  const YAML::Node args = router["spec"]["template"]["spec"]["containers"][0]["args"];
  EXPECT_EQ(selector_after(args, "--prefill-selector"), string_map(prefill["spec"]["selector"]["matchLabels"]));
  EXPECT_EQ(selector_after(args, "--decode-selector"), string_map(decode["spec"]["selector"]["matchLabels"]));
  for (const auto& pool : {prefill, decode}) {
    auto pod_labels = string_map(pool["spec"]["template"]["metadata"]["labels"]);
    for (const auto& [key, value] : string_map(pool["spec"]["selector"]["matchLabels"])) EXPECT_EQ(pod_labels[key], value) << key;
  }
  EXPECT_NE(string_map(prefill["spec"]["selector"]["matchLabels"]), string_map(decode["spec"]["selector"]["matchLabels"]));
  // Both halves drawn by the policy the plan was verified with.
  auto policy_after = [](const YAML::Node& list, const std::string& flag) {
    for (size_t i = 0; i + 1 < list.size(); ++i)
      if (list[i].as<std::string>() == flag) return list[i + 1].as<std::string>();
    return std::string();
  };
  EXPECT_EQ(policy_after(args, "--prefill-policy"), "round_robin");
  EXPECT_EQ(policy_after(args, "--decode-policy"), "round_robin");
  DisaggregatedManifestInput two_choices = rag_input();
  two_choices.router_policy = "power_of_two";
  for (const auto& m : disaggregated_manifests(two_choices))
    if (m.file_name == "rag-router-deployment.yaml") {
      const YAML::Node p2 = YAML::Load(m.yaml)["spec"]["template"]["spec"]["containers"][0]["args"];
      EXPECT_EQ(policy_after(p2, "--prefill-policy"), "power_of_two");
      EXPECT_EQ(policy_after(p2, "--decode-policy"), "power_of_two");
    }
  // The Service selects the router's pods, not the pools'.
  EXPECT_EQ(string_map(service["spec"]["selector"]), string_map(router["spec"]["selector"]["matchLabels"]));
  EXPECT_EQ(string_map(service["spec"]["selector"]).at("gpuwise.dev/role"), "router");
  // Each pool's vLLM in its NIXL role, its side channel on the pod's address.
  for (const auto& [pool, role] : {std::pair{prefill, "kv_producer"}, std::pair{decode, "kv_consumer"}}) {
    const YAML::Node container = pool["spec"]["template"]["spec"]["containers"][0];
    std::string kv;
    for (size_t i = 0; i + 1 < container["args"].size(); ++i)
      if (container["args"][i].as<std::string>() == "--kv-transfer-config") kv = container["args"][i + 1].as<std::string>();
    auto config = nlohmann::json::parse(kv);
    EXPECT_EQ(config["kv_connector"], "NixlConnector");
    EXPECT_EQ(config["kv_role"], role);
    EXPECT_EQ(container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(), "status.podIP");
  }
  EXPECT_EQ(prefill["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<std::string>(), "2");
  EXPECT_EQ(decode["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<std::string>(), "8");
  // The router reads pods in its namespace and nothing else, under its own ServiceAccount.
  const YAML::Node role = by_file.at("rag-router-role.yaml");
  EXPECT_EQ(role["rules"].size(), 1u);
  EXPECT_EQ(role["rules"][0]["resources"][0].as<std::string>(), "pods");
  EXPECT_EQ(role["rules"][0]["verbs"].size(), 3u);
  const YAML::Node binding = by_file.at("rag-router-rolebinding.yaml");
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(), role["metadata"]["name"].as<std::string>());
  EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(), router["spec"]["template"]["spec"]["serviceAccountName"].as<std::string>());
  EXPECT_EQ(by_file.at("rag-router-serviceaccount.yaml")["metadata"]["name"].as<std::string>(),
            router["spec"]["template"]["spec"]["serviceAccountName"].as<std::string>());
  // Each pool on its own NodePool's nodes (so that its hostname spread counts its nodes alone),
  // whose limit is its GPUs: 11 x 2 and 2 x 8.
  const YAML::Node prefill_nodes = by_file.at("rag-prefill-karpenter-nodepool.yaml");
  const YAML::Node decode_nodes = by_file.at("rag-decode-karpenter-nodepool.yaml");
  EXPECT_EQ(prefill_nodes["spec"]["limits"]["nvidia.com/gpu"].as<int>(), 22);
  EXPECT_EQ(decode_nodes["spec"]["limits"]["nvidia.com/gpu"].as<int>(), 16);
  EXPECT_NE(prefill_nodes["metadata"]["name"].as<std::string>(), decode_nodes["metadata"]["name"].as<std::string>());
  for (const auto& [pool, nodes] : {std::pair{prefill, prefill_nodes}, std::pair{decode, decode_nodes}}) {
    EXPECT_EQ(string_map(pool["spec"]["template"]["spec"]["nodeSelector"]), string_map(nodes["spec"]["template"]["metadata"]["labels"]));
    for (const auto& c : pool["spec"]["template"]["spec"]["topologySpreadConstraints"])
      EXPECT_EQ(string_map(c["labelSelector"]["matchLabels"]), string_map(pool["spec"]["selector"]["matchLabels"]));
  }
  EXPECT_NE(string_map(prefill_nodes["spec"]["template"]["metadata"]["labels"]), string_map(decode_nodes["spec"]["template"]["metadata"]["labels"]));
  // No autoscaler: the counts are the plan's, verified by simulation.
  for (const auto& m : manifests) {
    EXPECT_EQ(m.file_name.find("keda"), std::string::npos) << m.file_name;
    EXPECT_EQ(m.file_name.find("hpa"), std::string::npos) << m.file_name;
  }
}

}  // namespace
}  // namespace gw
