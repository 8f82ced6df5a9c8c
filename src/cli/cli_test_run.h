// What the CLI tests share: run the CLI in-process, and a scratch path.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace gw {
namespace {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

inline CliRun run(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

// Named by the process too: ctest runs tests in parallel processes, and two suites on one machine
// (a developer's and CI's) must not write each other's files.
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpuwise_cli_test_" + std::to_string(::getpid()) + "_" + name)).string();
}


}  // namespace
}  // namespace gw
