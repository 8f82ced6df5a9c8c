// gpuwise fleet SPEC: the spec's fleet section: projects on a shared pool against static
// allocation (with schedule shifts that lower the peak), owning against renting (break-even,
// hybrid), and what-if optimizations of a service with their payback.
#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "fleet/fleet_spec.h"

namespace gw {

namespace {

struct FleetArgs {
  std::string spec, calibration;
  FleetSpecOptions fleet;
};

int run_fleet(CommandContext& context, FleetArgs args) {
  auto loaded = load_spec(args.spec);
  if (!loaded.ok()) throw InputError{loaded.error()};
  context.add_input(args.spec);
  std::optional<Calibration> calibration = load_calibration_option(args.calibration);
  args.fleet.calibration = calibration ? &*calibration : nullptr;
  auto report = fleet_spec(context.catalog(), loaded.value(), args.fleet);
  if (!report.ok()) throw InputError{report.error()};
  if (context.options.format == "json")
    context.emit_json(to_json(report.value()), "fleet");
  else if (context.options.format == "html" || context.options.format == "md")
    context.emit_document(report.value().doc);
  else
    context.emit(fleet_text(report.value(), context.options.explain));
  return 0;
}

}  // namespace

void add_fleet_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* fleet = app.add_subcommand("fleet", "Shared pools, buy versus rent, what-if optimizations with payback (the spec's fleet section)");
  auto args = std::make_shared<FleetArgs>();
  fleet->add_option("SPEC", args->spec, "Workload spec (YAML) with a fleet: section")->required();
  fleet->add_option("--seed", args->fleet.seed, "Simulation seed for the what-if plans");
  fleet->add_option("--calibration", args->calibration, "Efficiency factors from `gpuwise calibrate`");
  fleet->callback([&context, &action, args] { action = [&context, args] { return run_fleet(context, *args); }; });
}

}  // namespace gw
