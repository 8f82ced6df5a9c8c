// gpuwise perf: one step time or the best sustained throughput on given hardware.
// gpuwise calibrate: fit efficiency factors to measured latencies.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <algorithm>
#include <optional>
#include <vector>
#include <fmt/format.h>

#include "cli/context.h"
#include "catalog/precision_support.h"
#include "perf/layer_operators.h"
#include "core/text.h"
#include "model/memory.h"
#include "model/presets.h"
#include "perf/measurement.h"
#include "perf/throughput.h"

namespace gw {

namespace {

using nlohmann::json;

struct PerfArgs {
  std::string model, accelerator, precision = "bf16", kv_precision, phase, calibration, step_model = "operators";
  int count = 0, tp = 0;
  long long batch = 1, context_tokens = 1024;
  bool max_throughput = false;
  double input_tokens = 0, output_tokens = 0;
  int max_batch = 256;
};

int run_perf(CommandContext& context, const PerfArgs& args) {
  auto resolved = resolve_model(args.model);
  if (!resolved.ok()) throw InputError{resolved.error()};
  const ModelArch& arch = resolved.value();
  const Catalog& catalog = context.catalog();
  auto named = catalog.accelerator_named(args.accelerator);
  if (!named.ok()) fail("--accelerator", named.error().message);
  const Accelerator* accelerator = named.value();
  auto precision = parse_precision(args.precision);
  if (!precision) fail("--precision", "'" + args.precision + "' is not one of " + precision_choices());
  if (auto why = unsupported_precision(*accelerator, *precision))
    fail("--precision", accelerator->name + ": " + *why + " (" + kPrecisionSupportSource + ")");
  int tp = args.tp > 0 ? args.tp : args.count > 0 ? args.count : 1;
  if (args.count > 0 && args.tp > 0 && args.tp > args.count) fail("--tp", "tensor-parallel degree exceeds --count");
  if (arch.kind != ModelKind::generic && arch.num_heads % tp != 0)
    fail("--tp", fmt::format("{} attention heads are not divisible by {}", arch.num_heads, tp));
  std::optional<Calibration> calibration = load_calibration_option(args.calibration);
  PerfSetup setup;
  setup.accelerator = accelerator;
  setup.tensor_parallel = tp;
  setup.weight_precision = *precision;
  setup.kv_precision = args.kv_precision.empty() ? (*precision == Precision::fp8 ? Precision::fp8 : Precision::bf16)
                                                 : parse_precision(args.kv_precision).value_or(Precision::bf16);
  setup.efficiency = efficiency_for(*accelerator, calibration ? &*calibration : nullptr);
  if (args.step_model == "operators") use_layer_operators(setup, calibration ? &*calibration : nullptr);
  int replicas = args.count > 0 ? std::max(1, args.count / tp) : 1;

  json result = {{"model", arch.name}, {"accelerator", accelerator->name}, {"tensor_parallel", tp},
                 {"replicas", replicas}, {"precision", args.precision},
                 {"efficiency", {{"compute", setup.efficiency.compute}, {"compute_8bit", setup.efficiency.compute_8bit},
                                 {"memory", setup.efficiency.memory}, {"overhead_per_layer_s", setup.efficiency.overhead_per_layer_s},
                                 {"source", setup.efficiency.source}}}};
  std::string text;
  if (args.max_throughput) {
    if (arch.kind != ModelKind::decoder) {
      // Classic models: the largest batch that fits, items per second.
      InferenceMemoryOptions memory;
      memory.weight_precision = *precision;
      memory.tensor_parallel = tp;
      double usable = accelerator->memory_bytes() * 0.9;
      long long best_batch = 1;
      for (long long b = 1; b <= args.max_batch; b *= 2) {
        memory.batch = b;
        if (estimate_inference(arch, memory).total_bytes_per_device <= usable) best_batch = b;
      }
      StepTime step = item_step(arch, setup, static_cast<double>(best_batch), args.input_tokens > 0 ? args.input_tokens : 128);
      double rps = static_cast<double>(best_batch) / step.time_s * replicas;
      result.update({{"step_time_s", step.time_s}, {"batch", best_batch}, {"requests_per_s", rps},
                     {"tokens_per_s", nullptr}, {"bound", step.bound}});
      text = fmt::format("{} on {}x {}: batch {} in {:.2f} ms, {} items/s ({}-bound)\n", arch.name, tp * replicas,
                         accelerator->name, best_batch, step.time_s * 1e3, format_number(rps, 0), step.bound);
    } else {
      if (args.input_tokens <= 0 || args.output_tokens <= 0)
        fail("--input-tokens", "--max-throughput needs --input-tokens and --output-tokens");
      // One layout: tp-way tensor parallel replicas on the devices, each at the largest batch
      // its KV cache (or --max-batch) allows.
      struct Layout {
        int tp = 1, replicas = 1;
        Throughput throughput;
        MemoryEstimate memory;
        double total_tokens_per_s() const { return throughput.tokens_per_s * replicas; }
      };
      auto layout = [&](int layout_tp) -> std::optional<Layout> {
        if (arch.num_heads % layout_tp != 0) return std::nullopt;
        PerfSetup layout_setup = setup;
        layout_setup.tensor_parallel = layout_tp;
        InferenceMemoryOptions memory;
        memory.weight_precision = *precision;
        memory.kv_precision = setup.kv_precision;
        memory.tensor_parallel = layout_tp;
        memory.context = 2048;
        memory.batch = 1;
        Layout l;
        l.tp = layout_tp;
        l.replicas = args.count > 0 ? std::max(1, args.count / layout_tp) : 1;
        l.memory = estimate_inference(arch, memory);
        double free = accelerator->memory_bytes() * 0.9 - l.memory.weights_bytes - l.memory.activation_bytes - l.memory.overhead_bytes;
        if (free <= 0) return std::nullopt;
        l.throughput = continuous_max_throughput(arch, layout_setup, l.memory.kv_cache_bytes_per_token, free, args.input_tokens,
                                                 args.output_tokens, args.max_batch);
        if (l.throughput.batch < 1) return std::nullopt;
        return l;
      };
      // With --count and no --tp: every tensor-parallel degree that divides the devices, best first.
      std::vector<Layout> layouts;
      if (args.count > 0 && args.tp == 0) {
        for (int t = 1; t <= args.count; t *= 2)
          if (args.count % t == 0)
            if (auto l = layout(t)) layouts.push_back(*l);
        std::stable_sort(layouts.begin(), layouts.end(),
                         [](const Layout& a, const Layout& b) { return a.total_tokens_per_s() > b.total_tokens_per_s(); });
      } else if (auto l = layout(tp)) {
        layouts.push_back(*l);
      }
      if (layouts.empty()) {
        InferenceMemoryOptions memory;
        memory.weight_precision = *precision;
        memory.tensor_parallel = tp;
        MemoryEstimate e = estimate_inference(arch, memory);
        throw InputError{Error{"", 0, args.tp > 0 || args.count == 0 ? "--tp" : "--count",
                               fmt::format("the weights ({:.1f} GiB per device at tp{}) and one request's KV cache do not fit "
                                           "on {}x {}", e.weights_bytes / (1u << 30), tp, std::max(1, args.count),
                                           accelerator->name)}};
      }
      const Layout& best = layouts.front();
      const Throughput& t = best.throughput;
      std::string limit = t.batch_limit == "KV cache"
                              ? "KV-cache limit"
                              : fmt::format("--max-batch limit; the KV cache would hold {}", format_number(t.kv_cache_batch, 0));
      json alternatives = json::array();
      for (const auto& l : layouts)
        alternatives.push_back({{"tensor_parallel", l.tp}, {"replicas", l.replicas}, {"batch", l.throughput.batch},
                                {"batch_limit", l.throughput.batch_limit}, {"tokens_per_s", l.total_tokens_per_s()},
                                {"bound", l.throughput.bound}});
      result.update({{"tensor_parallel", best.tp}, {"replicas", best.replicas}, {"step_time_s", t.step_time_s},
                     {"batch", t.batch}, {"batch_limit", t.batch_limit}, {"kv_cache_batch", t.kv_cache_batch},
                     {"tokens_per_s", best.total_tokens_per_s()}, {"requests_per_s", t.requests_per_s * best.replicas},
                     {"bound", t.bound}, {"kv_cache_bytes_per_token", best.memory.kv_cache_bytes_per_token},
                     {"layouts", alternatives}});
      text = fmt::format("{} on {}x {} ({} x tp{}): batch {} per replica ({}), step {:.2f} ms, {} output tokens/s, "
                         "{} requests/s ({}-bound)\n", arch.name, best.tp * best.replicas, accelerator->name, best.replicas,
                         best.tp, t.batch, limit, t.step_time_s * 1e3, format_number(best.total_tokens_per_s(), 0),
                         format_number(t.requests_per_s * best.replicas, 2), t.bound);
      if (layouts.size() > 1) {
        text += "Layouts on these devices:\n";
        for (const auto& l : layouts)
          text += fmt::format("  {} x tp{}: batch {} ({}), {} output tokens/s\n", l.replicas, l.tp, l.throughput.batch,
                              l.throughput.batch_limit, format_number(l.total_tokens_per_s(), 0));
      }
    }
  } else {
    StepTime step;
    double tokens = 0;
    if (arch.kind != ModelKind::decoder) {
      step = item_step(arch, setup, static_cast<double>(args.batch), static_cast<double>(args.context_tokens));
      tokens = static_cast<double>(args.batch * args.context_tokens);
    } else if (args.phase == "prefill") {
      step = prefill_step(arch, setup, static_cast<double>(args.batch), static_cast<double>(args.context_tokens));
      tokens = static_cast<double>(args.batch * args.context_tokens);
    } else if (args.phase == "decode") {
      step = decode_step(arch, setup, static_cast<double>(args.batch), static_cast<double>(args.context_tokens));
      tokens = static_cast<double>(args.batch);
    } else {
      fail("--phase", "give --phase prefill or decode (or --max-throughput)");
    }
    result.update({{"step_time_s", step.time_s}, {"batch", args.batch}, {"tokens_per_s", tokens / step.time_s},
                   {"requests_per_s", static_cast<double>(args.batch) / step.time_s}, {"bound", step.bound},
                   {"compute_s", step.compute_s}, {"memory_s", step.memory_s}, {"network_s", step.network_s},
                   {"overhead_s", step.overhead_s}, {"flops", step.flops}, {"bytes", step.bytes},
                   {"layer_operators_s", step.layer_operators_s}, {"measured_operators", step.measured_operators},
                   {"roofline_operators", step.roofline_operators}, {"attention_s", step.attention_s},
                   {"head_s", step.head_s}});
    std::string layers = uses_layer_operators(arch, setup)
                             ? fmt::format("layers {:.3f} ms ({} of {} operators measured), attention {:.3f} ms, head "
                                           "{:.3f} ms, KV writes ",
                                           step.layer_operators_s * 1e3, step.measured_operators,
                                           step.measured_operators + step.roofline_operators, step.attention_s * 1e3,
                                           step.head_s * 1e3)
                             : "";
    text = fmt::format("{} step on {} (tp{}): {:.3f} ms ({}-bound; {}compute {:.3f} ms, memory {:.3f} ms, network "
                       "{:.3f} ms, overhead {:.3f} ms), {} tokens/s\n",
                       args.phase.empty() ? "item" : args.phase, accelerator->name, tp, step.time_s * 1e3, step.bound,
                       layers, step.compute_s * 1e3, step.memory_s * 1e3, step.network_s * 1e3, step.overhead_s * 1e3,
                       format_number(tokens / step.time_s, 0));
  }
  if (context.options.format == "json") {
    context.emit_json(result, "perf");
  } else {
    if (context.options.explain && uses_layer_operators(arch, setup))
      text += fmt::format("by operator: {}; the output head by the GEMM roofline, the KV writes by the roofline below\n",
                          setup.operator_basis);
    if (context.options.explain)
      text += fmt::format("efficiency: {} (compute {:.2f}, 8-bit {:.2f}, memory {:.2f}, {:.0f} us per layer)\n"
                          "peak {:.1f} TFLOPS, {:.0f} GB/s ({})\n",
                          setup.efficiency.source, setup.efficiency.compute, setup.efficiency.compute_8bit,
                          setup.efficiency.memory, setup.efficiency.overhead_per_layer_s * 1e6,
                          compute_peak_tflops(*accelerator, *precision), accelerator->memory_gb_per_s, accelerator->source);
    context.emit(text);
  }
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
  perf->add_option("--accelerator", args->accelerator, "Accelerator name")->required();
  perf->add_option("--count", args->count, "Devices (replicas = count / tp)")->check(CLI::Range(1, 4096));
  perf->add_option("--tp", args->tp,
                   "Tensor-parallel degree (default: --count; with --max-throughput, the best layout on --count devices)")->check(CLI::Range(1, 64));
  perf->add_option("--precision", args->precision, "Weights: bf16, fp16, fp8, int8, int4, fp32");
  perf->add_option("--kv-precision", args->kv_precision, "KV cache precision (default bf16; fp8 with fp8 weights)");
  perf->add_option("--phase", args->phase, "prefill or decode")->check(CLI::IsMember({"prefill", "decode"}));
  perf->add_option("--batch", args->batch, "Sequences (or items) in the step")->check(CLI::Range(1LL, 1LL << 24));
  perf->add_option("--context", args->context_tokens, "Prompt tokens (prefill) or context (decode)")
      ->transform(count_with_suffix())
      ->check(CLI::Range(1LL, 1LL << 26));
  perf->add_flag("--max-throughput", args->max_throughput, "Best sustained throughput (batch limited by KV cache)");
  perf->add_option("--input-tokens", args->input_tokens, "Prompt tokens per request")
      ->transform(count_with_suffix())->check(CLI::Range(1.0, 1e7));
  perf->add_option("--output-tokens", args->output_tokens, "Output tokens per request")
      ->transform(count_with_suffix())->check(CLI::Range(1.0, 1e7));
  perf->add_option("--max-batch", args->max_batch, "Most concurrent sequences")->check(CLI::Range(1, 1 << 20));
  perf->add_option("--calibration", args->calibration, "Efficiency factors from `gpuwise calibrate`");
  perf->add_option("--step-model", args->step_model,
                   "operators: layers timed by operator from measured profiles (16-bit dense LLMs), "
                   "roofline: the whole-step roofline")
      ->check(CLI::IsMember({"operators", "roofline"}));
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
