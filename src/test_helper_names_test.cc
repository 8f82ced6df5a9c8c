// CI and the sanitizer build compile the test files in batches (GPUWISE_UNITY): two files in one batch
// that define the same name at file scope, in their anonymous namespaces, fail to compile there
// and only there, and which files share a batch shifts whenever a test file is added. So no two
// test files define the same file-scope function, struct or class.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

// The file-scope names a test file defines: each struct or class, and each function whose
// definition starts at column 0 (a '{' before any ';' within a few lines of its name).
std::set<std::string> file_scope_names(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  static const std::regex type_re(R"(^(?:struct|class)\s+(\w+)\s*(?:final\s*)?[:{])");
  static const std::regex function_re(R"(^[A-Za-z_][\w:<>,*&\s]*?[\s*&](\w+)\()");
  static const char* skipped[] = {"TEST", "INSTANTIATE", "namespace", "using", "return", "template"};
  std::set<std::string> names;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    std::smatch m;
    if (std::regex_search(line, m, type_re)) {
      names.insert(m[1]);
      continue;
    }
    if (line.empty() || !std::isalpha(static_cast<unsigned char>(line[0]))) continue;
    bool skip = false;
    for (const char* prefix : skipped) skip = skip || line.rfind(prefix, 0) == 0;
    if (skip || !std::regex_search(line, m, function_re)) continue;
    std::string text = line;
    for (size_t j = i + 1; j < lines.size() && j < i + 6 && text.find('{') == std::string::npos && text.find(';') == std::string::npos; ++j)
      text += lines[j];
    const size_t brace = text.find('{'), semicolon = text.find(';');
    if (brace != std::string::npos && (semicolon == std::string::npos || brace < semicolon)) names.insert(m[1]);
  }
  return names;
}

// Names defined by more than one of the files, each with the files that define it.
std::map<std::string, std::vector<std::string>> names_defined_twice(const std::vector<std::filesystem::path>& files) {
  std::map<std::string, std::vector<std::string>> where;
  const std::filesystem::path root(GPUWISE_SOURCE_DIR);
  for (const auto& path : files)
    for (const std::string& defined : file_scope_names(path))
      where[defined].push_back(std::filesystem::relative(path, root).generic_string());
  std::erase_if(where, [](const auto& entry) { return entry.second.size() < 2; });
  return where;
}

void expect_none(const std::map<std::string, std::vector<std::string>>& twice) {
  for (const auto& [name, paths] : twice) {
    std::string list;
    for (const auto& p : paths) list += " " + p;
    ADD_FAILURE() << "'" << name << "' is defined at file scope in" << list << ": rename it in all but one";
  }
}

// The two batched targets: the tests (every *_test.cc) and the CLI (src/cli, less its tests and main.cc).
TEST(SourceFiles, BatchedFilesDefineNoFileScopeNameTwice) {
  const std::filesystem::path root(GPUWISE_SOURCE_DIR);
  std::vector<std::filesystem::path> tests, cli;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "src")) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".cc") continue;
    const bool test = name.size() > 8 && name.substr(name.size() - 8) == "_test.cc";
    if (test) tests.push_back(entry.path());
    else if (entry.path().parent_path().filename() == "cli" && name != "main.cc") cli.push_back(entry.path());
  }
  EXPECT_GT(tests.size(), 50u);  // the walk found them
  EXPECT_GT(cli.size(), 10u);
  expect_none(names_defined_twice(tests));
  expect_none(names_defined_twice(cli));
}

// The scan finds what a batch would collide on: a helper function, a fixture struct.
TEST(SourceFiles, TheNameScanFindsHelpersAndTypes) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "gpuwise_name_scan_test.cc";
  std::ofstream(path) << "namespace {\nconst Catalog& my_catalog() {\n  return c;\n}\nstruct Fixture {\n};\n"
                         "std::string write_file(const std::string& name,\n                       int n) {\n}\n"
                         "int declared_only(int n);\nTEST(A, B) {\n}\n}  // namespace\n";
  const std::set<std::string> names = file_scope_names(path);
  EXPECT_EQ(names, (std::set<std::string>{"my_catalog", "Fixture", "write_file"}));
  std::filesystem::remove(path);
}

}  // namespace
