#include "cli/app.h"

#include "perf/layer_operators.h"

#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "core/limits.h"

namespace gw {

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"gpuwise: what GPU infrastructure to run, what it costs, and what you actually run"};
  app.name("gpuwise");
  app.set_version_flag("--version", std::string("gpuwise ") + GPUWISE_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global options are accepted before or after the subcommand

  CommandContext context(out, err);
  app.add_option("--catalog", context.options.catalog_dirs,
                 "Folder of CSVs that add or override catalog rows (accelerators.csv, offerings.csv, "
                 "commitments.csv, instance_types.csv); may be repeated")
      ->type_name("DIR");
  app.add_option("--profiles", context.options.profiles_dir,
                 "Folder of per-operator profiles in Vidur's layout (compute/<accelerator>/<org>/<model>/mlp.csv) "
                 "measured on your own hardware: step times on those accelerators use them")
      ->type_name("DIR");
  app.add_option("--format", context.options.format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv", "md", "html"}));
  app.add_option("-o,--output", context.options.output, "Write the result to FILE (atomically) instead of stdout")
      ->type_name("FILE");
  app.add_option("--charts", context.options.charts_dir,
                 "Also write each chart of an html or md report as a Vega-Lite spec (DIR/<command>-<n>.vl.json)")
      ->type_name("DIR");
  app.add_flag("--explain", context.options.explain, "Show assumptions, formulas and sources");
  app.add_flag("-q,--quiet", context.options.quiet, "No notes or progress on stderr");
  // Limits that keep memory bounded on hostile input (each run starts from the defaults).
  input_limits() = InputLimits{};
  double max_input_mib = static_cast<double>(input_limits().max_file_bytes) / (1 << 20);
  size_t max_series = input_limits().max_series;
  app.add_option("--max-input-mib", max_input_mib, "Largest file read whole (specs, configs, catalogs, JSON), MiB")
      ->check(CLI::Range(0.0001, 1e7))
      ->capture_default_str();
  app.add_option("--max-series", max_series,
                 "Most telemetry series an audit keeps (default: what half the memory available now holds, at 8 KB a series)")
      ->check(CLI::Range(1.0, 1e9));

  Action action;
  add_catalog_commands(app, context, action);
  add_fit_command(app, context, action);
  add_models_command(app, context, action);
  add_plan_command(app, context, action);
  add_perf_commands(app, context, action);
  add_simulate_command(app, context, action);
  add_train_command(app, context, action);
  add_audit_command(app, context, action);
  add_watch_command(app, context, action);
  add_scale_command(app, context, action);
  add_mix_command(app, context, action);
  add_fleet_command(app, context, action);
  add_completion_commands(app, context, action);
  add_man_command(app, context, action);

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp& e) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "gpuwise: " << e.what() << "\n";
    if (auto* sub = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front())
      err << "Run 'gpuwise " << sub->get_name() << " --help' for usage.\n";
    else
      err << "Run 'gpuwise --help' for usage.\n";
    return 2;
  }
  input_limits().max_file_bytes = static_cast<size_t>(max_input_mib * (1 << 20));
  input_limits().max_series = max_series;
  try {
    // Profiles hold for this run only (run_cli may run many times in one process).
    set_user_layer_profiles(UserLayerProfiles{});
    if (!context.options.profiles_dir.empty()) {
      auto profiles = load_user_layer_profiles(context.options.profiles_dir, context.catalog());
      if (!profiles.ok()) throw InputError{profiles.error()};
      set_user_layer_profiles(profiles.value());
    }
    return action ? action() : 2;
  } catch (const InputError& e) {
    err << "gpuwise: error: " << e.error.to_string() << "\n";
    return 1;
  } catch (const std::exception& e) {
    err << "gpuwise: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gw
