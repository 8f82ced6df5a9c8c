// What the CLI tests share: run the CLI in-process, and a scratch path.
#pragma once

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

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gpuwise_cli_test_" + name)).string();
}


}  // namespace
}  // namespace gw
