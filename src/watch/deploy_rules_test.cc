// The rules shipped under deploy/prometheus: valid to promtool, their unit tests passing, and
// the recording rules the audit reads the same as `gpuwise audit --print-recording-rules`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "audit/audit_run.h"

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

}  // namespace
}  // namespace gw
