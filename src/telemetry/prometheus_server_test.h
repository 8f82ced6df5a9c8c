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

namespace gw::testing_support {

inline bool have(const char* program) {
  return std::system(fmt::format("command -v {} >/dev/null 2>&1", program).c_str()) == 0;
}

// A server process on loopback, on a free port: a port some other process holds makes the
// server exit at once, so the next port is tried and the probe never takes another server's
// answer for this one's. Stopped (SIGTERM) with the object.
struct LoopbackServer {
  pid_t pid = 0;
  int port = 0;
  bool started = false;
  std::filesystem::path dir;
  // The command for a port, its log file, and the path that answers 200 once it is ready.
  std::function<std::vector<std::string>(int port)> command;
  std::string log_name, ready_path;

  void launch() {
    for (int attempt = 0; attempt < 20; ++attempt) {
      try_launch();
      if (started || pid > 0) return;  // up, or running but never ready: no other port helps
      port = 20000 + (port - 20000 + 7919) % 20000;
    }
  }
  void try_launch() {
    started = false;
    const std::vector<std::string> args = command(port);
    pid = ::fork();
    if (pid == 0) {
      std::freopen((dir / log_name).c_str(), "a", stderr);
      std::freopen((dir / log_name).c_str(), "a", stdout);
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      std::_Exit(127);
    }
    if (pid < 0) return;
    httplib::Client probe("127.0.0.1", port);
    auto exited = [this] {  // reaped here, so that the next try starts clean
      if (::waitpid(pid, nullptr, WNOHANG) != pid) return false;
      pid = 0;
      return true;
    };
    for (int i = 0; i < 150 && !started; ++i) {
      if (exited()) return;  // the port was taken
      auto response = probe.Get(ready_path);
      bool answered = response && response->status == 200;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      // Ready only if this process is still up after answering: one that lost the port exits at once.
      if (answered && exited()) return;
      started = answered;
    }
  }
  bool ready() const { return started; }
  void now() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
    }
    pid = 0;
  }
  ~LoopbackServer() { now(); }
};

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
