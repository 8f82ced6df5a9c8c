// What deploy/ ships beside gpuwise watch: the Prometheus rules valid to promtool with their
// unit tests passing, the recording rules the audit reads the same as `gpuwise audit
// --print-recording-rules`; the Kubernetes manifests valid against their APIs' schemas, wired
// to each other, and their arguments accepted by gpuwise; the systemd unit verified by systemd.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "audit/audit_run.h"
#include "k8s/yaml_json_test.h"

namespace gw {
namespace {

std::string run_in(const std::filesystem::path& dir, const std::string& command, int& status) {
  const auto log = std::filesystem::temp_directory_path() / fmt::format("gpuwise_rules_{}.log", ::getpid());
  status = std::system(fmt::format("cd {} && {} > {} 2>&1", dir.string(), command, log.string()).c_str());
  std::ifstream in(log);
  std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(log);
  return said;
}

TEST(DeployedRules, PromtoolChecksThemAndTheirUnitTestsPass) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) GTEST_FAIL() << "promtool is required (scripts/bootstrap installs it)";
  const std::filesystem::path dir = std::filesystem::path(GPUWISE_SOURCE_DIR) / "deploy" / "prometheus";
  int status = 0;
  std::string said = run_in(dir, "promtool check rules gpuwise-alerts.yml gpuwise-recording.yml", status);
  EXPECT_EQ(status, 0) << said;
  said = run_in(dir, "promtool test rules gpuwise-alerts-test.yml", status);
  EXPECT_EQ(status, 0) << said;
  EXPECT_NE(said.find("SUCCESS"), std::string::npos) << said;
}

TEST(DeployedRules, RecordingRulesBeginWithWhatTheAuditReads) {
  std::ifstream in(std::filesystem::path(GPUWISE_SOURCE_DIR) / "deploy" / "prometheus" / "gpuwise-recording.yml");
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string printed = audit_recording_rules();
  EXPECT_EQ(file.substr(0, printed.size()), printed) << "deploy/prometheus/gpuwise-recording.yml must start with "
                                                        "`gpuwise audit --print-recording-rules`";
}

const std::filesystem::path& deploy() {
  static const std::filesystem::path dir = std::filesystem::path(GPUWISE_SOURCE_DIR) / "deploy";
  return dir;
}

// gpuwise run with these arguments and a Prometheus that cannot answer: accepted by the parser
// when the only complaint is the unreachable server.
void expect_watch_accepts(std::vector<std::string> args) {
  std::string command = GPUWISE_BINARY;
  for (auto& a : args) {
    if (a.rfind("--prometheus=", 0) == 0) a = "--prometheus=http://127.0.0.1:9";
    if (a.rfind("--metrics-token-file=", 0) == 0) a = "--metrics-token-file=" + (deploy() / "kubernetes" / "gpuwise-watch.yaml").string();
    command += " '" + a + "'";
  }
  command += " --once --prometheus-timeout 1";
  int status = 0;
  const std::string said = run_in(deploy(), command, status);
  EXPECT_NE(said.find("field '--prometheus'"), std::string::npos) << command << ": " << said;
}

