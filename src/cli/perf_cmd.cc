// gpuwise perf: one step time or the best sustained throughput on given hardware.
// gpuwise calibrate: fit efficiency factors to measured latencies.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>

#include "cli/context.h"
#include "core/text.h"
#include "model/presets.h"
#include "perf/decode_attention_kernel.h"
#include "perf/layer_operators.h"
#include "perf/measurement.h"
#include "perf/perf_question.h"

namespace gw {

namespace {

struct PerfArgs {
  std::string model, calibration;
  PerfOptions perf;
};

int run_perf(CommandContext& context, PerfArgs args) {
  auto resolved = resolve_model(args.model);
  if (!resolved.ok()) throw InputError{resolved.error()};
  std::optional<Calibration> calibration = load_calibration_option(args.calibration);
  args.perf.calibration = calibration ? &*calibration : nullptr;
  auto result = perf_question(context.catalog(), resolved.value(), args.perf);
  if (!result.ok()) throw InputError{result.error()};
  if (context.options.format == "json")
    context.emit_json(to_json(result.value()), "perf");
  else
    context.emit(perf_text(result.value(), context.options.explain));
  return 0;
}

// A Vidur-layout profile folder: per accelerator, the roofline fitted to the team's own
// operator times, as CSV (the rooflines.csv layout), with the fit's in-sample error.
int calibrate_profiles(CommandContext& context, const std::string& dir) {
  auto profiles = load_user_layer_profiles(dir, context.catalog());
  if (!profiles.ok()) throw InputError{profiles.error()};
  context.emit(rooflines_to_csv(profiles.value().rooflines));
  for (const auto& [name, quality] : profiles.value().fit_quality)
    context.note(fmt::format("{}: {} profiled layers, median |error| of the fitted roofline {:.1f}% (plan with "
                             "--profiles {} to use the measured tables themselves)",
                             name, quality.first, quality.second * 100, dir));
  return 0;
}

int run_calibrate(CommandContext& context, const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return calibrate_profiles(context, path);
  std::string text, message;
  if (!read_file(path, text, message)) throw InputError{Error{path, 0, "", "cannot read: " + message}};
  context.add_input(path);
  auto measurements = read_measurements(text, path, context.catalog());
  if (!measurements.ok()) throw InputError{measurements.error()};
  auto calibration = calibrate(measurements.value(), context.catalog());
  if (!calibration.ok()) {
    Error e = calibration.error();
    e.file = path;
    throw InputError{e};
  }
  context.emit(calibration.value().to_csv());
  for (const auto& [name, quality] : calibration.value().fit_quality)
    context.note(fmt::format("{}: {} measurements, median |error| after fitting {:.1f}%", name, quality.first,
                             quality.second * 100));
  return 0;
}

}  // namespace

void add_perf_commands(CLI::App& app, CommandContext& context, Action& action) {
  auto* perf = app.add_subcommand("perf", "Predicted step time, or the best sustained throughput, on given hardware");
  auto args = std::make_shared<PerfArgs>();
  perf->add_option("MODEL", args->model, "Preset name or config.json")->required();
  perf->add_option("--accelerator", args->perf.accelerator, "Accelerator name")->required();
  perf->add_option("--count", args->perf.count, "Devices (replicas = count / tp)")->check(CLI::Range(1, 4096));
  perf->add_option("--tp", args->perf.tp,
                   "Tensor-parallel degree (default: --count; with --max-throughput, the best layout on --count devices)")->check(CLI::Range(1, 64));
  perf->add_option("--precision", args->perf.precision, "Weights: bf16, fp16, fp8, int8, int4 (awq, gptq), fp4, mxfp4, fp32");
  perf->add_option("--kv-precision", args->perf.kv_precision, "KV cache precision (default bf16; fp8 with fp8 weights)");
  perf->add_option("--phase", args->perf.phase, "prefill or decode")->check(CLI::IsMember({"prefill", "decode"}));
  perf->add_option("--batch", args->perf.batch, "Sequences (or items) in the step")->check(CLI::Range(1LL, 1LL << 24));
  perf->add_option("--context", args->perf.context_tokens, "Prompt tokens (prefill) or context (decode)")
      ->transform(count_with_suffix())
      ->check(CLI::Range(1LL, 1LL << 26));
  perf->add_flag("--max-throughput", args->perf.max_throughput, "Best sustained throughput (batch limited by KV cache)");
  perf->add_option("--input-tokens", args->perf.input_tokens, "Prompt tokens per request")
      ->transform(count_with_suffix())->check(CLI::Range(1.0, 1e7));
  perf->add_option("--output-tokens", args->perf.output_tokens, "Output tokens per request")
      ->transform(count_with_suffix())->check(CLI::Range(1.0, 1e7));
  perf->add_option("--lengths", args->perf.lengths_file,
                   "With --max-throughput, instead of --input-tokens/--output-tokens: a CSV of requests' lengths "
                   "(input_length,output_length; or an Azure trace's ContextTokens,GeneratedTokens)");
  perf->add_option("--max-batch", args->perf.max_batch, "Most concurrent sequences")->check(CLI::Range(1, 1 << 20));
  perf->add_option("--tpot-ms", args->perf.tpot_ms,
                   "With --max-throughput: every step (the time per output token) at most this many ms, as a "
                   "latency-bounded server runs; the batch is the largest whose step fits")
      ->check(CLI::Range(0.01, 1e6));
  perf->add_option("--calibration", args->calibration, "Efficiency factors from `gpuwise calibrate`");
  perf->add_option("--step-model", args->perf.step_model,
                   "operators: layers timed by operator from measured profiles (16-bit dense LLMs), "
                   "roofline: the whole-step roofline")
      ->check(CLI::IsMember({"operators", "roofline"}));
  perf->add_option("--decode-attention", args->perf.decode_attention,
                   "grouped: each KV head read once per group of query heads (FlashAttention, FlashInfer, "
                   "TensorRT-LLM's XQA; the default); per-query-head: a thread block per query head, each "
                   "reading its KV head's cache (TensorRT-LLM before XQA, FasterTransformer)")
      ->check(CLI::IsMember(decode_attention_kernels()));
  perf->callback([&context, &action, args] { action = [&context, args] { return run_perf(context, *args); }; });

  auto* calibrate_command = app.add_subcommand(
      "calibrate", "Fit efficiency factors to measured latencies (CSV), or a roofline to a Vidur-layout profile folder");
  auto path = std::make_shared<std::string>();
  calibrate_command->add_option("MEASUREMENTS", *path,
                                "CSV: accelerator,model,phase,batch,tokens,latency_ms[,precision,tp,output_tokens]; "
                                "or a folder of per-operator profiles in Vidur's layout (compute/<accelerator>/...)")
      ->required();
  calibrate_command->callback([&context, &action, path] {
    action = [&context, path] { return run_calibrate(context, *path); };
  });
}

}  // namespace gw
