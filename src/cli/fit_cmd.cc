// gpuwise fit MODEL: the VRAM a model needs per device, and where it fits in the catalog.
#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "model/presets.h"
#include "plan/fit_report.h"

namespace gw {

namespace {

struct FitArgs {
  std::string model;
  FitOptions fit;
};

int run_fit(CommandContext& context, const FitArgs& args) {
  auto resolved = resolve_model(args.model);
  if (!resolved.ok()) throw InputError{resolved.error()};
  if (args.model.find('/') != std::string::npos) context.add_input(args.model);
  auto result = fit_question(context.catalog(), resolved.value(), args.fit);
  if (!result.ok()) throw InputError{result.error()};
  const FitResult& r = result.value();
  if (context.options.format == "json") {
    context.emit_json(to_json(r), "fit");
    return r.exit_code();
  }
  FitReport report = fit_report(r, context.options.explain);
  if (context.options.format == "html")
    context.emit_document(report.document);
  else if (context.options.format == "md")
    context.emit(report.markdown);
  else if (context.options.format == "csv")
    context.emit(report.csv);
  else
    context.emit(report.text);
  return r.exit_code();
}

}  // namespace

void add_fit_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* fit = app.add_subcommand("fit", "VRAM needed per device, and the fewest devices of each accelerator that fit");
  auto args = std::make_shared<FitArgs>();
  fit->add_option("MODEL", args->model, "A preset name (gpuwise models) or a path to a Hugging Face config.json")->required();
  fit->add_flag("--train", args->fit.train, "Training instead of inference");
  fit->add_option("--precision", args->fit.precision, "Weights: fp32, bf16, fp16, fp8, int8, int4 (awq, gptq), fp4, mxfp4 (training: bf16, fp16, fp32, tf32)");
  fit->add_option("--kv-precision", args->fit.kv_precision, "KV cache precision (default bf16)");
  fit->add_option("--batch", args->fit.batch, "Concurrent sequences (training: micro-batch)")->check(CLI::Range(1LL, 1LL << 30));
  fit->add_option("--context", args->fit.context, "Tokens per sequence (training: sequence length); default 4096")
      ->transform(count_with_suffix())
      ->check(CLI::Range(1LL, 1LL << 30));
  fit->add_option("--tp", args->fit.tp, "Tensor-parallel degree (default: searched)")->check(CLI::Range(1, 1024));
  fit->add_option("--pp", args->fit.pp, "Pipeline-parallel stages (default: searched)")->check(CLI::Range(1, 1024));
  fit->add_option("--dp", args->fit.dp, "Data-parallel degree (training)")->check(CLI::Range(1, 1 << 20));
  fit->add_option("--zero", args->fit.zero, "ZeRO stage 0-3 over the data-parallel degree (FSDP full shard = 3)")
      ->check(CLI::Range(0, 3));
  fit->add_option("--optimizer", args->fit.optimizer, "adamw, adam-8bit, sgd-momentum, sgd");
  fit->add_option("--recompute", args->fit.recompute, "Activation recomputation: none, selective, full");
  fit->add_flag("--sequence-parallel", args->fit.sequence_parallel, "Megatron sequence parallelism with tp");
  fit->add_flag("--no-flash-attention", args->fit.no_flash, "Store the attention matrix (eager attention)");
  fit->add_flag("--offload-optimizer", args->fit.offload, "ZeRO-Offload: optimizer state and master weights in host RAM");
  fit->add_option("--overhead-gib", args->fit.overhead_gib, "Runtime overhead per device (CUDA context, workspaces)")
      ->check(CLI::Range(0.0, 1024.0));
  fit->add_option("--usable-fraction", args->fit.usable_fraction, "Share of device memory the model may use")
      ->check(CLI::Range(0.05, 1.0));
  fit->add_option("--quant-group-size", args->fit.quant_group_size, "Weights per scale for int4/fp4")
      ->check(CLI::Range(8, 1 << 16));
  fit->add_option("--prefill-chunk", args->fit.prefill_chunk, "Tokens per forward pass during prefill")
      ->check(CLI::Range(1LL, 1LL << 30));
  fit->add_option("--max-devices", args->fit.max_devices, "Most devices per replica to consider")->check(CLI::Range(1, 65536));
  fit->add_option("--pricing", args->fit.pricing, "on-demand, spot, reserved-1y, reserved-3y");
  fit->add_option("--cloud", args->fit.clouds, "Offerings from these clouds only");
  fit->add_option("--region", args->fit.regions, "Offerings in regions with these prefixes only");
  fit->add_option("--geo", args->fit.geo, "Offerings in this geography only")->check(CLI::IsMember({"us", "europe", "asia"}));
  fit->add_option("--accelerator", args->fit.accelerators, "Consider only these accelerators");
  fit->callback([&context, &action, args] {
    action = [&context, args] { return run_fit(context, *args); };
  });
}

}  // namespace gw
