// What every subcommand shares: the global options, the catalog (loaded once, with --catalog
// overrides), and output to stdout or to an atomically written --output file.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "perf/efficiency.h"
#include "core/error.h"
#include "report/document.h"
#include "report/progress.h"
#include "report/table.h"

namespace CLI {
class App;
}

namespace gw {

struct GlobalOptions {
  std::vector<std::string> catalog_dirs;
  std::string profiles_dir;  // --profiles: operator profiles measured on the team's own hardware
  std::string format = "table";  // table, json, csv, md, html
  std::string output;            // file; empty for stdout
  std::string charts_dir;        // write each chart's Vega-Lite spec here too (html, md)
  bool explain = false;
  bool quiet = false;
};

class CommandContext {
 public:
  CommandContext(std::ostream& out, std::ostream& err) : out_(out), err_(err) {}

  GlobalOptions options;
  std::ostream& err() { return err_; }

  // The embedded catalog plus --catalog overrides. Throws InputError.
  const Catalog& catalog();
  // Input files of the command, so --output never overwrites one.
  void add_input(const std::string& path) { inputs_.push_back(path); }

  // Writes the command's result to stdout or --output (atomically). Throws InputError.
  void emit(const std::string& text);
  void emit_json(nlohmann::json document, const std::string& command);
  // table/md/csv per --format (json handled by the caller).
  void emit_table(const Table& table, const std::string& heading = "");
  // html or md per --format, for the commands that build a report document.
  void emit_document(const Document& document);
  void note(const std::string& line);  // to stderr unless --quiet
  // Progress bars: stderr is a terminal, not --quiet, and the command writes to stderr's terminal.
  bool progress_enabled() const { return !options.quiet && &err_ == &std::cerr && Progress::stderr_is_terminal(); }

 private:
  std::ostream& out_;
  std::ostream& err_;
  std::unique_ptr<Catalog> catalog_;
  std::vector<std::string> inputs_;
  bool emitting_document_ = false;
};

// Subcommands register themselves and set the action to run after parsing.
using Action = std::function<int()>;
void add_catalog_commands(CLI::App& app, CommandContext& context, Action& action);
void add_fit_command(CLI::App& app, CommandContext& context, Action& action);
void add_models_command(CLI::App& app, CommandContext& context, Action& action);
void add_plan_command(CLI::App& app, CommandContext& context, Action& action);
void add_perf_commands(CLI::App& app, CommandContext& context, Action& action);
void add_simulate_command(CLI::App& app, CommandContext& context, Action& action);
void add_train_command(CLI::App& app, CommandContext& context, Action& action);
void add_audit_command(CLI::App& app, CommandContext& context, Action& action);
void add_watch_command(CLI::App& app, CommandContext& context, Action& action);
void add_scale_command(CLI::App& app, CommandContext& context, Action& action);
void add_mix_command(CLI::App& app, CommandContext& context, Action& action);
void add_fleet_command(CLI::App& app, CommandContext& context, Action& action);
void add_completion_commands(CLI::App& app, CommandContext& context, Action& action);
void add_man_command(CLI::App& app, CommandContext& context, Action& action);

[[noreturn]] void fail(const std::string& field, const std::string& message);

// The --calibration file, when one is given. Throws InputError.
std::optional<Calibration> load_calibration_option(const std::string& path);

// For token counts and context lengths on the command line: "2T", "500B", "8k", "128Ki" become
// the number they stand for (core/numbers.h parse_count) before the option's own checks.
CLI::Validator count_with_suffix();

}  // namespace gw
