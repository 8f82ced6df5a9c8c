// Integration test with a real Prometheus: two weeks of dcgm-exporter history for seven GPUs
// (idle, under-used, oversized, on a night schedule, healthy, and two starved by their hosts:
// one CPU-bound, one waiting on I/O, seen through node_exporter's CPU counters) is backfilled with promtool,
// served on loopback, and audited through the API; the findings must equal those of the audit
// of the same data read from a file.
#include "telemetry/prometheus_client.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <httplib.h>
#include <map>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "audit/audit.h"

namespace gw {
namespace {

bool have(const char* program) {
  return std::system(fmt::format("command -v {} >/dev/null 2>&1", program).c_str()) == 0;
}

struct Gpu {
  std::string name;
  std::function<double(double)> util;
  double memory_mib;
};

TEST(PrometheusAudit, FindingsThroughTheApiEqualFindingsFromFiles) {
  if (!have("prometheus") || !have("promtool")) GTEST_FAIL() << "prometheus and promtool are required (scripts/bootstrap installs them)";
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_prom_{}", ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "tsdb");
  std::vector<Gpu> gpus = {
      {"idle", [](double) { return 0.0; }, 900},
      {"underused", [](double) { return 20.0; }, 60000},
      {"oversized", [](double) { return 85.0; }, 9000},
      {"nights", [](double t) { return std::fmod(t, 86400) < 43200 ? 0.0 : 90.0; }, 70000},
      {"healthy", [](double) { return 80.0; }, 70000},
      {"cpubound", [](double) { return 25.0; }, 70000},
      {"iobound", [](double) { return 20.0; }, 70000},
  };
  // node_exporter on three of the hosts: CPUs, busy share (not I/O), I/O wait share.
  struct Host {
    std::string name;
    int cpus;
    double busy, iowait;
  };
  std::vector<Host> hosts = {{"underused", 2, 0.10, 0.0}, {"cpubound", 2, 0.95, 0.01}, {"iobound", 4, 0.15, 0.45}};
  // Whole hours ending an hour ago, 5-minute samples.
  double end = std::floor(static_cast<double>(std::time(nullptr)) / 3600) * 3600 - 3600;
  double start = end - 14 * 86400;
  std::ofstream openmetrics(dir / "history.om");
  std::ofstream scrapes(dir / "history.prom");
  for (const char* metric : {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"}) {
    openmetrics << "# TYPE " << metric << " gauge\n";
    for (const auto& g : gpus) {
      std::string labels = fmt::format("gpu=\"0\",UUID=\"GPU-{}\",Hostname=\"node-{}\",modelName=\"NVIDIA A100-SXM4-80GB\"",
                                       g.name, g.name);
      for (double t = start + 300; t <= end; t += 300) {
        double value = std::string(metric) == "DCGM_FI_DEV_GPU_UTIL" ? g.util(t) : g.memory_mib;
        openmetrics << fmt::format("{}{{{}}} {} {:.0f}\n", metric, labels, value, t);
        scrapes << fmt::format("{}{{{}}} {} {:.0f}\n", metric, labels, value, t * 1000);
      }
    }
  }
  openmetrics << "# TYPE node_cpu_seconds counter\n";
  for (const auto& h : hosts) {
    for (int cpu = 0; cpu < h.cpus; ++cpu) {
      for (const char* mode : {"idle", "iowait"}) {
        double share = std::string(mode) == "idle" ? 1 - h.busy - h.iowait : h.iowait;
        std::string labels = fmt::format("cpu=\"{}\",instance=\"node-{}:9100\",mode=\"{}\"", cpu, h.name, mode);
        for (double t = start + 900; t <= end; t += 900) {  // scraped every 15 minutes
          double value = 1000 + share * (t - start);
          openmetrics << fmt::format("node_cpu_seconds_total{{{}}} {:.3f} {:.0f}\n", labels, value, t);
          scrapes << fmt::format("node_cpu_seconds_total{{{}}} {:.3f} {:.0f}\n", labels, value, t * 1000);
        }
      }
    }
  }
  openmetrics << "# EOF\n";
  openmetrics.close();
  scrapes.close();
  ASSERT_EQ(std::system(fmt::format("promtool tsdb create-blocks-from openmetrics {} {} >{} 2>&1", (dir / "history.om").string(),
                                    (dir / "tsdb").string(), (dir / "promtool.log").string())
                            .c_str()),
            0);
  std::ofstream(dir / "prometheus.yml") << "global:\n  scrape_interval: 1m\nscrape_configs: []\n";
  int port = 20000 + ::getpid() % 20000;
  pid_t server = ::fork();
  if (server == 0) {
    std::freopen((dir / "prometheus.log").c_str(), "w", stderr);
    ::execlp("prometheus", "prometheus", ("--config.file=" + (dir / "prometheus.yml").string()).c_str(),
             ("--storage.tsdb.path=" + (dir / "tsdb").string()).c_str(),
             fmt::format("--web.listen-address=127.0.0.1:{}", port).c_str(), "--storage.tsdb.retention.time=60d",
             // Small enough that one query over the whole range is refused as too large.
             "--query.max-samples=20000",
             static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  ASSERT_GT(server, 0);
  struct Stop {
    pid_t pid;
    void now() {
      if (pid > 0) {
        ::kill(pid, SIGTERM);
        ::waitpid(pid, nullptr, 0);
      }
      pid = 0;
    }
    ~Stop() { now(); }
  } stop{server};
  httplib::Client probe("127.0.0.1", port);
  bool ready = false;
  for (int i = 0; i < 150 && !ready; ++i) {
    auto response = probe.Get("/-/ready");
    ready = response && response->status == 200;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(ready) << "prometheus did not become ready; see " << (dir / "prometheus.log");

  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  options.usd_per_gpu_hour = 2.0;
  TelemetryAggregator from_api;
  PrometheusQueryOptions query;
  query.url = fmt::format("http://127.0.0.1:{}", port);
  query.range_s = 14 * 86400;
  query.end_s = end;
  query.max_points_per_query = 100;  // forces several chunks per query
  PrometheusStats stats;
  auto error = audit_from_prometheus(query, from_api, stats);
  ASSERT_FALSE(error) << error->to_string();
  EXPECT_FALSE(stats.partial);
  EXPECT_GT(stats.queries, 7);  // chunked
  TelemetryAggregator from_file;
  ReadStats read;
  ASSERT_FALSE(read_telemetry((dir / "history.prom").string(), {}, [&](const TelemetrySample& s) { from_file.add(s); }, read));

  auto api = run_audit(from_api, catalog, options);
  auto file = run_audit(from_file, catalog, options);
  ASSERT_TRUE(api.ok() && file.ok());
  std::map<std::string, std::pair<std::string, double>> a, f;
  for (const auto& x : api.value().findings) a[x.scope] = {x.kind, x.waste_usd_per_month};
  for (const auto& x : file.value().findings) f[x.scope] = {x.kind, x.waste_usd_per_month};
  ASSERT_EQ(a.size(), f.size());
  for (const auto& [scope, finding] : f) {
    ASSERT_TRUE(a.count(scope)) << scope;
    EXPECT_EQ(a[scope].first, finding.first) << scope;
    EXPECT_NEAR(a[scope].second, finding.second, 1.0 + finding.second * 0.01) << scope;
  }
  std::set<std::string> kinds;
  for (const auto& [scope, finding] : f) kinds.insert(finding.first);
  EXPECT_EQ(kinds, (std::set<std::string>{"idle", "underused", "vram_oversized", "idle_schedule", "healthy", "starved"}));
  // The host CPU joined to the GPUs, the same through both paths.
  for (const auto* report : {&api.value(), &file.value()}) {
    int starved = 0;
    for (const auto& series : report->series) {
      std::string host;
      for (const auto& [k, v] : series.labels)
        if (k == "hostname") host = v;
      if (host == "node-cpubound") {
        ASSERT_TRUE(series.host_cpu_util_pct && series.host_cpus);
        EXPECT_NEAR(*series.host_cpu_util_pct, 96, 0.5);
        EXPECT_EQ(*series.host_cpus, 2);
      }
      if (host == "node-iobound") {
        ASSERT_TRUE(series.host_iowait_pct);
        EXPECT_NEAR(*series.host_iowait_pct, 45, 0.5);
      }
      if (host == "node-idle") {
        EXPECT_FALSE(series.host_cpu_util_pct);
      }
    }
    for (const auto& finding : report->findings) {
      if (finding.kind != "starved") continue;
      ++starved;
      bool io = finding.scope.find("iobound") != std::string::npos;
      EXPECT_NE(finding.recommendation.find(io ? "a smaller host would do: about 3 CPUs" : "a smaller host would not do"),
                std::string::npos)
          << finding.recommendation;
    }
    EXPECT_EQ(starved, 2);
  }

  // Faults with the real server. A bad selector: Prometheus's own message, no retries.
  {
    PrometheusQueryOptions bad = query;
    bad.selector = "namespace==";
    TelemetryAggregator ignored;
    PrometheusStats bad_stats;
    auto refused = audit_from_prometheus(bad, ignored, bad_stats);
    ASSERT_TRUE(refused.has_value());
    EXPECT_NE(refused->message.find("refused the query (HTTP 400)"), std::string::npos) << refused->message;
    EXPECT_EQ(bad_stats.retries, 0);
  }
  // One query over the whole range loads more samples than the server allows
  // (--query.max-samples): refused, split by the client, and the same findings.
  {
    PrometheusQueryOptions wide = query;
    wide.max_points_per_query = 100000;
    TelemetryAggregator from_wide;
    PrometheusStats wide_stats;
    auto wide_error = audit_from_prometheus(wide, from_wide, wide_stats);
    ASSERT_FALSE(wide_error) << wide_error->to_string();
    EXPECT_GT(wide_stats.splits, 0);
    EXPECT_FALSE(wide_stats.partial) << wide_stats.warnings;
    auto wide_audit = run_audit(from_wide, catalog, options);
    ASSERT_TRUE(wide_audit.ok());
    std::map<std::string, std::string> w;
    for (const auto& x : wide_audit.value().findings) w[x.scope] = x.kind;
    for (const auto& [scope, finding] : f) EXPECT_EQ(w[scope], finding.first) << scope;
  }
  // The server goes down: a clear error after bounded retries.
  stop.now();
  {
    PrometheusQueryOptions gone = query;
    gone.retries = 1;
    gone.backoff_s = 0.01;
    TelemetryAggregator ignored;
    PrometheusStats gone_stats;
    auto down = audit_from_prometheus(gone, ignored, gone_stats);
    ASSERT_TRUE(down.has_value());
    EXPECT_NE(down->message.find("cannot reach Prometheus"), std::string::npos) << down->message;
    EXPECT_EQ(gone_stats.queries, 2);
  }
  EXPECT_NEAR(api.value().mean_util_pct, file.value().mean_util_pct, 0.01);
  std::filesystem::remove_all(dir);
}

TEST(PrometheusAudit, UnreachableServerIsAClearError) {
  TelemetryAggregator aggregator;
  PrometheusQueryOptions query;
  query.url = "http://127.0.0.1:1";
  query.retries = 1;
  PrometheusStats stats;
  auto error = audit_from_prometheus(query, aggregator, stats);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("cannot reach Prometheus"), std::string::npos);
  EXPECT_TRUE(parse_duration_s("14d").has_value());
  EXPECT_DOUBLE_EQ(*parse_duration_s("36h"), 36 * 3600.0);
  EXPECT_FALSE(parse_duration_s("soon").has_value());
}

}  // namespace
}  // namespace gw
