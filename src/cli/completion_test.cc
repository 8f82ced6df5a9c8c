// Completion scripts and the man page list every command, and are valid for their tools.
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <unistd.h>

#include "cli/app.h"

namespace gw {
namespace {

std::string run_for_text(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(args, out, err), 0) << err.str();
  return out.str();
}

const char* kCommands[] = {"catalog", "fit", "models", "plan", "perf", "calibrate", "simulate", "train", "audit", "completion", "man"};

std::string shell(const std::string& command) {
  std::string path = (std::filesystem::temp_directory_path() / fmt::format("gpuwise_completion_{}.out", ::getpid())).string();
  int status = std::system((command + " >'" + path + "' 2>&1").c_str());
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::filesystem::remove(path);
  return fmt::format("{}|{}", status, text);
}

TEST(Completion, BashCompletesCommandsSubcommandsAndOptionValues) {
  std::string script = run_for_text({"completion", "bash"});
  for (const char* command : kCommands) EXPECT_NE(script.find(command), std::string::npos) << command;
  auto path = std::filesystem::temp_directory_path() / fmt::format("gpuwise_{}.bash", ::getpid());
  std::ofstream(path) << script;
  EXPECT_EQ(shell("bash -n '" + path.string() + "'"), "0|");
  auto complete = [&](const std::string& words, int current) {
    return shell(fmt::format("bash -c 'source {}; COMP_WORDS=({}); COMP_CWORD={}; _gpuwise; echo \"${{COMPREPLY[@]}}\"'",
                             path.string(), words, current));
  };
  EXPECT_EQ(complete("gpuwise pl", 1), "0|plan\n");
  EXPECT_EQ(complete("gpuwise catalog off", 2), "0|offerings\n");
  EXPECT_EQ(complete("gpuwise audit --max-se", 2), "0|--max-series\n");   // a global option after the command
  EXPECT_EQ(complete("gpuwise audit --format ht", 3), "0|html\n");
  EXPECT_EQ(complete("gpuwise audit --prometheus-ti", 2), "0|--prometheus-timeout\n");
  std::filesystem::remove(path);
}

TEST(Completion, ZshDescribesEveryCommand) {
  std::string script = run_for_text({"completion", "zsh"});
  EXPECT_EQ(script.rfind("#compdef gpuwise", 0), 0u);
  for (const char* command : kCommands) EXPECT_NE(script.find(fmt::format("'{}:", command)), std::string::npos) << command;
  EXPECT_NE(script.find("'--format[Output format]:format:(table json csv md html)'"), std::string::npos);
  if (std::system("command -v zsh >/dev/null 2>&1") == 0) {
    auto path = std::filesystem::temp_directory_path() / fmt::format("gpuwise_{}.zsh", ::getpid());
    std::ofstream(path) << script;
    EXPECT_EQ(shell("zsh -n '" + path.string() + "'"), "0|");
    std::filesystem::remove(path);
  }
}

TEST(Completion, ManPageHasEveryCommandAndRendersWithoutWarnings) {
  std::string page = run_for_text({"man"});
  EXPECT_EQ(page.rfind(".TH GPUWISE 1 ", 0), 0u);
  for (const char* command : kCommands) EXPECT_NE(page.find(fmt::format(".SS \"gpuwise {}", command)), std::string::npos) << command;
  EXPECT_NE(page.find(".SS \"gpuwise catalog offerings\""), std::string::npos);
  EXPECT_NE(page.find("\\-\\-max\\-series"), std::string::npos);
  if (std::system("command -v groff >/dev/null 2>&1") == 0) {
    auto path = std::filesystem::temp_directory_path() / fmt::format("gpuwise_{}.1", ::getpid());
    std::ofstream(path) << page;
    EXPECT_EQ(shell("groff -man -Tutf8 -ww -z '" + path.string() + "'"), "0|");  // no warnings
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace gw
