// A batch job's manifests: the CronJob (or a Job per run), the driver's ConfigMap and the nodes
// validate against their published schemas, each pod's containers ask no more than the
// replica's share of its node, and the driver itself, run by python3 against a stand-in
// engine on loopback, skips what a reclaimed pod's output holds, records answers that are
// errors, and fails where the engine cannot be reached.
#include "k8s/batch_job_manifests.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/require_tools_test.h"
#include "k8s/manifest_schemas_test.h"
#include "k8s/yaml_json_test.h"

namespace gw {
namespace {

using testing_support::ManifestSchemas;

BatchJobManifestInput nightly_job() {
  BatchJobManifestInput b;
  ManifestInput& in = b.pod;
  in.service = "nightly-summaries";
  in.batch_job = true;
  in.role = "batch";
  in.llm = true;
  in.cloud = "aws";
  in.instance_types = {"p6-b200.48xlarge"};
  in.capacity_types = {"spot", "on-demand"};
  in.accelerator = "B200";
  in.gpus_per_replica = 1;
  in.replicas = in.peak_replicas = in.max_replicas = 8;
  in.min_nodes = 1;
  in.cpu_per_replica = 23.8;
  in.memory_gib_per_replica = 255;
  in.model_name = "summarizer";
  in.cooldown_s = 60;
  in.startup_s = 181;
  in.cold_start_s = 181;
  b.schedule = "0 1 * * *";
  b.runs_per_month = 30.4;
  b.deadline_hours = 4;
  b.run_hours = 0.24;
  b.items = 200000;
  b.usd_per_run = 3.158;
  b.spot = true;
  b.usd_per_run_on_demand = 9.5;
  b.input_uri = "s3://ticket-batches/summaries/input";
  b.output_uri = "s3://ticket-batches/summaries/output";
  return b;
}

const Manifest& named(const std::vector<Manifest>& all, const std::string& file) {
  for (const Manifest& m : all)
    if (m.file_name == file) return m;
  static const Manifest none;
  ADD_FAILURE() << "no " << file;
  return none;
}

// On a schedule: a CronJob of an Indexed Job, a pod per replica and part, replaced without
// counting a failure when a reclaim or drain takes it; without one, a Job created per run.
TEST_F(ManifestSchemas, ABatchJobIsAnIndexedJobOnItsSchedule) {
  const std::vector<Manifest> scheduled = batch_job_manifests(nightly_job());
  expect_each_validates(scheduled);
  const YAML::Node cron = YAML::Load(named(scheduled, "nightly-summaries-cronjob.yaml").yaml);
  EXPECT_EQ(cron["spec"]["schedule"].as<std::string>(), "0 1 * * *");
  EXPECT_EQ(cron["spec"]["concurrencyPolicy"].as<std::string>(), "Forbid");
  // Started later than the deadline less the planned run, a run cannot finish in time.
  EXPECT_EQ(cron["spec"]["startingDeadlineSeconds"].as<int>(), static_cast<int>(std::ceil((4 - 0.24) * 3600)));
  const YAML::Node job = cron["spec"]["jobTemplate"]["spec"];
  EXPECT_EQ(job["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(job["completions"].as<int>(), 8);
  EXPECT_EQ(job["parallelism"].as<int>(), 8);
  EXPECT_EQ(job["activeDeadlineSeconds"].as<int>(), 4 * 3600);
  EXPECT_EQ(job["podFailurePolicy"]["rules"][0]["action"].as<std::string>(), "Ignore");
  EXPECT_EQ(job["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["type"].as<std::string>(), "DisruptionTarget");
  const YAML::Node pod = job["template"]["spec"];
  EXPECT_EQ(job["template"]["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"].as<std::string>(), "true");
  // The engine and the uploader are native sidecars; the engine's startup probe holds the driver back.
  int sidecars = 0;
  double cpu = 0;
  for (const YAML::Node& c : pod["initContainers"])
    if (c["restartPolicy"]) {
      ++sidecars;
      if (c["resources"]) cpu += std::stod(c["resources"]["requests"]["cpu"].as<std::string>()) / 1000;
    }
  EXPECT_EQ(sidecars, 2);
  cpu += std::stod(pod["containers"][0]["resources"]["requests"]["cpu"].as<std::string>()) / 1000;
  EXPECT_LE(cpu, 23.8 + 1e-9) << "the pod asks more than the replica's share of its node";
  const std::string fetch = pod["initContainers"][1]["command"][2].as<std::string>();
  EXPECT_NE(fetch.find("s3://ticket-batches/summaries/input/part-${JOB_COMPLETION_INDEX}.jsonl"), std::string::npos) << fetch;
  EXPECT_NE(fetch.find("s3://ticket-batches/summaries/output/part-${JOB_COMPLETION_INDEX}.jsonl /batch/out.jsonl"), std::string::npos) << fetch;
  EXPECT_NE(named(scheduled, "nightly-summaries-cronjob.yaml").yaml.find("costing up to $9.5"), std::string::npos);
  const YAML::Node pool = YAML::Load(named(scheduled, "nightly-summaries-karpenter-nodepool.yaml").yaml);
  EXPECT_EQ(pool["spec"]["template"]["spec"]["requirements"][0]["values"][0].as<std::string>(), "spot");

  BatchJobManifestInput once = nightly_job();
  once.schedule.clear();
  const std::vector<Manifest> per_run = batch_job_manifests(once);
  expect_each_validates(per_run);
  const YAML::Node single = YAML::Load(named(per_run, "nightly-summaries-job.yaml").yaml);
  EXPECT_EQ(single["metadata"]["generateName"].as<std::string>(), "nightly-summaries-");
  EXPECT_EQ(single["spec"]["completions"].as<int>(), 8);
}

// The driver as each pod runs it, against a stand-in engine: python3's HTTP server on loopback
// answering completions, a 400 for one prompt.
class BatchDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_TOOLS(testing_support::have("python3"), "python3 is required (scripts/bootstrap installs it)");
    dir_ = std::filesystem::temp_directory_path() / fmt::format("gpuwise_batch_driver_{}", ::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "run_batch.py") << batch_driver_script();
    std::ofstream(dir_ / "engine.py") << R"PY(import http.server, json, sys
log = open(sys.argv[2], "a")
class Engine(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        log.write(self.path + " " + json.dumps(body) + "\n"); log.flush()
        if body.get("prompt") == "bad":
            self.send_response(400); self.end_headers(); self.wfile.write(b"prompt refused"); return
        answer = {"choices": [{"text": body.get("prompt", "")}]} if self.path.startswith("/v1/") else {"id": body["id"], "outputs": []}
        data = json.dumps(answer).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Engine)
open(sys.argv[1], "w").write(str(server.server_address[1]))
server.serve_forever()
)PY";
    const std::string port_file = (dir_ / "port").string();
    const int launched = std::system(fmt::format("python3 {} {} {} >/dev/null 2>&1 & echo $! > {}", (dir_ / "engine.py").string(),
                                                 port_file, (dir_ / "engine.log").string(), (dir_ / "pid").string())
                                         .c_str());
    ASSERT_EQ(launched, 0);
    for (int i = 0; i < 100 && port_.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::ifstream in(port_file);
      std::getline(in, port_);
    }
    ASSERT_FALSE(port_.empty()) << "the stand-in engine did not start";
  }
  void TearDown() override {
    if (!dir_.empty()) {
      if (std::system(fmt::format("kill $(cat {}) 2>/dev/null", (dir_ / "pid").string()).c_str()) != 0) {
        // already gone
      }
      std::filesystem::remove_all(dir_);
    }
  }
  int drive(const std::string& protocol, const std::string& server, int tries = 6) {
    return std::system(fmt::format("cd {0} && INPUT=in.jsonl OUTPUT=out.jsonl SERVER={1} PROTOCOL={2} MODEL=scorer CONCURRENCY=4 TRIES={3} "
                                   "python3 run_batch.py > driver.log 2>&1",
                                   dir_.string(), server, protocol, tries)
                           .c_str());
  }
  std::vector<std::string> lines(const std::string& file) {
    std::ifstream in(dir_ / file);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::filesystem::path dir_;
  std::string port_;
};

// Forty requests, ten already answered before a reclaim (the last of them cut short): thirty-one
// are sent (the cut one again), every id is answered once, the refused prompt is recorded as an
// error, and the run succeeds.
TEST_F(BatchDriver, ResumesWhereAReclaimedPodStoppedAndRecordsErrors) {
  {
    std::ofstream in(dir_ / "in.jsonl"), out(dir_ / "out.jsonl");
    for (int i = 0; i < 40; ++i)
      in << nlohmann::json{{"custom_id", fmt::format("r{}", i)}, {"method", "POST"}, {"url", "/v1/completions"},
                           {"body", {{"model", "summarizer"}, {"prompt", i == 25 ? "bad" : fmt::format("p{}", i)}}}}.dump()
         << "\n";
    for (int i = 0; i < 9; ++i) out << nlohmann::json{{"custom_id", fmt::format("r{}", i)}, {"response", {{"status_code", 200}}}}.dump() << "\n";
    out << "{\"custom_id\": \"r9\", \"resp";  // the pod stopped mid-line
  }
  ASSERT_EQ(drive("openai", "http://127.0.0.1:" + port_), 0) << fmt::format("{}", fmt::join(lines("driver.log"), "\n"));
  EXPECT_EQ(lines("engine.log").size(), 31u);
  std::multiset<std::string> answered;
  int errors = 0;
  for (const std::string& line : lines("out.jsonl")) {
    auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded()) continue;
    answered.insert(record["custom_id"].get<std::string>());
    if (record.contains("error") && !record["error"].is_null()) {
      ++errors;
      EXPECT_EQ(record["custom_id"], "r25");
      EXPECT_EQ(record["response"]["status_code"], 400);
    }
  }
  EXPECT_EQ(answered.size(), 40u);
  EXPECT_EQ(std::set<std::string>(answered.begin(), answered.end()).size(), 40u);
  EXPECT_EQ(errors, 1);
  EXPECT_NE(lines("driver.log").back().find("skipped 9 already done"), std::string::npos) << lines("driver.log").back();
}

// Other models: KServe v2 inference requests to Triton's /v2/models/<model>/infer; an engine
// that cannot be reached fails the pod, so its index is retried (and resumes).
TEST_F(BatchDriver, SendsKserveRequestsAndFailsWithoutAnEngine) {
  {
    std::ofstream in(dir_ / "in.jsonl");
    for (int i = 0; i < 5; ++i) in << nlohmann::json{{"id", fmt::format("x{}", i)}, {"inputs", nlohmann::json::array()}}.dump() << "\n";
  }
  ASSERT_EQ(drive("kserve-v2", "http://127.0.0.1:" + port_), 0) << fmt::format("{}", fmt::join(lines("driver.log"), "\n"));
  const auto log = lines("engine.log");
  ASSERT_EQ(log.size(), 5u);
  EXPECT_EQ(log[0].rfind("/v2/models/scorer/infer ", 0), 0u) << log[0];
  EXPECT_EQ(lines("out.jsonl").size(), 5u);
  std::filesystem::remove(dir_ / "out.jsonl");
  EXPECT_NE(drive("kserve-v2", "http://127.0.0.1:1", 1), 0);
}

}  // namespace
}  // namespace gw
