// One LLM pool kept warm behind the vLLM Router: the objects validate against their published
// schemas, and they are wired as the plan was verified: the router's selector takes exactly the
// replicas' pods (not its own), clients' Service reaches the router alone, the replicas' headless
// Service is the one the ServiceMonitor selects and the autoscalers' query names, and the router
// reads pods under its own identity. A pool scaled to zero is woken through its router.
#include "k8s/vllm_router_manifests.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "k8s/manifest_schemas_test.h"
#include "k8s/manifests.h"
#include "k8s/yaml_json_test.h"
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace gw {
namespace {

using testing_support::by_file_name;
using testing_support::ManifestSchemas;
using testing_support::selects;
using testing_support::string_map;

ManifestInput routed_chat_input() {
  ManifestInput in;
  in.service = "chat";
  in.llm = true;
  in.vllm_router_policy = "round_robin";
  in.queue_threshold = 21.74;
  in.min_replicas = 2;
  in.max_replicas = 6;
  in.peak_replicas = 3;
  in.why_min = "the service's min_replicas";
  in.why_threshold = "capacity x latency";
  in.cloud = "aws";
  in.instance_types = {"g6.12xlarge"};
  in.capacity_types = {"on-demand"};
  in.gpus_per_replica = 2;
  in.replicas = 3;
  in.model_name = "llama-3.1-8b";
  in.accelerator = "L4";
  in.usd_per_replica_hour = 1.6;
  in.cold_start_s = 181;
  return in;
}

// The router's --selector arguments as labels: the key=value items after the flag.
std::map<std::string, std::string> router_selector(const YAML::Node& router) {
  std::map<std::string, std::string> out;
  const YAML::Node args = router["spec"]["template"]["spec"]["containers"][0]["args"];
  bool in_selector = false;
  for (const auto& a : args) {
    const std::string arg = a.as<std::string>();
    if (arg.rfind("--", 0) == 0) {
      in_selector = arg == "--selector";
      continue;
    }
    if (in_selector) out[arg.substr(0, arg.find('='))] = arg.substr(arg.find('=') + 1);
  }
  return out;
}

std::string arg_after(const YAML::Node& router, const std::string& flag) {
  const YAML::Node args = router["spec"]["template"]["spec"]["containers"][0]["args"];
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i].as<std::string>() == flag) return args[i + 1].as<std::string>();
  return "";
}

TEST_F(ManifestSchemas, RoutedPoolManifestsValidate) {
  auto manifests = service_manifests(routed_chat_input());
  // Deployment, the router's Service, its Deployment, ServiceAccount, Role and RoleBinding, the
  // replicas' Service, ScaledObject, HPA, ServiceMonitor, NodePool.
  ASSERT_EQ(manifests.size(), 11u);
  expect_each_validates(manifests);
  // Scaled to zero: the InterceptorRoute and the ScaledObject on its count in place of the
  // Prometheus-triggered one, the router kept.
  ManifestInput at_zero = routed_chat_input();
  at_zero.min_replicas = 0;
  manifests = service_manifests(at_zero);
  ASSERT_EQ(manifests.size(), 12u);
  expect_each_validates(manifests);
}

