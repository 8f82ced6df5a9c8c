// The folders of src/ form layers and include only downwards: the map in the architecture notes
// (core <- catalog/model/trace <- perf <- sim <- plan <- fleet/audit <- cli), enforced here so that
// a change that reaches up (spec including fleet, telemetry including sim) fails the build's tests.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace {

// What each folder may include besides itself. report (tables, documents, the JSON envelope) and
// core sit under everything; k8s (manifest text) depends on core alone.
const std::map<std::string, std::set<std::string>> kAllowed = {
    {"core", {}},
    {"report", {"core"}},
    {"catalog", {"core", "report"}},
    {"model", {"core", "report", "catalog"}},
    {"trace", {"core"}},
    {"k8s", {"core"}},
    {"perf", {"core", "report", "catalog", "model"}},
    {"spec", {"core", "catalog", "model", "trace"}},
    {"telemetry", {"core", "report", "trace"}},
    {"sim", {"core", "report", "catalog", "model", "trace", "perf", "spec"}},
    {"plan", {"core", "report", "catalog", "model", "trace", "perf", "spec", "sim", "k8s"}},
    {"fleet", {"core", "report", "catalog", "model", "trace", "perf", "spec", "sim", "plan"}},
    {"audit", {"core", "report", "catalog", "model", "telemetry"}},
    {"api", {"core", "report", "catalog", "model", "trace", "perf", "spec", "sim", "plan", "fleet", "audit", "gpuwise"}},
    {"cli", {"core", "report", "catalog", "model", "trace", "k8s", "perf", "spec", "telemetry", "sim", "plan", "fleet", "audit"}},
};

// The folder of a project include (`#include "plan/plan_spec.h"` -> "plan"), or "" for any other
// line. Plain string search: std::regex trips GCC 12's -Wmaybe-uninitialized under ASan.
std::string included_folder(const std::string& line) {
  const auto blank = " \t";
  size_t i = line.find_first_not_of(blank);
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(blank, i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  size_t quote = line.find_first_not_of(blank, i + 7);
  if (quote == std::string::npos || line[quote] != '"') return "";
  size_t end = line.find('"', quote + 1), slash = line.find('/', quote + 1);
  if (end == std::string::npos || slash == std::string::npos || slash > end) return "";
  return line.substr(quote + 1, slash - quote - 1);
}

TEST(Layers, FoldersIncludeOnlyLowerLayers) {
  const std::filesystem::path src = std::filesystem::path(GPUWISE_SOURCE_DIR) / "src";
  std::string violations;
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(src)) {
    const auto& path = entry.path();
    if (!entry.is_regular_file() || (path.extension() != ".h" && path.extension() != ".cc")) continue;
    const std::string name = path.filename().string();
    if (name.size() > 8 && name.substr(name.size() - 8) == "_test.cc") continue;  // tests may use anything
    const auto relative = std::filesystem::relative(path, src);
    if (relative.begin() == relative.end() || std::next(relative.begin()) == relative.end()) continue;
    const std::string folder = relative.begin()->string();
    auto allowed = kAllowed.find(folder);
    if (allowed == kAllowed.end()) {
      violations += folder + "/: a folder the layer map does not name (add it to kAllowed)\n";
      continue;
    }
    ++files;
    std::ifstream in(path);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      const std::string target = included_folder(line);
      if (target.empty()) continue;
      if (target != folder && !allowed->second.count(target))
        violations += relative.string() + ":" + std::to_string(number) + ": " + folder + " includes " + target + "\n";
    }
  }
  EXPECT_GT(files, 100);
  EXPECT_EQ(violations, "") << "includes that reach up a layer:\n" << violations;
}

}  // namespace
