// For tests with a real Prometheus (Debian's prometheus and promtool): a server on loopback
// serving an OpenMetrics history backfilled with promtool, on a free port, stopped with the test.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "core/loopback_server_test.h"

namespace gw::testing_support {

// A real Prometheus on loopback serving an OpenMetrics history backfilled with promtool.
struct PrometheusServer : LoopbackServer {
  // Set before start(): what it scrapes, how often, and the most samples one query may load.
  std::string scrape_configs = "scrape_configs: []";
  std::string scrape_interval = "1m";
  long max_samples = 20000;  // small enough that one query over days is refused as too large
  void start(const std::filesystem::path& folder, const std::filesystem::path& history) {
    dir = folder;
    std::filesystem::create_directories(dir / "tsdb");
    if (std::system(fmt::format("promtool tsdb create-blocks-from openmetrics {} {} >{} 2>&1", history.string(),
                                (dir / "tsdb").string(), (dir / "promtool.log").string())
                        .c_str()) != 0)
      return;
    std::ofstream(dir / "prometheus.yml") << "global:\n  scrape_interval: " << scrape_interval << "\n" << scrape_configs << "\n";
    port = 20000 + (::getpid() * 7 + static_cast<int>(history.string().size())) % 20000;
    log_name = "prometheus.log";
    ready_path = "/-/ready";
    command = [this](int p) {
      return std::vector<std::string>{"prometheus", "--config.file=" + (dir / "prometheus.yml").string(),
                                      "--storage.tsdb.path=" + (dir / "tsdb").string(),
                                      fmt::format("--web.listen-address=127.0.0.1:{}", p), "--storage.tsdb.retention.time=3650d",
                                      fmt::format("--query.max-samples={}", max_samples)};
    };
    launch();  // again after blocks are added to the TSDB
  }
};

// Debian's VictoriaMetrics on loopback, the samples of a Prometheus text file (timestamps in
// milliseconds) imported through its API and flushed, so queries see all of them at once.
struct VictoriaMetricsServer : LoopbackServer {
  void start(const std::filesystem::path& folder, const std::filesystem::path& samples) {
    dir = folder;
    port = 20000 + (::getpid() * 13 + 4242) % 20000;
    log_name = "victoria-metrics.log";
    ready_path = "/health";
    command = [this](int p) {
      return std::vector<std::string>{"victoria-metrics", "-storageDataPath=" + (dir / "victoria-metrics").string(),
                                      fmt::format("-httpListenAddr=127.0.0.1:{}", p), "-retentionPeriod=100y",
                                      // Recent samples visible at once, and no cached answers across imports.
                                      "-search.latencyOffset=0s", "-search.disableCache"};
    };
    launch();
    if (!started) return;
    std::ifstream in(samples);
    const std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(120, 0);
    auto imported = client.Post("/api/v1/import/prometheus", body, "text/plain");
    auto flushed = client.Get("/internal/force_flush");
    started = imported && imported->status / 100 == 2 && flushed && flushed->status / 100 == 2;
  }
};

}  // namespace gw::testing_support
