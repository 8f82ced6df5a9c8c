// For tests with a real Prometheus (Debian's prometheus and promtool): a server on loopback
// serving an OpenMetrics history backfilled with promtool, on a free port, stopped with the test.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>
#include <httplib.h>

namespace gw::testing_support {

inline bool have(const char* program) {
  return std::system(fmt::format("command -v {} >/dev/null 2>&1", program).c_str()) == 0;
}

// A real Prometheus on loopback serving an OpenMetrics history backfilled with promtool.
struct PrometheusServer {
  // Set before start(): what it scrapes, how often, and the most samples one query may load.
  std::string scrape_configs = "scrape_configs: []";
  std::string scrape_interval = "1m";
  long max_samples = 20000;  // small enough that one query over days is refused as too large
  pid_t pid = 0;
  int port = 0;
  bool started = false;
  std::filesystem::path dir;
  void start(const std::filesystem::path& folder, const std::filesystem::path& history) {
    dir = folder;
    std::filesystem::create_directories(dir / "tsdb");
    if (std::system(fmt::format("promtool tsdb create-blocks-from openmetrics {} {} >{} 2>&1", history.string(),
                                (dir / "tsdb").string(), (dir / "promtool.log").string())
                        .c_str()) != 0)
      return;
    std::ofstream(dir / "prometheus.yml") << "global:\n  scrape_interval: " << scrape_interval << "\n" << scrape_configs << "\n";
    port = 20000 + (::getpid() * 7 + static_cast<int>(history.string().size())) % 20000;
    launch();
  }
  // Starts the server on the folder's TSDB (again, after blocks were added to it). A port some
  // other process holds makes Prometheus exit at once: the next port is tried, so that the probe
  // never takes another server's answer for this one's.
  void launch() {
    for (int attempt = 0; attempt < 20; ++attempt) {
      try_launch();
      if (started || pid > 0) return;  // up, or running but never ready: no other port helps
      port = 20000 + (port - 20000 + 7919) % 20000;
    }
  }
  void try_launch() {
    started = false;
    pid = ::fork();
    if (pid == 0) {
      std::freopen((dir / "prometheus.log").c_str(), "a", stderr);
      ::execlp("prometheus", "prometheus", ("--config.file=" + (dir / "prometheus.yml").string()).c_str(),
               ("--storage.tsdb.path=" + (dir / "tsdb").string()).c_str(),
               fmt::format("--web.listen-address=127.0.0.1:{}", port).c_str(), "--storage.tsdb.retention.time=3650d",
               fmt::format("--query.max-samples={}", max_samples).c_str(), static_cast<char*>(nullptr));
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
      auto response = probe.Get("/-/ready");
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
  ~PrometheusServer() { now(); }
};

}  // namespace gw::testing_support
