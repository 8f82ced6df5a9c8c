// The folders of src/ form layers and include only downwards: the map in src/layers.txt
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

// What each folder may use besides itself, from src/layers.txt ("folder: lower folders...").
std::map<std::string, std::set<std::string>> read_layers(const std::filesystem::path& file) {
  std::map<std::string, std::set<std::string>> allowed;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto& below = allowed[line.substr(0, colon)];
    std::istringstream names(line.substr(colon + 1));
    for (std::string name; names >> name;) below.insert(name);
  }
  return allowed;
}

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
  const auto layers = read_layers(src / "layers.txt");
  ASSERT_GE(layers.size(), 15u) << "src/layers.txt names every folder";
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
    auto allowed = layers.find(folder);
    if (allowed == layers.end()) {
      violations += folder + "/: a folder the layer map does not name (add it to src/layers.txt)\n";
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
