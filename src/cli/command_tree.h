// The CLI's commands as a tree, walked by the shell completions and the man page so both list
// exactly what this binary accepts.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gw {

struct CommandInfo {
  std::string path;  // "catalog offerings"
  const CLI::App* app;
};

// The named subcommands of app.
std::vector<const CLI::App*> children(const CLI::App& app);
// Every command below app, depth first, with its path.
void walk(const CLI::App& app, const std::string& prefix, std::vector<CommandInfo>& out);
// The options of app that have a long name (not positional).
std::vector<const CLI::Option*> flags_of(const CLI::App& app);

}  // namespace gw