TEST(VllmRouterManifests, ClientsReachTheReplicasThroughTheRouterAlone) {
  const std::map<std::string, YAML::Node> by_file = by_file_name(service_manifests(routed_chat_input()));
  const YAML::Node replicas = by_file.at("chat-deployment.yaml");
  const YAML::Node router = by_file.at("chat-router-deployment.yaml");
  const auto replica_pods = string_map(replicas["spec"]["template"]["metadata"]["labels"]);
  const auto router_pods = string_map(router["spec"]["template"]["metadata"]["labels"]);

  // The router finds the replicas' pods and not its own, and deals requests in turn.
  EXPECT_TRUE(selects(router_selector(router), replica_pods));
  EXPECT_FALSE(selects(router_selector(router), router_pods));
  EXPECT_EQ(arg_after(router, "--policy"), "round_robin");
  EXPECT_EQ(arg_after(router, "--service-discovery-port"), "8000");
  EXPECT_TRUE(selects(string_map(router["spec"]["selector"]["matchLabels"]), router_pods));
  // Neither Deployment's selector takes the other's pods.
  EXPECT_FALSE(selects(string_map(replicas["spec"]["selector"]["matchLabels"]), router_pods));
  EXPECT_FALSE(selects(string_map(router["spec"]["selector"]["matchLabels"]), replica_pods));

  // The Service clients call, named as the service, reaches the router's pods only; the
  // replicas' Service is headless and reaches the replicas only.
  const YAML::Node client = by_file.at("chat-service.yaml");
  EXPECT_EQ(client["metadata"]["name"].as<std::string>(), "chat");
  EXPECT_TRUE(selects(string_map(client["spec"]["selector"]), router_pods));
  EXPECT_FALSE(selects(string_map(client["spec"]["selector"]), replica_pods));
  const YAML::Node pods = by_file.at("chat-replicas-service.yaml");
  EXPECT_EQ(pods["spec"]["clusterIP"].as<std::string>(), "None");
  EXPECT_TRUE(selects(string_map(pods["spec"]["selector"]), replica_pods));
  EXPECT_FALSE(selects(string_map(pods["spec"]["selector"]), router_pods));

  // The ServiceMonitor selects the replicas' Service alone, so the series carry its name, which
  // the ScaledObject's query and the HPA's metric select.
  const YAML::Node monitor = by_file.at("chat-servicemonitor.yaml");
  std::vector<std::string> monitored;
  for (const auto& [file, doc] : by_file)
    if (doc["kind"].as<std::string>() == "Service" && selects(string_map(monitor["spec"]["selector"]["matchLabels"]), string_map(doc["metadata"]["labels"])))
      monitored.push_back(doc["metadata"]["name"].as<std::string>());
  EXPECT_EQ(monitored, (std::vector<std::string>{"chat-replicas"}));
  const std::string query = by_file.at("chat-keda-scaledobject.yaml")["spec"]["triggers"][0]["metadata"]["query"].as<std::string>();
  EXPECT_NE(query.find("vllm:num_requests_waiting{service=\"chat-replicas\"}"), std::string::npos) << query;
  EXPECT_EQ(by_file.at("chat-hpa.yaml")["spec"]["metrics"][0]["external"]["metric"]["selector"]["matchLabels"]["service"].as<std::string>(),
            "chat-replicas");
  // One router (two would each deal their own turns), moved off a lost node after 10 s.
  EXPECT_EQ(router["spec"]["replicas"].as<int>(), 1);
  EXPECT_EQ(router["spec"]["template"]["spec"]["tolerations"][0]["tolerationSeconds"].as<int>(), 10);
  // The autoscalers scale the replicas, not the router.
  EXPECT_EQ(by_file.at("chat-keda-scaledobject.yaml")["spec"]["scaleTargetRef"]["name"].as<std::string>(), "chat");

  // The router runs as its ServiceAccount, which the RoleBinding gives the Role reading pods.
  EXPECT_EQ(router["spec"]["template"]["spec"]["serviceAccountName"].as<std::string>(), "chat-router");
  EXPECT_EQ(by_file.at("chat-router-serviceaccount.yaml")["metadata"]["name"].as<std::string>(), "chat-router");
  const YAML::Node binding = by_file.at("chat-router-rolebinding.yaml");
  EXPECT_EQ(binding["roleRef"]["name"].as<std::string>(), by_file.at("chat-router-role.yaml")["metadata"]["name"].as<std::string>());
  EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(), "chat-router");
  const YAML::Node rule = by_file.at("chat-router-role.yaml")["rules"][0];
  EXPECT_EQ(rule["resources"][0].as<std::string>(), "pods");
  EXPECT_EQ(rule["verbs"].size(), 3u);
}

// At zero replicas the interceptor holds requests until the Service it forwards to has a ready
// endpoint: that Service is the router's, whose pods are ready only while a replica is
// (/readiness), so held requests go on once a replica serves, routed as verified. The router
// stays alive (/liveness) whatever its replicas' health: /health, 503 while any replica is
// unhealthy, would have restarted it.
TEST(VllmRouterManifests, APoolScaledToZeroIsWokenThroughItsRouter) {
  ManifestInput in = routed_chat_input();
  in.min_replicas = 0;
  const std::map<std::string, YAML::Node> by_file = by_file_name(service_manifests(in));
  const YAML::Node router = by_file.at("chat-router-deployment.yaml");
  const auto router_pods = string_map(router["spec"]["template"]["metadata"]["labels"]);
  const YAML::Node target = by_file.at("chat-interceptorroute.yaml")["spec"]["target"];
  // The ScaledObject scales the replicas' Deployment on the interceptor's count.
  EXPECT_EQ(by_file.at("chat-keda-scaledobject.yaml")["spec"]["scaleTargetRef"]["name"].as<std::string>(), "chat");
  EXPECT_EQ(by_file.at("chat-deployment.yaml")["metadata"]["name"].as<std::string>(), "chat");
  const YAML::Node service = by_file.at(target["service"].as<std::string>() + "-service.yaml");
  EXPECT_TRUE(selects(string_map(service["spec"]["selector"]), router_pods));
  EXPECT_EQ(arg_after(router, "--policy"), "round_robin");
  const YAML::Node container = router["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readiness");
  EXPECT_EQ(container["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/liveness");
  EXPECT_EQ(by_file.count("chat-replicas-service.yaml"), 1u);
}

}  // namespace
}  // namespace gw
