// gpuwise mix DEMAND: reserved (1-year, 3-year), on-demand and spot for a demand curve (a CSV
// of timestamp,units[,interruptible_units], or a spec whose service's plan turns its traffic
// into replicas per hour), with the saving against all on-demand.
#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "plan/mix_question.h"

namespace gw {

namespace {

int run_mix(CommandContext& context, const MixOptions& args) {
  context.add_input(args.demand);
  auto result = mix_question(context.catalog(), args);
  if (!result.ok()) throw InputError{result.error()};
  if (context.options.format == "json") {
    context.emit_json(to_json(result.value()), "mix");
    return 0;
  }
  MixReport report = mix_report(result.value(), context.options.explain);
  if (context.options.format == "csv")
    context.emit_table(report.levels, report.summary);
  else if (context.options.format == "md" || context.options.format == "html")
    context.emit_document(report.document);
  else
    context.emit(report.text);
  return 0;
}

}  // namespace

void add_mix_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* mix = app.add_subcommand("mix", "Reserved, on-demand and spot mix for a demand curve (CSV or spec), exact");
  auto args = std::make_shared<MixOptions>();
  mix->add_option("DEMAND", args->demand, "CSV timestamp,units[,interruptible_units], or a workload spec (YAML)")->required();
  mix->add_option("--offering", args->offering, "Instance type whose catalog prices to use (cheapest region)");
  mix->add_option("--on-demand", args->on_demand, "On-demand USD per unit-hour")->check(CLI::Range(0.0, 1e6));
  mix->add_option("--reserved-1y", args->reserved_1y, "1-year reserved USD per unit-hour (effective)")->check(CLI::Range(0.0, 1e6));
  mix->add_option("--reserved-3y", args->reserved_3y, "3-year reserved USD per unit-hour (effective)")->check(CLI::Range(0.0, 1e6));
  mix->add_option("--spot", args->spot, "Spot USD per unit-hour (interruptible work only)")->check(CLI::Range(0.0, 1e6));
  mix->add_option("--horizon-months", args->horizon_months, "How long the demand holds; commitment terms are bought whole")
      ->check(CLI::Range(1.0, 600.0));
  mix->add_option("--service", args->service, "Spec: the service whose demand to use (default: the first)");
  mix->add_option("--seed", args->seed, "Seed for the spec's plan check and its arrivals");
  mix->callback([&context, &action, args] { action = [&context, args] { return run_mix(context, *args); }; });
}

}  // namespace gw
