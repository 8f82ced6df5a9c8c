// The bad-input catalogue (tests/bad_inputs/cases.txt): each case runs the gpuwise binary and
// must exit with the expected code, print the expected message and leave no output file.
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/numbers.h"

namespace gw {
namespace {

struct BadInput {
  int line = 0;
  int exit_code = 0;
  std::string arguments, message;
};

void PrintTo(const BadInput& c, std::ostream* os) { *os << "cases.txt:" << c.line << " " << c.arguments; }

std::filesystem::path folder() { return std::filesystem::path(GPUWISE_SOURCE_DIR) / "tests" / "bad_inputs"; }

std::vector<BadInput> load_cases() {
  std::vector<BadInput> cases;
  std::ifstream in(folder() / "cases.txt");
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty() || text[0] == '#') continue;
    size_t a = text.find(" | "), b = text.find(" | ", a + 3);
    BadInput c;
    c.line = line;
    c.exit_code = static_cast<int>(parse_integer(text.substr(0, a), 0, 255).value_or(-1));
    c.arguments = text.substr(a + 3, b - a - 3);
    c.message = text.substr(b + 3);
    cases.push_back(c);
  }
  return cases;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class BadInputs : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputs, ExitCodeMessageAndNoOutputFile) {
  const BadInput& c = GetParam();
  auto scratch = std::filesystem::temp_directory_path() / fmt::format("gpuwise_bad_input_{}_{}", ::getpid(), c.line);
  std::filesystem::remove_all(scratch);
  std::filesystem::create_directories(scratch);
  auto output = scratch / "result.out";
  bool own_output = c.arguments.find(" -o ") != std::string::npos;
  std::string command = fmt::format("cd '{}' && timeout 60 '{}' {} -q {} >'{}' 2>'{}'", folder().string(), GPUWISE_BINARY,
                                    c.arguments, own_output ? "" : "-o '" + output.string() + "'",
                                    (scratch / "stdout").string(), (scratch / "stderr").string());
  int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  int code = WEXITSTATUS(status);
  ASSERT_NE(code, 124) << "timed out (a hang): " << c.arguments;
  std::string printed = slurp(scratch / "stderr") + slurp(scratch / "stdout");
  if (code == 0 && !own_output) printed += slurp(output);  // warnings and skip counts go to the report
  EXPECT_EQ(code, c.exit_code) << c.arguments << "\n" << printed;
  EXPECT_NE(printed.find(c.message), std::string::npos) << "cases.txt:" << c.line << " expected: " << c.message
                                                         << "\nprinted: " << printed;
  if (code != 0) {
    // No partial output, and no temporary file left beside it.
    EXPECT_TRUE(std::filesystem::is_empty(scratch / "stdout"));
    for (const auto& entry : std::filesystem::directory_iterator(scratch)) {
      std::string name = entry.path().filename().string();
      EXPECT_TRUE(name == "stdout" || name == "stderr") << "left behind: " << name;
    }
  }
  std::filesystem::remove_all(scratch);
}

std::string case_name(const ::testing::TestParamInfo<BadInput>& info) {
  std::string name = fmt::format("line{}_", info.param.line);
  for (char ch : info.param.arguments.substr(0, 60)) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInputs, ::testing::ValuesIn(load_cases()), case_name);

TEST(BadInputCatalogue, HasAtLeastFortyCases) { EXPECT_GE(load_cases().size(), 40u); }

}  // namespace
}  // namespace gw
