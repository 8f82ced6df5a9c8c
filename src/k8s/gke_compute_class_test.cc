// Plans on GKE: the pods select a ComputeClass of GKE's node shapes (Karpenter does not run
// there), TPU replicas request google.com/tpu chips in vLLM's TPU image, and every object
// validates against its published schema.
#include "k8s/gke_compute_class.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "k8s/manifest_schemas_test.h"
#include "k8s/node_allocatable.h"
#include "k8s/yaml_json_test.h"

namespace gw {
namespace {

using testing_support::ManifestSchemas;
using testing_support::to_json;

// A Cloud TPU name counts chips (TensorCores for v5p and v4: tpu-v5p-8 is four chips); GKE runs
// single-host slices under machine types of its own, and refuses TPU v2/v3 and multi-host slices.
TEST(GkeNodes, CloudTpuNamesBecomeGkeSingleHostSlices) {
  std::string why;
  auto v6e = gke_node_shape("TPU-v6e", "tpu-v6e-4", 4, &why);
  ASSERT_TRUE(v6e) << why;
  EXPECT_TRUE(v6e->tpu);
  EXPECT_EQ(v6e->machine_type, "ct6e-standard-4t");
  EXPECT_EQ(v6e->tpu_topology, "2x2");
  EXPECT_EQ(v6e->accelerator_label, "tpu-v6e-slice");
  auto v5p = gke_node_shape("TPU-v5p", "tpu-v5p-8", 4, &why);
  ASSERT_TRUE(v5p) << why;
  EXPECT_EQ(v5p->machine_type, "ct5p-hightpu-4t");
  EXPECT_EQ(v5p->tpu_topology, "2x2x1");
  EXPECT_EQ(gke_node_shape("TPU-v5e", "tpu-v5litepod-8", 8, nullptr)->machine_type, "ct5lp-hightpu-8t");
  EXPECT_FALSE(gke_node_shape("TPU-v3", "tpu-v3-8", 4, &why));
  EXPECT_NE(why.find("Cloud TPU VM"), std::string::npos) << why;
  EXPECT_FALSE(gke_node_shape("TPU-v6e", "tpu-v6e-16", 16, &why));
  EXPECT_NE(why.find("multi-host"), std::string::npos) << why;
}

TEST(GkeNodes, GpusCarryGkesAcceleratorLabel) {
  EXPECT_EQ(gke_node_shape("L4", "g2-standard-24", 2, nullptr)->accelerator_label, "nvidia-l4");
  EXPECT_EQ(gke_node_shape("A100-40GB", "a2-highgpu-1g", 1, nullptr)->accelerator_label, "nvidia-tesla-a100");
  EXPECT_EQ(gke_node_shape("H100", "a3-megagpu-8g", 8, nullptr)->accelerator_label, "nvidia-h100-mega-80gb");
  EXPECT_EQ(gke_node_shape("H100", "a3-highgpu-8g", 8, nullptr)->accelerator_label, "nvidia-h100-80gb");
  auto t4 = gke_node_shape("T4", "n1+2xT4", 2, nullptr);
  ASSERT_TRUE(t4);
  EXPECT_TRUE(t4->machine_type.empty());
  EXPECT_EQ(t4->machine_family, "n1");
  EXPECT_FALSE(gke_node_shape("MI300X", "x", 8, nullptr));
}

ManifestInput gke_input(const std::string& accelerator, const std::string& instance_type, int per_node) {
  ManifestInput in;
  in.service = "chat";
  in.llm = true;
  in.queue_threshold = 12;
  in.min_replicas = 1;
  in.max_replicas = 4;
  in.peak_replicas = 2;
  in.replicas = 2;
  in.min_nodes = 2;
  in.cooldown_s = 210;
  in.cloud = "gcp";
  in.instance_types = {instance_type};
  in.capacity_types = {"on-demand"};
  in.gke_nodes = {*gke_node_shape(accelerator, instance_type, per_node, nullptr)};
  in.accelerator = accelerator;
  in.gpus_per_replica = 1;
  in.model_name = "llama-3.1-8b";
  in.model_uri = "gs://models/llama-3.1-8b/2024-07-23";
  in.startup_s = 60;
  in.cold_start_s = 181;
  return in;
}

const Manifest* find_manifest(const std::vector<Manifest>& all, const std::string& suffix) {
  for (const Manifest& m : all)
    if (m.file_name.size() >= suffix.size() && m.file_name.compare(m.file_name.size() - suffix.size(), suffix.size(), suffix) == 0) return &m;
  return nullptr;
}

// A TPU plan: the replicas request TPU chips (not nvidia.com/gpu, which no TPU node offers) in
// vLLM's TPU image, and select the class whose one shape is the plan's slice.
TEST_F(ManifestSchemas, ATpuPlanRunsOnAGkeComputeClassOfItsSlice) {
  const ManifestInput in = gke_input("TPU-v6e", "tpu-v6e-1", 1);
  const std::vector<Manifest> all = service_manifests(in);
  expect_each_validates(all);
  EXPECT_FALSE(find_manifest(all, "-karpenter-nodepool.yaml"));
  const Manifest* cc = find_manifest(all, "chat-gke-computeclass.yaml");
  ASSERT_TRUE(cc);
  const YAML::Node rule = YAML::Load(cc->yaml)["spec"]["priorities"][0];
  EXPECT_EQ(rule["machineType"].as<std::string>(), "ct6e-standard-1t");
  EXPECT_EQ(rule["tpu"]["type"].as<std::string>(), "tpu-v6e-slice");
  EXPECT_EQ(rule["tpu"]["topology"].as<std::string>(), "1x1");
  EXPECT_EQ(YAML::Load(cc->yaml)["spec"]["whenUnsatisfiable"].as<std::string>(), "DoNotScaleUp");
  // The schema is closed: a misspelt field fails it.
  nlohmann::json misspelt = to_json(YAML::Load(cc->yaml));
  misspelt["spec"]["priorities"][0]["machinetype"] = "ct6e-standard-1t";
  EXPECT_NE(validate(misspelt, schema_for(cc->file_name)), 0);
  const YAML::Node pod = YAML::Load(find_manifest(all, "chat-deployment.yaml")->yaml)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["nodeSelector"]["cloud.google.com/compute-class"].as<std::string>(), "chat-tpu");
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["google.com/tpu"].as<std::string>(), "1");
  EXPECT_FALSE(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]);
  EXPECT_EQ(pod["containers"][0]["image"].as<std::string>(), kVllmTpuImage);
  EXPECT_EQ(pod["tolerations"][0]["key"].as<std::string>(), "google.com/tpu");
}

