// For tests of Kubernetes manifests: a fixture that validates a document against the published
// schema extracts in schemas/k8s (ajv under node), picked by the manifest's file name.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include "core/require_tools_test.h"
#include "k8s/yaml_json_test.h"

namespace gw::testing_support {

class ManifestSchemas : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_TOOLS(have("node"), "node is required (scripts/bootstrap installs it)");
    dir_ = std::filesystem::temp_directory_path() / fmt::format("gpuwise_k8s_{}", ::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // 0 when the document validates against the schema.
  int validate(const nlohmann::json& document, const std::string& schema) {
    std::string path = (dir_ / "manifest.json").string();
    std::ofstream(path) << document.dump(2);
    auto root = std::filesystem::path(GPUWISE_SOURCE_DIR);
    int status = std::system(fmt::format("cd '{}' && node test/validate.mjs '{}' '{}' >'{}' 2>&1", (root / "web").string(),
                                         (root / "schemas" / "k8s" / schema).string(), path, (dir_ / "log").string())
                                 .c_str());
    std::ifstream log(dir_ / "log");
    last_log_ = std::string((std::istreambuf_iterator<char>(log)), {});
    return status;
  }

  // Every manifest (file_name, yaml) validates against its object's schema.
  template <typename Manifests>
  void expect_each_validates(const Manifests& manifests) {
    for (const auto& m : manifests)
      EXPECT_EQ(validate(to_json(YAML::Load(m.yaml)), schema_for(m.file_name)), 0) << m.file_name << "\n" << m.yaml << "\n" << last_log_;
  }

  static std::string schema_for(const std::string& file) {
    if (file.find("servicemonitor") != std::string::npos) return "servicemonitor-monitoring-v1.schema.json";
    if (file.find("computeclass") != std::string::npos) return "gke-computeclass-v1.schema.json";
    if (file.find("configmap") != std::string::npos) return "configmap-v1.schema.json";
    if (file.find("leaderworkerset") != std::string::npos) return "leaderworkerset-v1.schema.json";
    if (file.find("cronjob") != std::string::npos) return "cronjob-batch-v1.schema.json";
    if (file.find("-job.yaml") != std::string::npos) return "job-batch-v1.schema.json";
    if (file.find("serviceaccount") != std::string::npos) return "serviceaccount-v1.schema.json";
    if (file.find("rolebinding") != std::string::npos) return "rolebinding-rbac-v1.schema.json";
    if (file.find("-role.yaml") != std::string::npos) return "role-rbac-v1.schema.json";
    if (file.find("interceptorroute") != std::string::npos) return "keda-interceptorroute-v1beta1.schema.json";
    if (file.find("keda") != std::string::npos) return "keda-scaledobject-v1alpha1.schema.json";
    if (file.find("-service.yaml") != std::string::npos) return "service-v1.schema.json";
    if (file.find("hpa") != std::string::npos) return "hpa-autoscaling-v2.schema.json";
    if (file.find("deployment") != std::string::npos) return "deployment-apps-v1.schema.json";
    return "karpenter-nodepool-v1.schema.json";
  }

  std::filesystem::path dir_;
  std::string last_log_;
};

}  // namespace gw::testing_support
