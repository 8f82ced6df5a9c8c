// gpuwise watch with real parts: Debian's Prometheus backfilled with a week of dcgm-exporter
// history, the watcher auditing it and serving on loopback, and the same Prometheus scraping the
// watcher. What Prometheus stores from the scrape must be what the audit computes from the same
// data; the shipped rules must evaluate there; the page, the JSON, readiness, the token and
// the behaviour with Prometheus gone are checked over HTTP.
#include "watch/watcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "telemetry/prometheus_server_test.h"

namespace gw {
namespace {

using testing_support::have;
using testing_support::PrometheusServer;

double wall_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// Four A100s every 5 minutes for a week ending an hour or two ago: idle, busy, a quarter busy,
// and one whose pod's name carries a quote and markup.
void write_watch_history(const std::filesystem::path& file, double start, double end) {
  struct Gpu {
    std::string name, pod;
    double util;
  };
  const std::vector<Gpu> gpus = {{"idle", "notebook", 0}, {"busy", "trainer", 80}, {"quarter", "server", 25},
                                 {"hostile", "evil\\\"pod<script>", 60}};
  std::ofstream out(file);
  for (const char* metric : {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"}) {
    out << "# TYPE " << metric << " gauge\n";
    for (const auto& g : gpus)
      for (double t = start; t <= end; t += 300)
        out << fmt::format("{}{{gpu=\"0\",UUID=\"GPU-{}\",Hostname=\"node-{}\",modelName=\"NVIDIA A100-SXM4-80GB\",namespace=\"ml\",pod=\"{}\"}} {} {:.0f}\n",
                           metric, g.name, g.name, g.pod, std::string(metric) == "DCGM_FI_DEV_GPU_UTIL" ? g.util : 20000.0, t);
  }
  // The server's vLLM answers 5 requests a second: its cost per 1,000 is $2 / (5 x 3,600) x 1,000.
  out << "# TYPE vllm:request_success counter\n";
  for (double t = start; t <= end; t += 300)
    out << fmt::format("vllm:request_success_total{{namespace=\"ml\",pod=\"server\",model_name=\"m\"}} {:.0f} {:.0f}\n", 5 * (t - start), t);
  out << "# EOF\n";
}

nlohmann::json prometheus_query(int port, const std::string& query) {
  httplib::Client client("127.0.0.1", port);
  auto response = client.Get("/api/v1/query", httplib::Params{{"query", query}}, httplib::Headers{});
  if (!response) return nlohmann::json{{"status", "unreachable"}};
  return nlohmann::json::parse(response->body, nullptr, false);
}

TEST(Watch, PrometheusScrapesTheWatcherAndStoresTheAuditsFigures) {
  if (!have("prometheus") || !have("promtool")) GTEST_FAIL() << "prometheus and promtool are required (scripts/bootstrap installs them)";
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_watch_{}", ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const double now = wall_now();
  const double end = std::floor(now / 3600) * 3600 - 3600, start = end - 7 * 86400;
  write_watch_history(dir / "history.om", start, end);

  // The watcher's address first, so that Prometheus can be told to scrape it.
  std::string error;
  auto server = make_http_server(error);
  ASSERT_TRUE(server) << error;
  ASSERT_TRUE(server->bind("127.0.0.1", 0, error)) << error;
  PrometheusServer prometheus;
  prometheus.scrape_interval = "1s";
  prometheus.max_samples = 50000000;
  prometheus.scrape_configs = fmt::format(
      "scrape_configs:\n  - job_name: gpuwise\n    static_configs:\n      - targets: ['127.0.0.1:{}']\n", server->port());
  prometheus.start(dir, dir / "history.om");
  ASSERT_TRUE(prometheus.ready()) << "prometheus did not start; see " << (dir / "prometheus.log");

  Catalog catalog = Catalog::embedded().value();
  WatchOptions options;
  options.query.url = fmt::format("http://127.0.0.1:{}", prometheus.port);
  options.query.range_s = 7 * 86400;
  options.window_text = "7d";
  options.interval_s = 3600;
  options.audit.usd_per_gpu_hour = 2.0;
  options.audit.min_coverage_hours = 24;
  options.audit.group_by = "namespace";
  // Rolling windows beside the primary: the last hour holds no data (the history ends an hour or
  // two ago) and is left out; 24 hours is audited from the hours the 3-day window fetched.
  options.windows = {{"1h", 3600}, {"24h", 86400}, {"7d", 7 * 86400}};
  Watcher watcher(catalog, options);
  EXPECT_EQ(watcher.answer({"/readyz", ""}, now).status, 503);
  EXPECT_EQ(watcher.answer({"/healthz", ""}, now).status, 200);

  std::atomic<bool> stop{false};
  std::thread loop([&] { run_watch(watcher, *server, stop); });
  struct Stop {
    std::atomic<bool>& flag;
    std::thread& thread;
    ~Stop() {
      flag.store(true);
      if (thread.joinable()) thread.join();
    }
  } stopper{stop, loop};

  // The same window audited straight from Prometheus, for the figures to compare with.
  AuditInputs in;
  in.prometheus = options.query;
  in.prometheus->end_s = now;
  in.options = options.audit;
  auto audit = audit_telemetry(catalog, in);
  ASSERT_TRUE(audit.ok()) << audit.error().to_string();
  const AuditReport& report = audit.value().report;
  ASSERT_EQ(report.series.size(), 4u);

  // Prometheus scrapes the watcher once it has refreshed: wait for the figures to arrive.
  nlohmann::json idle;
  for (int i = 0; i < 300; ++i) {
    idle = prometheus_query(prometheus.port, "gpuwise_gpu_idle_ratio");
    if (idle.value("status", "") == "success" && idle["data"]["result"].size() == 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(idle["data"]["result"].size(), 4u) << idle.dump() << "; the watcher said: " << watcher.last_error();
  std::map<std::string, const SeriesReport*> by_id;
  for (const auto& s : report.series) by_id[s.id] = &s;
  bool hostile_seen = false;
  for (const auto& sample : idle["data"]["result"]) {
    const std::string gpu = sample["metric"]["gpu"];
    ASSERT_TRUE(by_id.count(gpu)) << gpu;
    EXPECT_NEAR(std::stod(sample["value"][1].get<std::string>()), by_id[gpu]->idle_fraction, 1e-9) << gpu;
    EXPECT_EQ(sample["metric"]["window"], "7d");
    if (sample["metric"].value("pod", "") == "evil\"pod<script>") hostile_seen = true;
  }
  EXPECT_TRUE(hostile_seen) << "the pod's name with a quote and markup came through the exposition whole: " << idle.dump();
  auto fleet = prometheus_query(prometheus.port, "gpuwise_fleet_cost_usd_per_hour{window=\"7d\"}");
  ASSERT_EQ(fleet["data"]["result"].size(), 1u) << fleet.dump();
  EXPECT_NEAR(std::stod(fleet["data"]["result"][0]["value"][1].get<std::string>()), report.fleet_usd_per_month / 730, 1e-6);
  EXPECT_NEAR(report.fleet_usd_per_month / 730, 4 * 2.0, 1e-6);  // four GPUs at $2 an hour
  auto recoverable = prometheus_query(prometheus.port, "gpuwise_fleet_recoverable_usd_per_month{window=\"7d\"}");
  ASSERT_EQ(recoverable["data"]["result"].size(), 1u);
  EXPECT_NEAR(std::stod(recoverable["data"]["result"][0]["value"][1].get<std::string>()), report.recoverable_usd_per_month, 1e-6);
  EXPECT_GT(report.recoverable_usd_per_month, 0);  // the idle GPU at least

  // Every shipped rule's expression evaluates on this Prometheus; the idle GPU is the one GpuIdle finds.
  for (const char* file : {"gpuwise-alerts.yml", "gpuwise-recording.yml"}) {
    YAML::Node rules = YAML::LoadFile((std::filesystem::path(GPUWISE_SOURCE_DIR) / "deploy" / "prometheus" / file).string());
    for (const auto& group : rules["groups"])
      for (const auto& rule : group["rules"]) {
        const std::string expr = rule["expr"].as<std::string>();
        auto answer = prometheus_query(prometheus.port, expr);
        EXPECT_EQ(answer.value("status", ""), "success") << expr << ": " << answer.dump();
        if (rule["alert"] && rule["alert"].as<std::string>() == "GpuIdle") {
          ASSERT_EQ(answer["data"]["result"].size(), 1u) << answer.dump();
          EXPECT_EQ(answer["data"]["result"][0]["metric"]["UUID"], "GPU-idle");
        }
      }
  }

  // Every dashboard panel's query runs there with every variable at All, and returns data; the
  // three headline figures are the audit's.
  std::ifstream dashboard_file(std::filesystem::path(GPUWISE_SOURCE_DIR) / "deploy" / "grafana" / "gpuwise-dashboard.json");
  const auto dashboard = nlohmann::json::parse(dashboard_file);
  std::vector<std::string> variables;
  for (const auto& v : dashboard["templating"]["list"]) variables.push_back(v["name"]);
  EXPECT_EQ(variables, std::vector<std::string>({"datasource", "window", "namespace", "team", "accelerator"}));
  auto label_values = prometheus_query(prometheus.port, "count by (namespace) (gpuwise_gpu_cost_usd_per_hour)");
  ASSERT_EQ(label_values["data"]["result"].size(), 1u);
  EXPECT_EQ(label_values["data"]["result"][0]["metric"]["namespace"], "ml");
  double idle_usd_per_month = 0;
  for (const auto& s : report.series) idle_usd_per_month += s.usd_per_month * s.idle_fraction;
  const std::map<std::string, double> headline = {
      {"Spend", report.fleet_usd_per_month}, {"Idle dollars", idle_usd_per_month}, {"Recoverable", report.recoverable_usd_per_month}};
  int panels = 0;
  for (const auto& panel : dashboard["panels"]) {
    ++panels;
    const std::string title = panel["title"];
    EXPECT_EQ(panel["datasource"]["uid"], "${datasource}") << title;
    for (const auto& target : panel["targets"]) {
      std::string expr = target["expr"];
      for (const char* name : {"$namespace", "$team", "$accelerator"})
        for (size_t at; (at = expr.find(name)) != std::string::npos;) expr.replace(at, std::string(name).size(), ".*");
      for (size_t at; (at = expr.find("$window")) != std::string::npos;) expr.replace(at, 7, "7d");
      auto answer = prometheus_query(prometheus.port, expr);
      ASSERT_EQ(answer.value("status", ""), "success") << title << ": " << expr << ": " << answer.dump();
      ASSERT_FALSE(answer["data"]["result"].empty()) << title << ": " << expr;
      if (headline.count(title)) {
        EXPECT_NEAR(std::stod(answer["data"]["result"][0]["value"][1].get<std::string>()), headline.at(title),
                    1e-6 * std::max(1.0, headline.at(title)))
            << title;
      }
    }
  }
  EXPECT_GE(panels, 12);
  auto hours = prometheus_query(prometheus.port, "count(gpuwise_fleet_duty_cycle_by_hour_of_week_ratio{window=\"7d\"})");
  EXPECT_GE(std::stod(hours["data"]["result"][0]["value"][1].get<std::string>()), 160);  // a week of history
  // The idle heat map: one GPU of four idle in every hour of the history; its dollars are the idle
  // GPU's $2 an hour.
  auto idle_hours = prometheus_query(prometheus.port, "gpuwise_fleet_idle_by_hour_of_week_ratio{window=\"7d\"}");
  ASSERT_GE(idle_hours["data"]["result"].size(), 160u) << idle_hours.dump();
  for (const auto& sample : idle_hours["data"]["result"]) EXPECT_NEAR(std::stod(sample["value"][1].get<std::string>()), 0.25, 1e-9);
  auto idle_dollars = prometheus_query(prometheus.port, "max(gpuwise_fleet_idle_cost_by_hour_of_week_usd_per_hour{window=\"7d\"})");
  EXPECT_NEAR(std::stod(idle_dollars["data"]["result"][0]["value"][1].get<std::string>()), 2.0, 1e-9);

  // Cost per 1,000 inferences from the serving engine's counter, on the server's GPU and the fleet.
  auto per_1k = prometheus_query(prometheus.port, "gpuwise_gpu_cost_per_1k_inferences_usd");
  ASSERT_EQ(per_1k["data"]["result"].size(), 1u) << per_1k.dump();
  EXPECT_EQ(per_1k["data"]["result"][0]["metric"]["pod"], "server");
  EXPECT_NEAR(std::stod(per_1k["data"]["result"][0]["value"][1].get<std::string>()), 2.0 / (5 * 3600) * 1000, 1e-4);
  auto fleet_per_1k = prometheus_query(prometheus.port, "gpuwise_fleet_cost_per_1k_inferences_usd{window=\"7d\"}");
  ASSERT_EQ(fleet_per_1k["data"]["result"].size(), 1u) << fleet_per_1k.dump();
  EXPECT_NEAR(std::stod(fleet_per_1k["data"]["result"][0]["value"][1].get<std::string>()), *report.usd_per_1k_inferences, 1e-9);

  // The rolling windows: the fleet's figures for each window with data, the per-GPU ones for the
  // primary window only; the 24-hour window's cost is the four GPUs' too.
  auto windows = prometheus_query(prometheus.port, "gpuwise_fleet_cost_usd_per_hour");
  std::map<std::string, double> cost_by_window;
  for (const auto& sample : windows["data"]["result"])
    cost_by_window[sample["metric"]["window"]] = std::stod(sample["value"][1].get<std::string>());
  EXPECT_EQ(cost_by_window.size(), 2u) << windows.dump();
  EXPECT_NEAR(cost_by_window["24h"], 8.0, 1e-6);
  EXPECT_NEAR(cost_by_window["7d"], 8.0, 1e-6);
  auto per_gpu_windows = prometheus_query(prometheus.port, "count by (window) (gpuwise_gpu_idle_ratio)");
  ASSERT_EQ(per_gpu_windows["data"]["result"].size(), 1u) << per_gpu_windows.dump();
  EXPECT_EQ(per_gpu_windows["data"]["result"][0]["metric"]["window"], "7d");

  // A second refresh asks Prometheus only for the hours that had not settled: the store answers
  // the rest, and the figures stay the audit's.
  const auto gauge = [&](const std::string& name) {
    const std::string text = watcher.metrics(wall_now());
    const std::string sample = "\n" + name + " ";  // the sample, not its HELP
    return std::stod(text.substr(text.find(sample) + sample.size()));
  };
  EXPECT_EQ(gauge("gpuwise_watch_asked_span_seconds"), 168 * 3600);  // the week's window, all of it
  EXPECT_GE(gauge("gpuwise_watch_hourly_answers_kept"), 4 * 40);
  ASSERT_TRUE(watcher.refresh(now + 60)) << watcher.last_error();
  // The hour in progress, and the one before while it settles (15 minutes).
  EXPECT_GE(gauge("gpuwise_watch_asked_span_seconds"), 3600);
  EXPECT_LE(gauge("gpuwise_watch_asked_span_seconds"), 2 * 3600);
  const std::string again = watcher.metrics(now + 60);
  for (const auto& s : report.series) {
    const std::string line = fmt::format("\ngpuwise_gpu_idle_ratio{{gpu=\"{}\"", escape_label_value(s.id));
    const size_t at = again.find(line);
    ASSERT_NE(at, std::string::npos) << s.id;
    const size_t value = again.find("} ", at) + 2;
    EXPECT_NEAR(std::stod(again.substr(value, again.find('\n', value) - value)), s.idle_fraction, 1e-9) << s.id;
  }

  // Over HTTP: the findings are the audit's, the page refreshes itself, unknown paths are 404.
  // The watcher last refreshed at now + 60, so its findings are the audit of the window ending
  // then (the hours a GPU was seen can round one lower a minute later: the history ends on an
  // hour and the window slides).
  AuditInputs refreshed = in;
  refreshed.prometheus->end_s = now + 60;
  auto audit_later = audit_telemetry(catalog, refreshed);
  ASSERT_TRUE(audit_later.ok()) << audit_later.error().to_string();
  httplib::Client client("127.0.0.1", server->port());
  auto findings = client.Get("/api/v1/findings");
  ASSERT_TRUE(findings);
  EXPECT_EQ(findings->status, 200);
  auto served = nlohmann::json::parse(findings->body);
  EXPECT_EQ(served["findings"], to_json(audit_later.value())["findings"]);
  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<meta http-equiv=\"refresh\" content=\"3600\">"), std::string::npos);
  EXPECT_EQ(page->body.find("<script>\""), std::string::npos);
  // The live page in Chromium: its charts draw, no script from the data runs, the hostile pod's
  // name shows as text.
  const bool browser = have("node") && have("chromium") &&
                       std::filesystem::exists(std::filesystem::path(GPUWISE_SOURCE_DIR) / "web" / "node_modules" / "playwright-core");
  if (browser) {
    std::ofstream(dir / "watch.html") << page->body;
    const std::string command = fmt::format("cd '{}' && node test/render.mjs '{}' '{}' 'evil\"pod<script>' >'{}' 2>&1",
                                            (std::filesystem::path(GPUWISE_SOURCE_DIR) / "web").string(), (dir / "watch.html").string(),
                                            (dir / "watch.png").string(), (dir / "render.log").string());
    const int status = std::system(command.c_str());
    std::ifstream log(dir / "render.log");
    const std::string said((std::istreambuf_iterator<char>(log)), {});
    EXPECT_EQ(status, 0) << said;
    EXPECT_NE(said.find("\"failures\":[]"), std::string::npos) << said;
  } else if (std::getenv("GPUWISE_REQUIRE_BROWSER")) {
    ADD_FAILURE() << "node, chromium and web/node_modules are required to render the page (scripts/bootstrap installs them)";
  }
  EXPECT_EQ(client.Get("/nothing")->status, 404);
  EXPECT_EQ(client.Get("/readyz")->status, 200);

  // Prometheus gone: the refresh fails, the last values stay, their age shows, retries back off.
  prometheus.now();
  const double later = wall_now() + 60;
  EXPECT_FALSE(watcher.refresh(later));
  EXPECT_NEAR(watcher.next_refresh_s(), later + 5, 1e-6);
  EXPECT_FALSE(watcher.refresh(later + 5));
  EXPECT_NEAR(watcher.next_refresh_s(), later + 15, 1e-6);
  const std::string metrics = watcher.metrics(later + 5);
  EXPECT_NE(metrics.find("gpuwise_gpu_idle_ratio{"), std::string::npos);
  EXPECT_NE(metrics.find("gpuwise_watch_refreshes_total{result=\"failure\"} 2"), std::string::npos) << metrics;
  EXPECT_EQ(watcher.answer({"/readyz", ""}, later).status, 200);  // serving the last values
  std::filesystem::remove_all(dir);
}

TEST(Watch, ATokenGuardsTheDataButNotTheProbes) {
  Catalog catalog = Catalog::embedded().value();
  WatchOptions options;
  options.query.url = "http://127.0.0.1:9";  // nothing listens there
  options.query.retries = 0;
  options.query.timeout_s = 1;
  options.metrics_token = "s3cret";
  Watcher watcher(catalog, options);
  EXPECT_FALSE(watcher.refresh(1000));
  EXPECT_FALSE(watcher.last_error().empty());
  EXPECT_EQ(watcher.answer({"/metrics", ""}, 1000).status, 401);
  EXPECT_EQ(watcher.answer({"/metrics", "Bearer wrong"}, 1000).status, 401);
  HttpReply metrics = watcher.answer({"/metrics", "Bearer s3cret"}, 1000);
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("gpuwise_watch_last_success_timestamp_seconds 0\n"), std::string::npos);
  EXPECT_EQ(metrics.body.find("gpuwise_gpu_"), std::string::npos);  // nothing to say of GPUs yet
  EXPECT_EQ(watcher.answer({"/api/v1/findings", ""}, 1000).status, 401);
  EXPECT_EQ(watcher.answer({"/api/v1/findings", "Bearer s3cret"}, 1000).status, 503);
  EXPECT_EQ(watcher.answer({"/healthz", ""}, 1000).status, 200);
  EXPECT_EQ(watcher.answer({"/readyz", ""}, 1000).status, 503);
}

}  // namespace
}  // namespace gw
