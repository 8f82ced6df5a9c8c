// The public library (include/gpuwise/) gives a program the CLI's answers byte for byte, keeps
// what a result points into alive, and throws errors that name file, line and field.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

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
  // 4,000 simulated requests a candidate, not 20,000: the CLI plans four times (under the
  // sanitizers too), and the option must reach the simulation alike on both sides.
  gpuwise::PlanOptions brief;
  brief.sim_requests = 4000;
  gpuwise::PlanResult plan = gpuwise::plan(gpuwise::Catalog::embedded(), gpuwise::Spec::load(path), brief);
  std::string cli = fmt::format("NO_COLOR=1 '{}' plan '{}' --sim-requests 4000", GPUWISE_BINARY, path);
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
  EXPECT_EQ(plan.to_csv(), capture(cli + " --format csv"));
  // The manifests --emit-k8s writes, file for file, from a plan made with options (a
  // calibration-free screen here) the library keeps for them. At a twentieth of the rate: the
  // manifests' figures come from a day of the service's traffic simulated under each scaling
  // policy on both sides (4 million requests a policy at 40 requests/s, a minute under the
  // sanitizers), and the bytes are compared here, not the figures.
  std::string quiet_spec = kSpec;
  quiet_spec.replace(quiet_spec.find("average: 40, peak: 80"), 21, "average: 2, peak: 4");
  const std::string quiet_path = (dir / "quiet.yaml").string();
  std::ofstream(quiet_path) << quiet_spec;
  gpuwise::PlanResult quiet = gpuwise::plan(gpuwise::Catalog::embedded(), gpuwise::Spec::parse(quiet_spec, quiet_path), screen_only);
  const auto folder = dir / "k8s";
  capture(fmt::format("NO_COLOR=1 '{}' plan '{}' --emit-k8s '{}' -q --no-simulate", GPUWISE_BINARY, quiet_path, folder.string()));
  const auto manifests = quiet.manifests();
  ASSERT_FALSE(manifests.empty());
  for (const auto& [file, yaml] : manifests) {
    std::ifstream in(folder / file);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), yaml) << file;
  }
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

// The questions answered as an Answer (fit, perf, train, mix, scale, fleet, audit) give the CLI's
// JSON and text byte for byte.
TEST(Library, QuestionsEqualTheCliByteForByte) {
  const gpuwise::Catalog catalog = gpuwise::Catalog::embedded();
  const std::string cli = fmt::format("cd '{}' && NO_COLOR=1 '{}' ", GPUWISE_SOURCE_DIR, GPUWISE_BINARY);
  auto expect_cli = [&](const gpuwise::Answer& answer, const std::string& arguments) {
    EXPECT_EQ(answer.to_json(), capture(cli + arguments + " --format json")) << arguments;
    EXPECT_EQ(answer.to_text(), capture(cli + arguments)) << arguments;
    EXPECT_EQ(answer.to_text(true), capture(cli + arguments + " --explain")) << arguments;
  };
  gpuwise::FitQuery fit;
  fit.model = "llama-3.1-70b";
  fit.context_tokens = 8192;
  fit.batch = 16;
  gpuwise::Answer fitted = gpuwise::fit(catalog, fit);
  expect_cli(fitted, "fit llama-3.1-70b --context 8192 --batch 16");
  EXPECT_EQ(fitted.to_markdown(), capture(cli + "fit llama-3.1-70b --context 8192 --batch 16 --format md"));
  EXPECT_EQ(fitted.exit_code(), 0);
  EXPECT_EQ(fitted.command(), "fit");

  gpuwise::PerfQuery perf;
  perf.model = "llama-3.1-8b";
  perf.accelerator = "L4";
  perf.max_throughput = true;
  perf.input_tokens = 1024;
  perf.output_tokens = 256;
  gpuwise::Answer throughput = gpuwise::perf(catalog, perf);
  expect_cli(throughput, "perf llama-3.1-8b --accelerator L4 --max-throughput --input-tokens 1024 --output-tokens 256");
  EXPECT_THROW(throughput.to_markdown(), gpuwise::Error);

  gpuwise::TrainQuery train;
  train.model = "llama-2-7b";
  train.tokens = 500e9;
  train.deadline_days = 20;
  train.runs = 300;
  expect_cli(gpuwise::train(catalog, train), "train llama-2-7b --tokens 500e9 --deadline-days 20 --runs 300");

  gpuwise::MixQuery mix;
  mix.demand = std::string(GPUWISE_SOURCE_DIR) + "/examples/demand-week.csv";
  mix.on_demand = 4.0;
  mix.reserved_1y = 2.5;
  mix.spot = 1.2;
  expect_cli(gpuwise::mix(catalog, mix), "mix " + mix.demand + " --on-demand 4 --reserved-1y 2.5 --spot 1.2");

  const std::string fleet_spec = std::string(GPUWISE_SOURCE_DIR) + "/examples/fleet-shared-pool.yaml";
  expect_cli(gpuwise::fleet(catalog, gpuwise::Spec::load(fleet_spec)), "fleet " + fleet_spec);
}

