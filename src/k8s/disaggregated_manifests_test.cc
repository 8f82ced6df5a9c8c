// A disaggregated plan's manifests against the published schemas (RBAC and ServiceAccount
// included), and wired together: the router finds exactly the pools' pods by their labels, the
// Service reaches the router alone, each pool's vLLM runs the NIXL connector in its role, the
// router may read pods and nothing else, and the NodePool holds both pools' GPUs.
#include "k8s/disaggregated_manifests.h"

#include <gtest/gtest.h>
#include <map>
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

std::map<std::string, std::string> as_map(const YAML::Node& node) {
  std::map<std::string, std::string> out;
  for (const auto& e : node) out[e.first.as<std::string>()] = e.second.as<std::string>();
  return out;
}

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
  EXPECT_EQ(selector_after(args, "--prefill-selector"), as_map(prefill["spec"]["selector"]["matchLabels"]));
  EXPECT_EQ(selector_after(args, "--decode-selector"), as_map(decode["spec"]["selector"]["matchLabels"]));
  for (const auto& pool : {prefill, decode}) {
    auto pod_labels = as_map(pool["spec"]["template"]["metadata"]["labels"]);
    for (const auto& [key, value] : as_map(pool["spec"]["selector"]["matchLabels"])) EXPECT_EQ(pod_labels[key], value) << key;
  }
  EXPECT_NE(as_map(prefill["spec"]["selector"]["matchLabels"]), as_map(decode["spec"]["selector"]["matchLabels"]));
  // The Service selects the router's pods, not the pools'.
  EXPECT_EQ(as_map(service["spec"]["selector"]), as_map(router["spec"]["selector"]["matchLabels"]));
  EXPECT_EQ(as_map(service["spec"]["selector"]).at("gpuwise.dev/role"), "router");
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
    EXPECT_EQ(as_map(pool["spec"]["template"]["spec"]["nodeSelector"]), as_map(nodes["spec"]["template"]["metadata"]["labels"]));
    for (const auto& c : pool["spec"]["template"]["spec"]["topologySpreadConstraints"])
      EXPECT_EQ(as_map(c["labelSelector"]["matchLabels"]), as_map(pool["spec"]["selector"]["matchLabels"]));
  }
  EXPECT_NE(as_map(prefill_nodes["spec"]["template"]["metadata"]["labels"]), as_map(decode_nodes["spec"]["template"]["metadata"]["labels"]));
  // No autoscaler: the counts are the plan's, verified by simulation.
  for (const auto& m : manifests) {
    EXPECT_EQ(m.file_name.find("keda"), std::string::npos) << m.file_name;
    EXPECT_EQ(m.file_name.find("hpa"), std::string::npos) << m.file_name;
  }
}

}  // namespace
}  // namespace gw
