// For tests that run a real server process (Prometheus, VictoriaMetrics, HAProxy) on loopback:
// started on a free port, probed until ready, stopped with the test.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <httplib.h>

#include "core/require_tools_test.h"

namespace gw::testing_support {

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

}  // namespace gw::testing_support