// GPUs on an n1 VM with spot allowed over an on-demand floor: spot rules come first, the VM is
// the smallest whose allocatable share holds the node's replicas, and the floor's spread counts
// GKE's provisioning label (Karpenter's capacity-type label is on no GKE node).
TEST_F(ManifestSchemas, SpotGpusOnGkeAreSpreadByGkesProvisioningLabel) {
  ManifestInput in = gke_input("T4", "n1+2xT4", 2);
  in.capacity_types = {"on-demand", "spot"};
  in.spot_floor = true;
  in.floor_replicas = 2;
  in.replicas = 4;
  in.cpu_per_replica = 4;
  in.memory_gib_per_replica = 16;
  const std::vector<Manifest> all = service_manifests(in);
  expect_each_validates(all);
  const YAML::Node rules = YAML::Load(find_manifest(all, "chat-gke-computeclass.yaml")->yaml)["spec"]["priorities"];
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_TRUE(rules[0]["spot"].as<bool>());
  EXPECT_FALSE(rules[1]["spot"].as<bool>());
  EXPECT_EQ(rules[0]["machineFamily"].as<std::string>(), "n1");
  EXPECT_EQ(rules[0]["gpu"]["type"].as<std::string>(), "nvidia-tesla-t4");
  const NodeAllocatable host = node_allocatable("gcp", rules[0]["minCores"].as<int>(), rules[0]["minMemoryGb"].as<int>());
  EXPECT_GE(host.cpu_for_pods, 2 * 4.0);
  EXPECT_GE(host.memory_gib_for_pods, 2 * 16.0);
  EXPECT_LT(node_allocatable("gcp", rules[0]["minCores"].as<int>(), rules[0]["minMemoryGb"].as<int>() - 1).memory_gib_for_pods, 2 * 16.0);
  const YAML::Node pod = YAML::Load(find_manifest(all, "chat-deployment.yaml")->yaml)["spec"]["template"]["spec"];
  bool capacity_spread = false;
  for (const YAML::Node& c : pod["topologySpreadConstraints"]) {
    EXPECT_NE(c["topologyKey"].as<std::string>(), "karpenter.sh/capacity-type");
    capacity_spread = capacity_spread || c["topologyKey"].as<std::string>() == "cloud.google.com/gke-provisioning";
  }
  EXPECT_TRUE(capacity_spread);
  bool spot_tolerated = false;
  for (const YAML::Node& t : pod["tolerations"]) spot_tolerated = spot_tolerated || t["key"].as<std::string>() == "cloud.google.com/gke-spot";
  EXPECT_TRUE(spot_tolerated);
}

}  // namespace
}  // namespace gw