TEST(Library, ScaleEqualsTheCli) {
  auto dir = scratch("scale");
  std::string path = (dir / "spec.yaml").string();
  std::ofstream(path) << kSpec;
  gpuwise::ScaleOptions options;
  options.hours = 2;
  gpuwise::Answer scaled = gpuwise::scale(gpuwise::Catalog::embedded(), gpuwise::Spec::load(path), options);
  std::string cli = fmt::format("NO_COLOR=1 '{}' scale '{}' --hours 2", GPUWISE_BINARY, path);
  EXPECT_EQ(scaled.to_json(), capture(cli + " --format json"));
  EXPECT_EQ(scaled.to_text(), capture(cli));
  EXPECT_EQ(scaled.to_markdown(), capture(cli + " --format md"));
  EXPECT_EQ(scaled.exit_code(), 0);
  std::filesystem::remove_all(dir);
}

// An audit's answer and its warnings (a series read again in time order) are the CLI's; the
// skipped row is counted in the answer itself.
TEST(Library, AuditEqualsTheCliWithItsWarnings) {
  auto dir = scratch("audit");
  std::string path = (dir / "smi.csv").string();
  {
    std::ofstream csv(path);
    csv << "timestamp, name, pci.bus_id, uuid, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n";
    for (int minute = 0; minute < 60 * 40; ++minute)
      for (int gpu = 0; gpu < 2; ++gpu)
        csv << fmt::format("2026/11/0{} {:02d}:{:02d}:00.000, NVIDIA A100-SXM4-80GB, 00000000:0{}:00.0, GPU-{}, {} %, {} MiB, 81920 MiB\n",
                           1 + minute / 1440, minute / 60 % 24, minute % 60, gpu, gpu, gpu ? 3 + minute % 5 : 90, 20000);
    csv << "not a row\n";
    // A row out of time order: the CLI notes that the series was read again in order.
    csv << "2026/11/01 00:00:30.000, NVIDIA A100-SXM4-80GB, 00000000:00:00.0, GPU-0, 90 %, 20000 MiB, 81920 MiB\n";
  }
  gpuwise::AuditQuery query;
  query.files = {path};
  query.host = "node-a";
  std::vector<std::string> seen;
  query.on_warning = [&seen](const std::string& line) { seen.push_back(line); };
  gpuwise::Answer audit = gpuwise::audit(gpuwise::Catalog::embedded(), query);
  std::string cli = fmt::format("NO_COLOR=1 '{}' audit '{}' --host node-a", GPUWISE_BINARY, path);
  EXPECT_EQ(audit.to_json(), capture(cli + " --format json 2>/dev/null"));
  EXPECT_EQ(audit.to_text(), capture(cli + " 2>/dev/null"));
  std::string stderr_lines;
  for (const auto& line : audit.warnings()) stderr_lines += line + "\n";
  EXPECT_EQ(stderr_lines, capture(cli + " 2>&1 >/dev/null"));
  EXPECT_EQ(seen, audit.warnings());
  EXPECT_FALSE(audit.warnings().empty());
  EXPECT_NE(audit.to_text().find("1 rows skipped"), std::string::npos);
  query.columns = "timestamp";
  try {
    gpuwise::audit(gpuwise::Catalog::embedded(), query);
    FAIL() << "a bad --columns was accepted";
  } catch (const gpuwise::Error& e) {
    EXPECT_EQ(e.field(), "--columns");
  }
  std::filesystem::remove_all(dir);
}

