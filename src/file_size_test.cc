// Every source file stays small enough for one reader to hold: at most 700 lines. A file that
// grows past it fails here by name; split it along its seams (one concept per file).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace {

constexpr long kMaxLines = 700;
// Files over the limit while their split is under way, each capped at its size when it was
// listed so it cannot grow. None now.
const std::map<std::string, long> kPendingSplits = {};

long count_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  long lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

TEST(SourceFiles, NoneOverSevenHundredLines) {
  const std::filesystem::path root(GPUWISE_SOURCE_DIR);
  int files = 0;
  for (const char* folder : {"src", "include", "python", "bench", "fuzz", "examples/embed"}) {
    if (!std::filesystem::exists(root / folder)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / folder)) {
      if (!entry.is_regular_file()) continue;
      const std::string ext = entry.path().extension().string();
      if (ext != ".cc" && ext != ".h" && ext != ".py") continue;
      const std::string name = std::filesystem::relative(entry.path(), root).generic_string();
      if (name.find("node_modules") != std::string::npos) continue;
      ++files;
      const long lines = count_lines(entry.path());
      auto pending = kPendingSplits.find(name);
      const long limit = pending != kPendingSplits.end() ? pending->second : kMaxLines;
      EXPECT_LE(lines, limit) << name << " has " << lines << " lines (at most " << limit << ")";
    }
  }
  EXPECT_GT(files, 100);  // the walk found the sources
}

}  // namespace