TEST(DeployedManifests, ValidateAndFitTogether) {
  if (std::system("command -v node >/dev/null 2>&1") != 0) GTEST_FAIL() << "node is required (scripts/bootstrap installs it)";
  std::vector<YAML::Node> documents = YAML::LoadAllFromFile((deploy() / "kubernetes" / "gpuwise-watch.yaml").string());
  ASSERT_EQ(documents.size(), 3u);
  const auto scratch = std::filesystem::temp_directory_path() / fmt::format("gpuwise_deploy_{}", ::getpid());
  std::filesystem::create_directories(scratch);
  auto validate = [&](const YAML::Node& document, const char* schema) {
    std::ofstream(scratch / "manifest.json") << testing_support::to_json(document).dump(2);
    int status = 0;
    const std::string said =
        run_in(std::filesystem::path(GPUWISE_SOURCE_DIR) / "web",
               fmt::format("node test/validate.mjs '{}' '{}'",
                           (std::filesystem::path(GPUWISE_SOURCE_DIR) / "schemas" / "k8s" / schema).string(),
                           (scratch / "manifest.json").string()),
               status);
    EXPECT_EQ(status, 0) << schema << ": " << said;
  };
  const YAML::Node& deployment = documents[0];
  const YAML::Node& service = documents[1];
  const YAML::Node& monitor = documents[2];
  ASSERT_EQ(deployment["kind"].as<std::string>(), "Deployment");
  ASSERT_EQ(service["kind"].as<std::string>(), "Service");
  ASSERT_EQ(monitor["kind"].as<std::string>(), "ServiceMonitor");
  validate(deployment, "deployment-apps-v1.schema.json");
  validate(service, "service-v1.schema.json");
  validate(monitor, "servicemonitor-monitoring-v1.schema.json");
  std::filesystem::remove_all(scratch);
  // The Service selects the pods; the ServiceMonitor selects the Service and scrapes a port it has.
  const YAML::Node pod_labels = deployment["spec"]["template"]["metadata"]["labels"];
  for (const auto& entry : service["spec"]["selector"])
    EXPECT_EQ(pod_labels[entry.first.as<std::string>()].as<std::string>(""), entry.second.as<std::string>());
  for (const auto& entry : monitor["spec"]["selector"]["matchLabels"])
    EXPECT_EQ(service["metadata"]["labels"][entry.first.as<std::string>()].as<std::string>(""), entry.second.as<std::string>());
  bool port_found = false;
  for (const auto& port : service["spec"]["ports"])
    port_found = port_found || port["name"].as<std::string>() == monitor["spec"]["endpoints"][0]["port"].as<std::string>();
  EXPECT_TRUE(port_found);
  // The container runs read-only, as nobody, without a service account token.
  const YAML::Node pod = deployment["spec"]["template"]["spec"];
  EXPECT_FALSE(pod["automountServiceAccountToken"].as<bool>());
  EXPECT_TRUE(pod["containers"][0]["securityContext"]["readOnlyRootFilesystem"].as<bool>());
  std::vector<std::string> args;
  for (const auto& a : pod["containers"][0]["args"]) args.push_back(a.as<std::string>());
  EXPECT_EQ(args.front(), "watch");
  expect_watch_accepts(args);
}

TEST(DeployedUnit, SystemdVerifiesItAndGpuwiseAcceptsItsCommand) {
  if (std::system("command -v systemd-analyze >/dev/null 2>&1") != 0)
    GTEST_FAIL() << "systemd-analyze is required (scripts/bootstrap installs systemd)";
  std::ifstream in(deploy() / "systemd" / "gpuwise-watch.service");
  std::string unit((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Verified with the ExecStart binary at this build's gpuwise (systemd checks that it exists).
  const std::string installed = "/usr/bin/gpuwise";
  ASSERT_NE(unit.find("ExecStart=" + installed + " watch"), std::string::npos);
  unit.replace(unit.find(installed), installed.size(), GPUWISE_BINARY);
  const auto scratch = std::filesystem::temp_directory_path() / fmt::format("gpuwise_unit_{}", ::getpid());
  std::filesystem::create_directories(scratch);
  std::ofstream(scratch / "gpuwise-watch.service") << unit;
  int status = 0;
  const std::string said = run_in(scratch, "systemd-analyze verify --man=no gpuwise-watch.service", status);
  EXPECT_EQ(status, 0) << said;
  EXPECT_EQ(said, "") << "systemd found something to say: " << said;
  std::filesystem::remove_all(scratch);
  // Its command line, with the settings its comment gives as the example for /etc/default.
  const size_t exec = unit.find("ExecStart=" + std::string(GPUWISE_BINARY)) + std::string("ExecStart=").size() + std::string(GPUWISE_BINARY).size();
  std::istringstream words(unit.substr(exec, unit.find('\n', exec) - exec));
  std::vector<std::string> args;
  for (std::string word; words >> word;) {
    if (word == "${GPUWISE_PROMETHEUS}") word = "http://127.0.0.1:9";
    if (word == "$GPUWISE_WATCH_ARGS") {
      for (const char* example : {"--group-by", "namespace", "--window", "7d"}) args.push_back(example);
      continue;
    }
    args.push_back(word);
  }
  ASSERT_GE(args.size(), 5u);
  EXPECT_EQ(args.front(), "watch");
  expect_watch_accepts(args);
}

}  // namespace
}  // namespace gw
