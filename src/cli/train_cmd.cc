// gpuwise train MODEL: how long a training run takes and what it costs, on one hardware choice
// or the cheapest that meets a deadline; spot with checkpoints simulated by Monte Carlo.
#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "model/presets.h"
#include "plan/train_report.h"
#include "plan/train_run.h"

namespace gw {

namespace {

struct TrainArgs {
  std::string model, calibration;
  TrainChoiceText choices;  // precision, recompute, pricing
  TrainOptions train;
};

int run_train(CommandContext& context, TrainArgs args) {
  auto resolved = resolve_model(args.model);
  if (!resolved.ok()) throw InputError{resolved.error()};
  if (auto error = apply_train_choices(args.choices, args.train)) throw InputError{*error};
  std::optional<Calibration> calibration = load_calibration_option(args.calibration);
  args.train.calibration = calibration ? &*calibration : nullptr;
  auto result = train_run(context.catalog(), resolved.value(), args.train);
  if (!result.ok()) throw InputError{result.error()};
  const TrainResult& r = result.value();
  if (!r.plan.best) {
    context.err() << "gpuwise: " << r.plan.binding << "\n";
    return 3;
  }
  if (context.options.format == "json") {
    context.emit_json(to_json(r), "train");
  } else {
    TrainReport report = train_report(r, context.options.explain);
    if (context.options.format == "html" || context.options.format == "md")
      context.emit_document(report.document);
    else
      context.emit(report.text);
  }
  if (!r.plan.feasible) {
    context.err() << "gpuwise: " << r.plan.binding << "\n";
    return 3;
  }
  return 0;
}

}  // namespace

void add_train_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* train = app.add_subcommand("train", "Time and cost of a training run, and spot with checkpoints");
  auto args = std::make_shared<TrainArgs>();
  train->add_option("MODEL", args->model, "Preset name or config.json")->required();
  train->add_option("--tokens", args->train.tokens, "Training tokens")
      ->transform(count_with_suffix())->required();
  train->add_option("--accelerator", args->train.accelerator, "Accelerator (default: search all)");
  train->add_option("--count", args->train.count, "Devices (default: search 1, 2, 4, ... 4096)")->check(CLI::Range(1, 1 << 20));
  train->add_option("--offering", args->train.offering, "An instance type (its cheapest region)");
  train->add_option("--precision", args->choices.precision, "bf16, fp16, fp32 or fp8 (Transformer Engine; Hopper and newer)");
  train->add_option("--zero", args->train.zero, "Pin the ZeRO stage (0-3; default: searched)")->check(CLI::Range(0, 3));
  train->add_option("--recompute", args->choices.recompute, "Pin activation recomputation: none, selective, full (default: searched)");
  train->add_flag("--allow-tcp-clusters", args->train.allow_tcp_clusters,
                  "Consider multi-node jobs on instances without an EFA/InfiniBand-class fabric");
  train->add_flag("--cross-zone", args->train.cross_zone,
                  "Nodes spread over zones (no placement group): half the network bandwidth, traffic billed");
  train->add_option("--pricing", args->choices.pricing, "on-demand, spot, reserved-1y, reserved-3y");
  train->add_option("--deadline-days", args->train.deadline_days, "Finish within this many days (exit 3 when impossible)");
  train->add_option("--sequence-length", args->train.sequence_length, "Tokens per sequence")->check(CLI::Range(1LL, 1LL << 24));
  train->add_option("--global-batch-tokens", args->train.global_batch_tokens, "Tokens per optimizer step, run as asked (default: the critical batch for the run's compute, DeepSeek LLM's fit)")->check(CLI::Range(1.0, 1e12));
  train->add_option("--preemption-rate", args->train.preemptions_per_hour, "Spot preemptions per hour (exponential model)");
  train->add_option("--spot-trace", args->train.spot_trace, "Replay a spot availability trace (skypilot spot-traces JSON)");
  train->add_option("--checkpoint-storage-gbps", args->train.storage_gbps, "Checkpoint bandwidth per node (Gbps)")
      ->check(CLI::Range(0.001, 1e6));
  train->add_option("--checkpoint-interval-min", args->train.interval_min, "Checkpoint interval (default: Daly's optimum)")
      ->check(CLI::Range(0.0, 1e6));
  train->add_option("--provisioning-s", args->train.provisioning_s, "Time to get capacity back and restart")->check(CLI::Range(0.0, 1e7));
  train->add_option("--runs", args->train.runs, "Monte Carlo runs")->check(CLI::Range(1, 1000000));
  train->add_option("--seed", args->train.seed, "Monte Carlo seed");
  train->add_option("--cloud", args->train.clouds, "Offerings from these clouds only");
  train->add_option("--region", args->train.regions, "Offerings in regions with these prefixes only");
  train->add_option("--calibration", args->calibration, "Efficiency factors from `gpuwise calibrate`");
  train->callback([&context, &action, args] { action = [&context, args] { return run_train(context, *args); }; });
}

}  // namespace gw