// A question with no answer at all is an error of its own kind, as the CLI's exit status 3.
TEST(Library, TrainWithNothingThatRunsIsInfeasible) {
  gpuwise::TrainQuery train;
  train.model = "llama-3.1-405b";
  train.tokens = 1e12;
  train.accelerator = "T4";
  train.count = 1;
  try {
    gpuwise::train(gpuwise::Catalog::embedded(), train);
    FAIL() << "405B trained on one T4";
  } catch (const gpuwise::Error& e) {
    EXPECT_EQ(e.kind(), gpuwise::Error::Kind::infeasible) << e.what();
    EXPECT_EQ(std::string("gpuwise: ") + e.what() + "\n",
              capture(fmt::format("'{}' train llama-3.1-405b --tokens 1e12 --accelerator T4 --count 1 2>&1", GPUWISE_BINARY)));
  }
  gpuwise::FitQuery fit;
  fit.model = "no-such-model";
  EXPECT_THROW(gpuwise::fit(gpuwise::Catalog::embedded(), fit), gpuwise::Error);
}

// Another thread stops a long simulation through the InterruptScope: the call throws
// (interrupted) instead of running to its end or returning a partial answer.
TEST(Library, InterruptScopeStopsALongSimulation) {
  auto dir = scratch("interrupt");
  std::string path = (dir / "spec.yaml").string();
  std::ofstream(path) << kSpec;
  gpuwise::Spec spec = gpuwise::Spec::load(path);
  gpuwise::SimulateOptions options;
  options.requests = 200'000'000;  // minutes of simulation, were it not stopped
  std::atomic<bool> stop{false};
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  try {
    gpuwise::InterruptScope scope(stop);
    gpuwise::simulate(gpuwise::Catalog::embedded(), spec, options);
    ADD_FAILURE() << "the simulation ran to its end";
  } catch (const gpuwise::Error& e) {
    EXPECT_EQ(e.kind(), gpuwise::Error::Kind::interrupted) << e.what();
  }
  stopper.join();
  // Outside the scope the same call runs as before.
  options.requests = 2000;
  EXPECT_TRUE(gpuwise::simulate(gpuwise::Catalog::embedded(), spec, options).all_meet());
  std::filesystem::remove_all(dir);
}

TEST(Library, CatalogListingsEqualTheCli) {
  const gpuwise::Catalog catalog = gpuwise::Catalog::embedded();
  const std::string cli = fmt::format("'{}' catalog ", GPUWISE_BINARY);
  EXPECT_EQ(catalog.accelerators_json(), capture(cli + "accelerators --format json"));
  EXPECT_EQ(catalog.accelerators_json({"H100,L4"}, 20), capture(cli + "accelerators --accelerator H100,L4 --min-vram-gib 20 --format json"));
  gpuwise::Catalog::OfferingFilter filter;
  filter.clouds = {"aws,gcp"};
  filter.accelerators = {"A100-80GB"};
  filter.pricing = "spot";
  filter.limit = 5;
  EXPECT_EQ(catalog.offerings_json(filter),
            capture(cli + "offerings --cloud aws,gcp --accelerator A100-80GB --pricing spot --limit 5 --format json"));
  EXPECT_EQ(catalog.offerings_json(), capture(cli + "offerings --format json"));
  filter.accelerators = {"H100X"};
  try {
    catalog.offerings_json(filter);
    FAIL() << "an unknown accelerator was accepted";
  } catch (const gpuwise::Error& e) {
    EXPECT_EQ(e.field(), "--accelerator");
    EXPECT_NE(e.message().find("did you mean"), std::string::npos) << e.what();
  }
}

TEST(Library, VersionIsTheCliVersion) {
  EXPECT_EQ(std::string("gpuwise ") + gpuwise::version() + "\n", capture(fmt::format("'{}' --version", GPUWISE_BINARY)));
}

}  // namespace
