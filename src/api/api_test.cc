// The public library (include/gpuwise/) gives a program the CLI's answers byte for byte, keeps
// what a result points into alive, and throws errors that name file, line and field.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gpuwise/gpuwise.h"

namespace {

std::string capture(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  pclose(pipe);
  return out;
}

std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_api_{}_{}", name, ::getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

const char* kSpec = R"(name: api test
models:
  classifier:
    params: 110e6
    service_time:
      accelerator: T4
      batch_ms: {1: 50, 8: 58, 16: 70, 32: 92, 64: 140}
services:
  - name: classify
    model: classifier
    traffic: {rps: {average: 40, peak: 80}}
    slo: {latency_p99_s: 0.500}
constraints:
  clouds: [aws, gcp]
  pricing: [on-demand]
)";

// The same spec planned through the library and through the CLI gives the same bytes, in every
// writer the CLI has for it.
TEST(Library, PlanEqualsTheCliByteForByte) {
  auto dir = scratch("plan");
  std::string path = (dir / "spec.yaml").string();
  std::ofstream(path) << kSpec;
  gpuwise::PlanResult plan = gpuwise::plan(gpuwise::Catalog::embedded(), gpuwise::Spec::load(path));
  std::string cli = fmt::format("NO_COLOR=1 '{}' plan '{}'", GPUWISE_BINARY, path);
  EXPECT_EQ(plan.to_json(), capture(cli + " --format json"));
  EXPECT_EQ(plan.to_text(), capture(cli));
  EXPECT_EQ(plan.to_markdown(true), capture(cli + " --format md --explain"));
  EXPECT_EQ(plan.exit_code(), 0);
  EXPECT_TRUE(plan.met());
  EXPECT_GT(plan.total_usd_per_month(), 0);
  // A spec given as text plans the same as the file, and options change the answer as the
  // CLI's flags do.
  gpuwise::PlanOptions screen_only;
  screen_only.simulate = false;
  gpuwise::PlanResult parsed = gpuwise::plan(gpuwise::Catalog::embedded(), gpuwise::Spec::parse(kSpec, path), screen_only);
  EXPECT_EQ(parsed.to_json(), capture(cli + " --format json --no-simulate"));
  std::filesystem::remove_all(dir);
}

TEST(Library, SimulateEqualsTheCliByteForByte) {
  auto dir = scratch("simulate");
  std::string path = (dir / "spec.yaml").string();
  std::ofstream(path) << kSpec;
  gpuwise::SimulateOptions options;
  options.requests = 3000;
  options.seed = 7;
  gpuwise::SimulateResult run = gpuwise::simulate(gpuwise::Catalog::embedded(), gpuwise::Spec::load(path), options);
  std::string cli = fmt::format("NO_COLOR=1 '{}' simulate '{}' --requests 3000 --seed 7", GPUWISE_BINARY, path);
  EXPECT_EQ(run.to_json(), capture(cli + " --format json"));
  EXPECT_EQ(run.to_text(), capture(cli));
  EXPECT_EQ(run.to_markdown(), capture(cli + " --format md"));
  EXPECT_TRUE(run.all_meet());
  std::filesystem::remove_all(dir);
}

// A result keeps the catalog data it points into: the handle may go, or be changed.
TEST(Library, ResultOutlivesItsCatalogHandle) {
  std::optional<gpuwise::PlanResult> plan;
  std::string before;
  gpuwise::PlanOptions options;
  options.simulate = false;
  {
    gpuwise::Catalog catalog = gpuwise::Catalog::embedded();
    plan = gpuwise::plan(catalog, gpuwise::Spec::parse(kSpec), options);
    before = plan->to_json();
  }
  EXPECT_EQ(plan->to_json(), before);  // under ASan: no use after free
  EXPECT_NE(before.find("\"spec\": \"spec.yaml\""), std::string::npos);
}

TEST(Library, ErrorsNameFileLineAndField) {
  try {
    gpuwise::Spec::parse("models:\n  bert: {preset: bert-base}\nservices:\n  - name: x\n    modle: bert\n", "bad.yaml");
    FAIL() << "a misspelt key was accepted";
  } catch (const gpuwise::Error& e) {
    EXPECT_EQ(e.file(), "bad.yaml");
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(e.field().find("modle"), std::string::npos) << e.field();
    EXPECT_EQ(e.kind(), gpuwise::Error::Kind::bad_input);
    EXPECT_NE(std::string(e.what()).find("bad.yaml:5"), std::string::npos) << e.what();
  }
  // A service without an SLO cannot be planned: the error names its line, as the CLI's does.
  std::string no_slo = kSpec;
  no_slo.erase(no_slo.find("    slo: {latency_p99_s: 0.500}\n"), std::string("    slo: {latency_p99_s: 0.500}\n").size());
  try {
    gpuwise::plan(gpuwise::Catalog::embedded(), gpuwise::Spec::parse(no_slo, "no-slo.yaml"));
    FAIL() << "a service without an SLO was planned";
  } catch (const gpuwise::Error& e) {
    EXPECT_EQ(e.file(), "no-slo.yaml");
    EXPECT_GT(e.line(), 0);
    EXPECT_EQ(e.field(), "services.classify.slo");
  }
  EXPECT_THROW(gpuwise::Spec::load("/nonexistent/spec.yaml"), gpuwise::Error);
}

// A bad override leaves the handle as it was; a good one changes only that handle.
TEST(Library, CatalogOverridesCopyOnWrite) {
  auto dir = scratch("catalog");
  gpuwise::Catalog catalog = gpuwise::Catalog::embedded();
  gpuwise::Catalog original = catalog;
  const size_t offerings = catalog.offering_count();
  ASSERT_GT(offerings, 100u);
  std::ofstream(dir / "offerings.csv") << "cloud,region\naws\n";
  try {
    catalog.apply_overrides(dir.string());
    FAIL() << "a broken offerings.csv was accepted";
  } catch (const gpuwise::Error& e) {
    EXPECT_NE(e.file().find("offerings.csv"), std::string::npos) << e.what();
  }
  EXPECT_EQ(catalog.offering_count(), offerings);
  EXPECT_EQ(original.offering_count(), offerings);
  EXPECT_GT(catalog.accelerator_count(), 10u);
  std::filesystem::remove_all(dir);
}

TEST(Library, VersionIsTheCliVersion) {
  EXPECT_EQ(std::string("gpuwise ") + gpuwise::version() + "\n", capture(fmt::format("'{}' --version", GPUWISE_BINARY)));
}

}  // namespace
