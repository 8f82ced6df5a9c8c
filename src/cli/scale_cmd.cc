// gpuwise scale SPEC: each service's autoscaling policies simulated on its traffic, with
// replicas against demand, GPU-hours, cost, SLO attainment and cold starts; the cheapest policy
// that meets the SLO is recommended.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/context.h"
#include "plan/scale_spec.h"
#include "plan/scaling_plan.h"
#include "sim/simulator.h"

namespace gw {

namespace {

struct ScaleArgs {
  std::string spec, calibration;
  ScaleSpecOptions scale;
};

int run_scale(CommandContext& context, ScaleArgs args) {
  auto spec = load_spec(args.spec);
  if (!spec.ok()) throw InputError{spec.error()};
  context.add_input(args.spec);
  std::optional<Calibration> calibration = load_calibration_option(args.calibration);
  args.scale.calibration = calibration ? &*calibration : nullptr;
  args.scale.explain = context.options.explain;
  args.scale.show_progress = context.progress_enabled();
  auto out = scale_spec(context.catalog(), spec.value(), args.scale);
  if (!out.ok()) throw InputError{out.error()};
  if (context.options.format == "json")
    context.emit_json(to_json(out.value()), "scale");
  else if (context.options.format == "html" || context.options.format == "md")
    context.emit_document(out.value().doc);
  else
    context.emit(out.value().text);
  return out.value().all_meet ? 0 : 3;
}

}  // namespace

void add_scale_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* scale = app.add_subcommand("scale", "Compare autoscaling policies on each service's traffic (replicas, GPU-hours, cost, SLO)");
  auto args = std::make_shared<ScaleArgs>();
  scale->add_option("SPEC", args->spec, "Workload spec (YAML); a service's scaling: section sets the mechanics")->required();
  scale->add_option("--seed", args->scale.seed, "Simulation seed (same seed, same output)");
  scale->add_option("-j,--jobs", args->scale.jobs, "Policies simulated at once; 0: one per core. The answer is the same for any value")
      ->check(CLI::Range(0, 1024));
  scale->add_option("--hours", args->scale.hours, "Hours to simulate (default: the traffic's own span)")->check(CLI::Range(0.01, 24.0 * 366));
  const ScalingOptions window;  // the simulator's fast-forward window, as the scaling plan leaves it
  auto* exact = scale->add_flag("--exact", args->scale.exact,
                                fmt::format("Simulate every request; by default, on spans over {:g} h, a steady stretch (pool "
                                            "settled, rate holding, load steady for >= {:g} minutes and {} requests) is replayed "
                                            "from that window to the end of the stretch",
                                            kExactSpanS / 3600, window.fast_forward_window_s / 60, window.fast_forward_requests));
  scale->add_flag("--fast-forward", args->scale.fast_forward,
                  fmt::format("Replay steady stretches on spans of {:g} h or less too", kExactSpanS / 3600))
      ->excludes(exact);
  scale->add_option("--calibration", args->calibration, "Efficiency factors from `gpuwise calibrate`");
  scale->add_option("--shapes", args->scale.shapes,
                    "Replica layouts to compare: the plan's, then the next cheapest accelerator/tensor-parallel layouts "
                    "(default: the spec's scaling.shapes, else 1)")
      ->check(CLI::Range(1, 8));
  scale->callback([&context, &action, args] { action = [&context, args] { return run_scale(context, *args); }; });
}

}  // namespace gw
