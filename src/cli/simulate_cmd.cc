// gpuwise simulate SPEC: runs each service's deployment (or its plan's best) through the
// discrete-event simulator and reports latency percentiles, throughput and SLO attainment.
#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "plan/simulate_report.h"
#include "plan/simulate_spec.h"

namespace gw {

namespace {

struct SimulateArgs {
  std::string spec, calibration, rate = "peak";
  SimulateSpecOptions simulate;
  bool fail_on_slo = false;
};

int run_simulate(CommandContext& context, SimulateArgs args) {
  auto spec = load_spec(args.spec);
  if (!spec.ok()) throw InputError{spec.error()};
  context.add_input(args.spec);
  std::optional<Calibration> calibration = load_calibration_option(args.calibration);
  args.simulate.calibration = calibration ? &*calibration : nullptr;
  args.simulate.average_rate = args.rate == "average";
  args.simulate.sample_steps = context.options.explain;
  args.simulate.show_progress = context.progress_enabled();
  auto result = simulate_spec(context.catalog(), spec.value(), args.simulate);
  if (!result.ok()) throw InputError{result.error()};
  if (context.options.format == "json") {
    context.emit_json(to_json(result.value()), "simulate");
  } else {
    SimulateReport report = simulate_report(result.value(), context.options.explain);
    if (context.options.format == "html" || context.options.format == "md")
      context.emit_document(report.document);
    else
      context.emit(report.text);
  }
  // The simulation ran: exit 0 whatever it found, unless a pipeline asks to fail on a missed SLO.
  return args.fail_on_slo && !result.value().all_meet() ? 3 : 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* simulate_command = app.add_subcommand("simulate", "Simulate each service's deployment (or its plan's best)");
  auto args = std::make_shared<SimulateArgs>();
  simulate_command->add_option("SPEC", args->spec, "Workload spec (YAML) with deployments")->required();
  simulate_command->add_option("--seed", args->simulate.seed, "Random seed (same seed, same output)");
  simulate_command->add_option("--requests", args->simulate.requests,
                               "Stop admitting after N requests (default: the whole trace; 100000 of a synthetic process)")
      ->check(CLI::Range(1LL, 1000000000LL));
  simulate_command->add_option("--duration", args->simulate.duration_s, "Stop admitting after this many simulated seconds")
      ->check(CLI::Range(0.0, 1e9));
  simulate_command->add_option("--rate", args->rate, "Rate for rps-driven traffic: peak or average")
      ->check(CLI::IsMember({"peak", "average"}));
  simulate_command->add_option("--calibration", args->calibration, "Efficiency factors from `gpuwise calibrate`");
  simulate_command->add_flag("--fail-on-slo", args->fail_on_slo, "Exit 3 when a service misses its SLO (for pipelines)");
  simulate_command->callback([&context, &action, args] {
    action = [&context, args] { return run_simulate(context, *args); };
  });
}

}  // namespace gw
