// The manual page (roff), generated from the CLI definition itself, so it lists exactly the
// commands and options this binary accepts.
#include <CLI/CLI.hpp>
#include <ctime>
#include <fmt/format.h>

#include "cli/command_tree.h"
#include "cli/context.h"

namespace gw {

namespace {

std::string roff(std::string text) {
  std::string out;
  for (char ch : text) {
    if (ch == '\\') out += "\\e";
    else if (ch == '-') out += "\\-";
    else out += ch;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string option_lines(const CLI::App& app) {
  std::string out;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_lnames().empty() && !o->get_positional()) continue;
    std::string name = o->get_positional() ? o->get_name(true) : "";
    if (!o->get_positional()) {
      for (const auto& s : o->get_snames()) name += (name.empty() ? "\\-" : ", \\-") + s;
      for (const auto& l : o->get_lnames()) name += (name.empty() ? "\\-\\-" : ", \\-\\-") + roff(l);
    }
    std::string type = o->get_expected_max() > 0 && !o->get_positional() ? " \\fI" + roff(o->get_type_name()) + "\\fR" : "";
    out += fmt::format(".TP\n.B {}{}\n{}\n", name, type, roff(o->get_description()));
  }
  return out;
}

std::string man_page(const CLI::App& root) {
  std::vector<CommandInfo> commands;
  walk(root, "", commands);
  std::time_t now = std::time(nullptr);
  char date[16];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::string out = fmt::format(".TH GPUWISE 1 \"{}\" \"gpuwise {}\" \"User Commands\"\n", date, GPUWISE_VERSION);
  std::string summary = root.get_description();
  if (summary.rfind("gpuwise: ", 0) == 0) summary = summary.substr(9);
  out += ".SH NAME\ngpuwise \\- " + roff(summary) + "\n";
  out += ".SH SYNOPSIS\n.B gpuwise\n[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIFILES\\fR]\n";
  out += ".SH DESCRIPTION\nSizes GPUs by memory, plans inference and training fleets against latency SLOs and "
         "deadlines, simulates them, and audits GPU telemetry for waste, with every figure's source shown "
         "(\\-\\-explain). The catalog of accelerators and prices is compiled in.\n";
  out += ".SH GLOBAL OPTIONS\nAccepted before or after the command.\n" + option_lines(root);
  out += ".SH COMMANDS\n";
  for (const auto& c : commands) {
    out += fmt::format(".SS \"gpuwise {}\"\n{}\n", c.path, roff(c.app->get_description()));
    out += option_lines(*c.app);
  }
  out += ".SH EXIT STATUS\n.TP\n.B 0\nSuccess.\n.TP\n.B 1\nBad input or a runtime error: the message names the file, "
         "line and field.\n.TP\n.B 2\nUsage error.\n.TP\n.B 3\nThe constraints cannot be met, or a budget or deadline is "
         "exceeded (so pipelines can gate on a plan).\n";
  out += ".SH ENVIRONMENT\n.TP\n.B NO_COLOR\nWhen set, terminal output has no colour.\n";
  out += ".SH SEE ALSO\nThe README and examples/ in the gpuwise source tree.\n";
  return out;
}

}  // namespace

void add_man_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* man = app.add_subcommand("man", "The manual page (roff), generated from the CLI: gpuwise man | man -l -");
  man->callback([&context, &action, &app] {
    action = [&context, &app] {
      context.emit(man_page(app));
      return 0;
    };
  });
}

}  // namespace gw
