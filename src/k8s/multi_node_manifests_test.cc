// Manifests for replicas across nodes against the published schemas, and wired together: a group
// per replica of one pod per node, each pod a whole node's GPUs, the leader serving vLLM with the
// plan's tensor and pipeline parallel sizes, the workers joining the leader's Ray head, the
// Service (or the vLLM Router) reaching the leaders alone, and the NodePool holding every node
// the replicas take.
#include "k8s/multi_node_manifests.h"

#include <gtest/gtest.h>
#include <map>
#include <string>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "k8s/manifest_schemas_test.h"
#include "k8s/yaml_json_test.h"

namespace gw {
namespace {

using testing_support::ManifestSchemas;
using testing_support::to_json;

ManifestInput llama405_input() {
  ManifestInput in;
  in.service = "Chat 405B";
  in.llm = true;
  in.cloud = "aws";
  in.instance_types = {"p5.48xlarge"};
  in.capacity_types = {"on-demand"};
  in.accelerator = "H100";
  in.model_name = "llama-3.1-405b";
  in.gpus_per_replica = 8;
  in.nodes_per_replica = 2;
  in.replicas = in.min_replicas = in.max_replicas = in.peak_replicas = 3;
  in.startup_s = 900;
  in.cpu_per_replica = 187.5;
  in.memory_gib_per_replica = 1900;
  return in;
}

TEST_F(ManifestSchemas, ReplicasAcrossNodesValidateAndHangTogether) {
  auto manifests = multi_node_manifests(llama405_input());
  ASSERT_EQ(manifests.size(), 3u);
  YAML::Node lws, service, pool;
  for (const auto& m : manifests) {
    const YAML::Node doc = YAML::Load(m.yaml);
    EXPECT_EQ(validate(to_json(doc), schema_for(m.file_name)), 0) << m.file_name << "\n" << last_log_ << "\n" << m.yaml;
    if (m.file_name == "chat-405b-leaderworkerset.yaml") lws = doc;
    if (m.file_name == "chat-405b-service.yaml") service = doc;
    if (m.file_name == "chat-405b-karpenter-nodepool.yaml") pool = doc;
  }
  ASSERT_TRUE(lws && service && pool);
  // Three replicas, each a group of two pods (one per node).
  EXPECT_EQ(lws["spec"]["replicas"].as<int>(), 3);
  const YAML::Node group = lws["spec"]["leaderWorkerTemplate"];
  EXPECT_EQ(group["size"].as<int>(), 2);
  EXPECT_EQ(group["restartPolicy"].as<std::string>(), "RecreateGroupOnPodRestart");
  const YAML::Node leader = group["leaderTemplate"], worker = group["workerTemplate"];
  for (const YAML::Node& pod : {leader, worker}) {
    const YAML::Node container = pod["spec"]["containers"][0];
    EXPECT_EQ(container["resources"]["requests"]["nvidia.com/gpu"].as<std::string>(), "8");
    EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"].as<std::string>(), "8");
    EXPECT_EQ(pod["spec"]["nodeSelector"]["gpuwise.dev/service"].as<std::string>(), "chat-405b");
    EXPECT_EQ(pod["spec"]["initContainers"][0]["name"].as<std::string>(), "fetch-weights");  // every node loads its stages
  }
  const std::string serve = leader["spec"]["containers"][0]["args"][0].as<std::string>();
  EXPECT_NE(serve.find("leader --ray_cluster_size=$(LWS_GROUP_SIZE)"), std::string::npos) << serve;
  EXPECT_NE(serve.find("--tensor-parallel-size 8 --pipeline-parallel-size 2"), std::string::npos) << serve;
  EXPECT_NE(serve.find("--port 8000"), std::string::npos) << serve;
  const std::string join = worker["spec"]["containers"][0]["args"][0].as<std::string>();
  EXPECT_NE(join.find("worker --ray_address=$(LWS_LEADER_ADDRESS)"), std::string::npos) << join;
  EXPECT_FALSE(worker["spec"]["containers"][0]["ports"]);  // workers serve no HTTP
  // The Service selects the leaders' labels, not the workers'.
  for (const auto& label : service["spec"]["selector"]) {
    const std::string key = label.first.as<std::string>(), value = label.second.as<std::string>();
    EXPECT_EQ(leader["metadata"]["labels"][key].as<std::string>(), value) << key;
    if (key == "gpuwise.dev/role") {
      EXPECT_NE(worker["metadata"]["labels"][key].as<std::string>(), value);
    }
  }
  EXPECT_EQ(service["spec"]["ports"][0]["port"].as<int>(), 8000);
  // The NodePool holds 3 replicas x 2 nodes x 8 GPUs, and labels the nodes the pods select.
  EXPECT_EQ(pool["spec"]["limits"]["nvidia.com/gpu"].as<int>(), 48);
  EXPECT_EQ(pool["spec"]["template"]["metadata"]["labels"]["gpuwise.dev/service"].as<std::string>(), "chat-405b");
  EXPECT_NE(manifests[0].yaml.find("Replicas fixed at the plan's 3."), std::string::npos);
}

// Autoscaled: KEDA's ScaledObject and the HPA scale the LeaderWorkerSet itself (whole groups, on
// the leaders' queue gauges), and the NodePool holds the most replicas either may ask for.
TEST_F(ManifestSchemas, ReplicasAcrossNodesScaleAsGroups) {
  ManifestInput in = llama405_input();
  in.min_replicas = 2;
  in.max_replicas = 5;
  in.queue_threshold = 40;
  auto manifests = multi_node_manifests(in);
  ASSERT_EQ(manifests.size(), 6u);  // and the ServiceMonitor of the leaders' Service, what the trigger's query reads
  int scalers = 0;
  for (const auto& m : manifests) {
    const YAML::Node doc = YAML::Load(m.yaml);
    EXPECT_EQ(validate(to_json(doc), schema_for(m.file_name)), 0) << m.file_name << "\n" << last_log_ << "\n" << m.yaml;
    if (m.file_name == "chat-405b-keda-scaledobject.yaml" || m.file_name == "chat-405b-hpa.yaml") {
      ++scalers;
      EXPECT_EQ(doc["spec"]["scaleTargetRef"]["apiVersion"].as<std::string>(), "leaderworkerset.x-k8s.io/v1") << m.file_name;
      EXPECT_EQ(doc["spec"]["scaleTargetRef"]["kind"].as<std::string>(), "LeaderWorkerSet") << m.file_name;
      EXPECT_EQ(doc["spec"]["scaleTargetRef"]["name"].as<std::string>(), "chat-405b") << m.file_name;
    }
    if (m.file_name == "chat-405b-keda-scaledobject.yaml") {
      EXPECT_EQ(doc["spec"]["minReplicaCount"].as<int>(), 2);
      EXPECT_EQ(doc["spec"]["maxReplicaCount"].as<int>(), 5);
    }
    if (m.file_name == "chat-405b-karpenter-nodepool.yaml") {
      EXPECT_EQ(doc["spec"]["limits"]["nvidia.com/gpu"].as<int>(), 5 * 2 * 8);
    }
    if (m.file_name == "chat-405b-servicemonitor.yaml") {
      EXPECT_EQ(doc["spec"]["selector"]["matchLabels"]["gpuwise.dev/service"].as<std::string>(), "chat-405b");
    }
    if (m.file_name == "chat-405b-leaderworkerset.yaml") {
      EXPECT_EQ(doc["spec"]["replicas"].as<int>(), 3);  // starts at the plan's count
      EXPECT_NE(m.yaml.find("scales whole groups, 2..5"), std::string::npos) << m.yaml;
    }
  }
  EXPECT_EQ(scalers, 2);
}

// Behind the vLLM Router (as the plan is verified by default): its discovery and the replicas'
// headless Service take the groups' leaders alone (the workers serve no HTTP), clients call the
// router's Service, and the autoscalers read the leaders' series through the headless Service.
TEST_F(ManifestSchemas, ReplicasAcrossNodesAreRoutedToTheirLeaders) {
  ManifestInput in = llama405_input();
  in.vllm_router_policy = "round_robin";
  in.min_replicas = 2;
  in.max_replicas = 5;
  in.queue_threshold = 40;
  const auto manifests = multi_node_manifests(in);
  expect_each_validates(manifests);
  const auto by_file = testing_support::by_file_name(manifests);
  ASSERT_EQ(by_file.count("chat-405b-router-deployment.yaml"), 1u);
  const YAML::Node group = by_file.at("chat-405b-leaderworkerset.yaml")["spec"]["leaderWorkerTemplate"];
  const auto leader = testing_support::string_map(group["leaderTemplate"]["metadata"]["labels"]);
  const auto worker = testing_support::string_map(group["workerTemplate"]["metadata"]["labels"]);
  // The router's --selector items, as labels.
  std::map<std::string, std::string> discovered;
  bool in_selector = false;
  for (const auto& a : by_file.at("chat-405b-router-deployment.yaml")["spec"]["template"]["spec"]["containers"][0]["args"]) {
    const std::string arg = a.as<std::string>();
    if (arg.rfind("--", 0) == 0) in_selector = arg == "--selector";
    else if (in_selector) discovered[arg.substr(0, arg.find('='))] = arg.substr(arg.find('=') + 1);
  }
  EXPECT_TRUE(testing_support::selects(discovered, leader));
  EXPECT_FALSE(testing_support::selects(discovered, worker));
  const YAML::Node pods = by_file.at("chat-405b-replicas-service.yaml");
  EXPECT_TRUE(testing_support::selects(testing_support::string_map(pods["spec"]["selector"]), leader));
  EXPECT_FALSE(testing_support::selects(testing_support::string_map(pods["spec"]["selector"]), worker));
  EXPECT_EQ(by_file.at("chat-405b-service.yaml")["spec"]["selector"]["gpuwise.dev/router"].as<std::string>(), "chat-405b");
  const std::string query = by_file.at("chat-405b-keda-scaledobject.yaml")["spec"]["triggers"][0]["metadata"]["query"].as<std::string>();
  EXPECT_NE(query.find("service=\"chat-405b-replicas\""), std::string::npos) << query;
}

}  // namespace
}  // namespace gw
