// Integration test with a real Prometheus: two weeks of dcgm-exporter history for seven GPUs
// (idle, under-used, oversized, on a night schedule, healthy, and two starved by their hosts:
// one CPU-bound, one waiting on I/O, seen through node_exporter's CPU counters) is backfilled with promtool,
// served on loopback, and audited through the API; the findings must equal those of the audit
// of the same data read from a file.
#include "telemetry/prometheus_client.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <httplib.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "audit/audit.h"
#include "telemetry/prometheus_server_test.h"
#include "telemetry/recording_rules.h"

namespace gw {
namespace {

using testing_support::have;
using testing_support::PrometheusServer;
using testing_support::VictoriaMetricsServer;


struct Gpu {
  std::string name;
  std::function<double(double)> util;
  double memory_mib;
  double from_s = 0, to_s = 0;  // a pod's life (0: the whole history)
  double spacing_s = 300;
};


// node_exporter on a host: CPUs, busy share (not I/O), I/O wait share.
struct Host {
  std::string name;
  int cpus;
  double busy, iowait;
};

// The GPUs' and hosts' samples, as OpenMetrics for promtool to backfill and as a scrape file.
void write_history(const std::filesystem::path& dir, const std::vector<Gpu>& gpus, const std::vector<Host>& hosts,
                   double start, double end, const std::function<bool(const Gpu&, double)>& sampled) {
  std::ofstream openmetrics(dir / "history.om");
  std::ofstream scrapes(dir / "history.prom");
  for (const char* metric : {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"}) {
    openmetrics << "# TYPE " << metric << " gauge\n";
    for (const auto& g : gpus) {
      std::string labels = fmt::format("gpu=\"0\",UUID=\"GPU-{}\",Hostname=\"node-{}\",modelName=\"NVIDIA A100-SXM4-80GB\"",
                                       g.name, g.name);
      double from = g.to_s > 0 ? g.from_s : start + 300, to = g.to_s > 0 ? g.to_s : end;
      for (double t = from; t <= to; t += g.spacing_s) {
        if (!sampled(g, t)) continue;
        double value = std::string(metric) == "DCGM_FI_DEV_GPU_UTIL"  ? g.util(t)
                       : g.name == "glitchy" && std::fmod(t, 300 * 89) < 1 ? -5
                                                                             : g.memory_mib;
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
}

// Every series, the short-lived pods too, with the files' means, coverage and gaps (and, over
// the whole history, the pods' and the holed GPU's own).
void expect_same_series(const AuditReport& api, const AuditReport& file, size_t gpus, bool whole_history = true) {
  ASSERT_EQ(api.series.size(), gpus);
  std::map<std::string, const SeriesReport*> api_series;
  for (const auto& series : api.series) api_series[series.id] = &series;
  for (const auto& series : file.series) {
    ASSERT_TRUE(api_series.count(series.id)) << series.id;
    const SeriesReport& through_api = *api_series[series.id];
    EXPECT_NEAR(through_api.mean_util_pct, series.mean_util_pct, 1e-6) << series.id;
    EXPECT_NEAR(through_api.coverage_hours, series.coverage_hours, std::max(0.2 / 60, series.coverage_hours * 0.002)) << series.id;
    EXPECT_EQ(through_api.gaps, series.gaps) << series.id;
    EXPECT_EQ(through_api.out_of_range_samples, series.out_of_range_samples) << series.id;
    EXPECT_NEAR(through_api.idle_fraction, series.idle_fraction, 0.01) << series.id;
    EXPECT_NEAR(through_api.peak_memory_bytes, series.peak_memory_bytes, 1e-6) << series.id;
    if (series.id.find("glitchy") != std::string::npos) {
      EXPECT_GT(series.out_of_range_samples, 40);
      EXPECT_NEAR(series.mean_util_pct, 60, 1e-9);  // the 250% readings are not averaged
    }
    EXPECT_NEAR(through_api.gap_hours, series.gap_hours, 0.1) << series.id;
    if (!whole_history) continue;
    if (series.id.find("pod") != std::string::npos) {
      double minutes = std::stod(series.id.substr(series.id.find("pod") + 3));
      EXPECT_NEAR(series.coverage_hours, (minutes * 60 + 15) / 3600, 1e-9) << series.id;  // the last sample's 15 s
    }
    if (series.id.find("holed") != std::string::npos) {
      EXPECT_EQ(series.gaps, 1);
      EXPECT_NEAR(series.gap_hours, 22200 / 3600.0, 1e-6);  // from the last sample before the hole to the first after
    }
  }
}

// The same findings, with the same dollars within a dollar and 1%; returns their kinds.
std::set<std::string> expect_same_findings(const AuditReport& api, const AuditReport& file) {
  std::map<std::string, std::pair<std::string, double>> a, f;
  for (const auto& x : api.findings) a[x.scope] = {x.kind, x.waste_usd_per_month};
  for (const auto& x : file.findings) f[x.scope] = {x.kind, x.waste_usd_per_month};
  EXPECT_EQ(a.size(), f.size());
  std::set<std::string> kinds;
  for (const auto& [scope, finding] : f) {
    kinds.insert(finding.first);
    if (!a.count(scope)) {
      ADD_FAILURE() << "no finding for " << scope << " through the API";
      continue;
    }
    EXPECT_EQ(a[scope].first, finding.first) << scope;
    EXPECT_NEAR(a[scope].second, finding.second, 1.0 + finding.second * 0.01) << scope;
  }
  return kinds;
}

// The host CPU joined to the GPUs, the same through both paths.
void expect_hosts_joined(const AuditReport& api, const AuditReport& file) {
  for (const auto* report : {&api, &file}) {
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
}

// Faults with the real server: a bad selector, a query over the server's sample limit, and the
// server gone (stopped here).
void expect_faults_handled(const PrometheusQueryOptions& query, PrometheusServer& stop) {
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
  // One query over ten days loads more samples than the server allows (--query.max-samples: the
  // 5-minute steps of a dozen series over 240 hours): refused, split by the client, and the same
  // series as ten days asked for in small chunks.
  {
    PrometheusQueryOptions wide = query;
    wide.range_s = 10 * 86400;
    wide.max_points_per_query = 100000;
    TelemetryAggregator from_wide;
    PrometheusStats wide_stats;
    auto wide_error = audit_from_prometheus(wide, from_wide, wide_stats);
    ASSERT_FALSE(wide_error) << wide_error->to_string();
    EXPECT_GT(wide_stats.splits, 0);
    EXPECT_FALSE(wide_stats.partial) << wide_stats.warnings;
    PrometheusQueryOptions narrow = wide;
    narrow.max_points_per_query = 12;
    TelemetryAggregator from_narrow;
    PrometheusStats narrow_stats;
    ASSERT_FALSE(audit_from_prometheus(narrow, from_narrow, narrow_stats));
    ASSERT_EQ(from_wide.series().size(), from_narrow.series().size());
    for (const auto& [id, a] : from_narrow.series()) {
      ASSERT_TRUE(from_wide.series().count(id)) << id;
      const SeriesAggregate& b = from_wide.series().at(id);
      EXPECT_EQ(a.util_samples, b.util_samples) << id;
      EXPECT_NEAR(a.mean_util(), b.mean_util(), 1e-9) << id;
      EXPECT_NEAR(a.coverage_hours(), b.coverage_hours(), 1e-9) << id;
    }
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
}

enum class Engine { prometheus, victoria_metrics };

// The synthetic fleet's history served by a Prometheus-compatible engine and audited through its
// API: every finding, dollar, series, host join equal to the audit of the same samples read
// from a file. With Prometheus also the faults a real server gives (a refused query, a query
// over its sample limit, the server gone).
void expect_api_equals_files(Engine engine) {
  auto dir = std::filesystem::temp_directory_path() /
             fmt::format("gpuwise_{}_{}", engine == Engine::prometheus ? "prom" : "vm", ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<Gpu> gpus = {
      {"idle", [](double) { return 0.0; }, 900},
      {"underused", [](double) { return 20.0; }, 60000},
      {"oversized", [](double) { return 85.0; }, 9000},
      {"nights", [](double t) { return std::fmod(t, 86400) < 43200 ? 0.0 : 90.0; }, 70000},
      {"healthy", [](double) { return 80.0; }, 70000},
      {"cpubound", [](double) { return 25.0; }, 70000},
      {"iobound", [](double) { return 20.0; }, 70000},
  };
  std::vector<Host> hosts = {{"underused", 2, 0.10, 0.0}, {"cpubound", 2, 0.95, 0.01}, {"iobound", 4, 0.15, 0.45}};
  // Whole hours ending an hour ago, 5-minute samples.
  const double now = static_cast<double>(std::time(nullptr));
  double end = std::floor(now / 3600) * 3600 - 3600;
  double start = end - 14 * 86400;
  // Short-lived pods sampled every 15 s: one that ended a minute ago, in the hour still in
  // progress; one across an hour boundary; two inside the history at odd times. And a GPU
  // with a six-hour hole in its samples.
  auto pod = [](std::string name, double from, double minutes) {
    return Gpu{std::move(name), [](double t) { return std::fmod(t, 97.0); }, 20000, from, from + minutes * 60, 15};
  };
  gpus.push_back(pod("pod2m", now - 180, 2));
  gpus.push_back(pod("pod5m", end - 150, 5));
  gpus.push_back(pod("pod15m", start + 3 * 86400 + 1234, 15));
  gpus.push_back(pod("pod45m", start + 5 * 86400 + 2400, 45));
  gpus.push_back(Gpu{"holed", [](double) { return 80.0; }, 70000, 0, 0, 300});
  // A job of almost five hours scraped every minute that stops three minutes before an hour ends:
  // staleness shows that hour fresh to its end, yet its span ends with the last sample.
  gpus.push_back(Gpu{"stopper", [](double) { return 50.0; }, 30000, start + 2 * 86400 + 600, start + 2 * 86400 + 5 * 3600 - 180, 60});
  // An exporter that now and then reports 250% and a negative memory reading.
  gpus.push_back(Gpu{"glitchy", [](double t) { return std::fmod(t, 300 * 97) < 1 ? 250.0 : 60.0; }, 70000, 0, 0, 300});
  auto sampled = [&](const Gpu& g, double t) {
    if (g.name == "holed") return t < start + 86400 || t > start + 86400 + 6 * 3600;
    return true;
  };
  write_history(dir, gpus, hosts, start, end, sampled);
  PrometheusServer server;
  VictoriaMetricsServer victoria;
  if (engine == Engine::prometheus) {
    server.start(dir, dir / "history.om");
    ASSERT_TRUE(server.ready()) << "prometheus did not start; see " << (dir / "promtool.log") << " and " << (dir / "prometheus.log");
  } else {
    victoria.start(dir, dir / "history.prom");
    ASSERT_TRUE(victoria.ready()) << "victoria-metrics did not start or import; see " << (dir / "victoria-metrics.log");
  }
  const int port = engine == Engine::prometheus ? server.port : victoria.port;

  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  options.usd_per_gpu_hour = 2.0;
  TelemetryAggregator from_api;
  PrometheusQueryOptions query;
  query.url = fmt::format("http://127.0.0.1:{}", port);
  query.range_s = now - start + 3600;  // back from the hour in progress
  query.end_s = now;  // the hour in progress holds the newest pod
  query.max_points_per_query = 24;  // forces several chunks per query
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
  std::set<std::string> kinds = expect_same_findings(api.value(), file.value());
  EXPECT_EQ(kinds, (std::set<std::string>{"idle", "underused", "vram_oversized", "idle_schedule", "healthy", "starved",
                                           "insufficient_data"}));
  expect_same_series(api.value(), file.value(), gpus.size());
  EXPECT_GT(stats.hours_by_minute_step, 0);  // the job scraped every minute
  // The last ten days hold no series scraped every minute but pods read raw whole: fresh and idle
  // minutes counted in 5-minute steps (a sample stands for one step), and the same findings and
  // series as the files' samples of those days.
  {
    PrometheusQueryOptions recent = query;
    recent.range_s = 10 * 86400;
    const double from = std::ceil(now / 3600) * 3600 - 240 * 3600;  // the window's hours are (h - 1h, h]
    TelemetryAggregator recent_api, recent_file;
    PrometheusStats recent_stats;
    auto recent_error = audit_from_prometheus(recent, recent_api, recent_stats);
    ASSERT_FALSE(recent_error) << recent_error->to_string();
    EXPECT_EQ(recent_stats.hours_by_five_minute_step, 240);
    EXPECT_EQ(recent_stats.hours_by_minute_step, 0);
    ReadStats recent_read;
    ASSERT_FALSE(read_telemetry((dir / "history.prom").string(), {}, [&](const TelemetrySample& s) {
      if (s.time_s > from) recent_file.add(s);
    }, recent_read));
    auto recent_by_api = run_audit(recent_api, catalog, options), recent_by_file = run_audit(recent_file, catalog, options);
    ASSERT_TRUE(recent_by_api.ok() && recent_by_file.ok());
    expect_same_findings(recent_by_api.value(), recent_by_file.value());
    expect_same_series(recent_by_api.value(), recent_by_file.value(), recent_by_file.value().series.size(), false);
    // A sample counts in its own hour: when the fleet idles, by hour of week, as the files say.
    const auto &by_api = recent_by_api.value().hour_of_week_idle_ratio, &by_file = recent_by_file.value().hour_of_week_idle_ratio;
    ASSERT_EQ(by_api.size(), by_file.size());
    // (1-minute steps spread a sample over the minutes it is held: up to 0.01 apart here.)
    for (size_t h = 0; h < by_file.size(); ++h) EXPECT_NEAR(by_api[h], by_file[h], 1e-4) << "hour of week " << h;
  }

  expect_hosts_joined(api.value(), file.value());
  EXPECT_NEAR(api.value().mean_util_pct, file.value().mean_util_pct, 0.01);
  EXPECT_NEAR(api.value().recoverable_usd_per_month, file.value().recoverable_usd_per_month,
              1.0 + 0.01 * file.value().recoverable_usd_per_month);
  if (engine == Engine::prometheus) expect_faults_handled(query, server);
  std::filesystem::remove_all(dir);
}

TEST(PrometheusAudit, FindingsThroughTheApiEqualFindingsFromFiles) {
  if (!have("prometheus") || !have("promtool")) GTEST_FAIL() << "prometheus and promtool are required (scripts/bootstrap installs them)";
  expect_api_equals_files(Engine::prometheus);
}

// The same through VictoriaMetrics, a second engine fleets run at scale (MetricsQL, its own
// window bounds and staleness): the same findings and dollars.
TEST(PrometheusAudit, VictoriaMetricsGivesTheFilesFindings) {
  if (!have("victoria-metrics")) GTEST_FAIL() << "victoria-metrics is required (scripts/bootstrap installs it)";
  expect_api_equals_files(Engine::victoria_metrics);
}

// The Alibaba GenAI pods (143, three of them living under 30 minutes in the last hour of the
// data) through a real Prometheus and from a file: the same series, the same means, and
// coverage within the resolution of hourly sums (exact for the pods read raw: short-lived ones,
// and those with intervals longer than the gap cap hidden in an hour's mean spacing).
TEST(PrometheusAudit, AlibabaPodsThroughTheApiMatchTheFile) {
  if (!have("prometheus") || !have("promtool")) GTEST_FAIL() << "prometheus and promtool are required (scripts/bootstrap installs them)";
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_prom_alibaba_{}", ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_EQ(std::system(("tar xzf " + std::string(GPUWISE_SOURCE_DIR) +
                         "/examples/telemetry/pod_gpu_duty_cycle_anon.tar.gz -C " + dir.string())
                            .c_str()),
            0);
  struct Row {
    double time_s, value;
    std::string pod;
  };
  std::vector<Row> rows;
  {
    std::ifstream in(dir / "pod_gpu_duty_cycle_anon.csv");
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      auto a = line.find(','), b = line.find(',', a + 1);
      rows.push_back({std::stod(line.substr(a + 1, b - a - 1)), std::stod(line.substr(0, a)), line.substr(b + 1)});
    }
  }
  ASSERT_EQ(rows.size(), 157417u);
  // Shifted to end ten minutes ago, inside the hour in progress.
  double last = 0;
  for (const auto& r : rows) last = std::max(last, r.time_s);
  const double now = static_cast<double>(std::time(nullptr));
  const double shift = std::floor(now - 600 - last);
  std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.pod < y.pod; });
  {
    std::ofstream om(dir / "pods.om"), csv(dir / "pods.csv");
    om << "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
    csv << "timestamp,pod,value\n";
    for (const auto& r : rows) {
      om << fmt::format("DCGM_FI_DEV_GPU_UTIL{{pod=\"{}\",gpu=\"0\"}} {} {:.0f}\n", r.pod, r.value, r.time_s + shift);
      csv << fmt::format("{:.0f},{},{}\n", r.time_s + shift, r.pod, r.value);
    }
    om << "# EOF\n";
  }
  PrometheusServer server;
  server.start(dir, dir / "pods.om");
  ASSERT_TRUE(server.ready()) << "prometheus did not start; see " << (dir / "promtool.log") << " and " << (dir / "prometheus.log");

  TelemetryAggregator from_api, from_file;
  PrometheusQueryOptions query;
  query.url = fmt::format("http://127.0.0.1:{}", server.port);
  query.range_s = 2 * 86400;
  PrometheusStats stats;
  auto error = audit_from_prometheus(query, from_api, stats);
  ASSERT_FALSE(error) << error->to_string();
  EXPECT_FALSE(stats.partial) << stats.warnings;
  ReadOptions read;
  read.long_csv.series = "pod";
  read.long_csv.fixed_metric = "gpu_util_pct";
  ReadStats read_stats;
  ASSERT_FALSE(read_telemetry((dir / "pods.csv").string(), read, [&](const TelemetrySample& s) { from_file.add(s); }, read_stats));

  std::map<std::string, const SeriesAggregate*> api;
  for (const auto& [id, a] : from_api.series()) api[id.substr(id.find("pod=") + 4)] = &a;
  ASSERT_EQ(from_file.series().size(), 143u);
  ASSERT_EQ(api.size(), 143u);
  double file_sum = 0, api_sum = 0, file_n = 0, api_n = 0, worst_coverage = 0;
  for (const auto& [id, f] : from_file.series()) {
    std::string pod = id.substr(id.find('=') + 1);
    ASSERT_TRUE(api.count(pod)) << pod;
    const SeriesAggregate& a = *api[pod];
    EXPECT_EQ(a.util_samples, f.util_samples) << pod;
    EXPECT_NEAR(a.mean_util(), f.mean_util(), 1e-9) << pod;
    if (f.coverage_hours() < 1) {
      EXPECT_NEAR(a.coverage_hours(), f.coverage_hours(), 1e-9) << pod;  // read raw
    }
    worst_coverage = std::max(worst_coverage, std::abs(a.coverage_hours() / f.coverage_hours() - 1));
    file_sum += f.util_sum;
    file_n += static_cast<double>(f.util_samples);
    api_sum += a.util_sum;
    api_n += static_cast<double>(a.util_samples);
  }
  EXPECT_NEAR(api_sum / api_n, file_sum / file_n, 0.1);  // 7.03% both ways
  // Pods whose hours may hide a gap are read raw (exact); the regular ones' hourly sums place an
  // hour's first sample to the minute: 0.44% worst at each of five hour alignments tried.
  EXPECT_LT(worst_coverage, 0.01);
  std::printf("worst coverage error of the 143 pods through Prometheus: %.4f%%\n", 100 * worst_coverage);
  server.now();
  std::filesystem::remove_all(dir);
}

// The per-series aggregates two push-down audits of the same server agree on; idle samples to
// within `idle_minutes`.
void expect_same_aggregates(const TelemetryAggregator& a, const TelemetryAggregator& b, long long idle_minutes = 0) {
  ASSERT_EQ(a.series().size(), b.series().size());
  for (const auto& [id, x] : a.series()) {
    ASSERT_TRUE(b.series().count(id)) << id;
    const SeriesAggregate& y = b.series().at(id);
    EXPECT_EQ(x.util_samples, y.util_samples) << id;
    EXPECT_NEAR(x.mean_util(), y.mean_util(), 1e-9) << id;
    EXPECT_LE(std::llabs(x.idle_samples - y.idle_samples), idle_minutes) << id;
    EXPECT_NEAR(x.coverage_hours(), y.coverage_hours(), 1e-9) << id;
    EXPECT_EQ(x.gaps(), y.gaps()) << id;
    EXPECT_NEAR(x.gap_hours(), y.gap_hours(), 1e-9) << id;
  }
}

// --use-recording-rules: gpuwise's rule file, backfilled by promtool from a time inside an hour
// half way through the history, gives that half's fresh and idle minutes; the hours before the
// rule and the hour it started in are asked by subqueries; the aggregates equal the subqueries'
// alone. With no rule on the server, every hour goes by subqueries, with the same answer.
TEST(PrometheusAudit, RecordedIdleFlagAnswersAsTheSubqueriesDo) {
  if (!have("prometheus") || !have("promtool")) GTEST_FAIL() << "prometheus and promtool are required (scripts/bootstrap installs them)";
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_prom_rules_{}", ::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const double now = static_cast<double>(std::time(nullptr));
  const double end = std::floor(now / 3600) * 3600 - 3 * 3600, start = end - 2 * 86400;
  auto every_minute = [](std::string name, std::function<double(double)> util) {
    return Gpu{std::move(name), std::move(util), 30000, 0, 0, 60};
  };
  std::vector<Gpu> gpus = {
      every_minute("idle", [](double) { return 0.0; }),
      every_minute("busy", [](double) { return 80.0; }),
      // Idle 3 minutes in 7: idle minutes in every hour, a share no hour boundary rounds.
      every_minute("flapping", [](double t) { return std::fmod(t, 420) < 180 ? 2.0 : 55.0; }),
      every_minute("nights", [](double t) { return std::fmod(t, 86400) < 43200 ? 0.0 : 90.0; }),
      every_minute("holed", [](double) { return 3.0; }),
  };
  auto sampled = [&](const Gpu& g, double t) {  // a 40-minute hole across the rule's start
    return g.name != "holed" || t < start + 86400 + 600 || t > start + 86400 + 3000;
  };
  write_history(dir, gpus, {}, start, end, sampled);
  PrometheusServer server;
  server.start(dir, dir / "history.om");
  ASSERT_TRUE(server.ready()) << "prometheus did not start; see " << (dir / "prometheus.log");
  PrometheusQueryOptions query;
  query.url = fmt::format("http://127.0.0.1:{}", server.port);
  query.end_s = end;
  query.range_s = 2 * 86400 + 3600;
  query.max_points_per_query = 12;
  auto audit = [&query](bool use_rules, TelemetryAggregator& into, PrometheusStats& stats) {
    PrometheusQueryOptions q = query;
    q.use_recording_rules = use_rules;
    auto error = audit_from_prometheus(q, into, stats);
    ASSERT_FALSE(error) << error->to_string();
    EXPECT_FALSE(stats.partial) << stats.warnings;
  };
  TelemetryAggregator by_subqueries, without_rule, by_rule;
  PrometheusStats subquery_stats, without_rule_stats, rule_stats;
  audit(false, by_subqueries, subquery_stats);
  audit(true, without_rule, without_rule_stats);
  EXPECT_EQ(without_rule_stats.hours_by_rule, 0);
  EXPECT_EQ(without_rule_stats.hours_by_subquery, 48);
  expect_same_aggregates(by_subqueries, without_rule);
  ASSERT_NE(by_subqueries.series().size(), 0u);
  for (const auto& [id, a] : by_subqueries.series()) {
    if (id.find("flapping") != std::string::npos) {
      EXPECT_NEAR(a.idle_fraction(), 3.0 / 7, 0.01) << id;
    }
  }

  // The rule from 26 h 20 min into the history, at whole minutes as a rule group evaluates (to
  // the history's last minute: promtool's end is exclusive).
  const double rule_start = start + 26 * 3600 + 1200;
  // The fixture checked before it is used: the backfill must hold an evaluation of the rule every
  // minute from its start to the history's end for every series (a short one would show below as
  // idle minutes). promtool evaluates a group at a fixed offset into each minute, a hash of the
  // group's name and of the rule file's path as given, and backfills in 2-hour blocks whose end it
  // cuts to the whole second: where that offset lies in a minute's last second, each block's last
  // evaluation is lost (11 of 1,301 here; measured with Debian's promtool 2.42, 2026-12-06, for a
  // path holding this process's id that came out at 59.156 s). So promtool is given the file by a
  // name relative to the fixture's folder, the same offset in every run (43.9 s there); should
  // another promtool hash it into that last second, the next attempt names the file otherwise.
  const double expected_evaluations = (end + 60 - rule_start) / 60;
  std::string shortfall;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const auto blocks_dir = dir / fmt::format("rule-blocks-{}", attempt);
    const std::string rules_name = attempt == 1 ? "rules.yml" : fmt::format("rules-{}.yml", attempt);
    std::ofstream(dir / rules_name) << recording_rules_yaml();
    ASSERT_EQ(std::system(fmt::format("cd {} && promtool tsdb create-blocks-from rules --start={:.0f} --end={:.0f} --url={} "
                                      "--output-dir={} {} >>{} 2>&1",
                                      dir.string(), rule_start, end + 60, query.url, blocks_dir.string(), rules_name,
                                      (dir / "promtool.log").string())
                              .c_str()),
              0)
        << "see " << (dir / "promtool.log");
    server.now();
    std::vector<std::filesystem::path> moved;
    for (const auto& block : std::filesystem::directory_iterator(blocks_dir)) {
      moved.push_back(dir / "tsdb" / block.path().filename());
      std::filesystem::rename(block.path(), moved.back());
    }
    server.launch();
    ASSERT_TRUE(server.ready()) << "prometheus did not restart; see " << (dir / "prometheus.log");
    query.url = fmt::format("http://127.0.0.1:{}", server.port);  // another port if its own was taken meanwhile
    httplib::Client client("127.0.0.1", server.port);
    const std::string count = fmt::format("count_over_time(gpuwise:DCGM_FI_DEV_GPU_UTIL:idle[{:.0f}s])", end + 60 - rule_start + 30);
    auto answer = client.Get("/api/v1/query", httplib::Params{{"query", count}, {"time", fmt::format("{:.0f}", end + 60)}},
                             httplib::Headers{});
    ASSERT_TRUE(answer && answer->status == 200) << count;
    auto counted = nlohmann::json::parse(answer->body);
    shortfall.clear();
    if (counted["data"]["result"].size() != gpus.size()) shortfall = "series: " + answer->body;
    for (const auto& series : counted["data"]["result"])
      if (std::stod(series["value"][1].get<std::string>()) != expected_evaluations)
        shortfall += fmt::format("{} evaluations of {} for {}; ", series["value"][1].get<std::string>(), expected_evaluations,
                                 series["metric"].dump());
    if (shortfall.empty()) break;
    std::ofstream(dir / "promtool.log", std::ios::app) << "attempt " << attempt << " short: " << shortfall << "\n";
    server.now();
    for (const auto& block : moved) std::filesystem::remove_all(block);
    server.launch();
    ASSERT_TRUE(server.ready()) << "prometheus did not restart; see " << (dir / "prometheus.log");
    query.url = fmt::format("http://127.0.0.1:{}", server.port);
  }
  ASSERT_TRUE(shortfall.empty()) << "promtool's rule backfill stayed short after 3 attempts: " << shortfall << "see "
                                 << (dir / "promtool.log");
  audit(true, by_rule, rule_stats);
  // Hours 27-48 of the history from the rule; 1-26 and the 27th (the rule's first, in part) by subqueries.
  EXPECT_EQ(rule_stats.hours_by_rule, 21);
  EXPECT_EQ(rule_stats.hours_by_subquery, 27);
  bool rule_asked = false;
  for (const auto& [what, seconds] : rule_stats.seconds_by_query) rule_asked = rule_asked || what == "idle minutes (rule)";
  EXPECT_TRUE(rule_asked);
  // The rule's samples are stamped at its evaluation instants, a fixed offset into each minute
  // (promtool's, or a live ruler's), so a rule hour holds the raw minutes [H - 1 h, H) where the
  // subqueries' hold (H - 1 h, H]: the same minutes but the one where the rule starts (counted
  // twice) and the range's last (not at all). A series idle at one and busy at the other is one
  // idle minute off, whatever the hours between; every other aggregate is exact. Which series are
  // depends on the hour the test runs at ("nights" differs at some, "flapping" at others).
  expect_same_aggregates(by_subqueries, by_rule, 1);
  server.now();
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
