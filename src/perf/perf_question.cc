#include "perf/perf_question.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "catalog/precision_support.h"
#include "core/serving_defaults.h"
#include "model/memory.h"
#include "perf/decode_attention_kernel.h"
#include "perf/layer_operators.h"
#include "perf/step_time.h"
#include "perf/throughput.h"
#include "report/json_document.h"
#include "core/formatting.h"

namespace gw {

namespace {

using nlohmann::json;

// Classic models: the largest batch that fits, items per second.
std::optional<Error> classic_throughput(const ModelArch& arch, const Accelerator* accelerator, std::optional<Precision> precision, const PerfSetup& setup, int tp,
                                int replicas, const PerfOptions& o, PerfResult& perf) {
  json& result = perf.body;
  std::string& text = perf.text;
  // Classic models: the largest batch that fits, items per second.
  InferenceMemoryOptions memory;
  memory.weight_precision = *precision;
  memory.weight_format = setup.weight_format;
  memory.tensor_parallel = tp;
  double usable = accelerator->memory_bytes() * kUsableMemoryFraction;
  long long best_batch = 1;
  for (long long b = 1; b <= o.max_batch; b *= 2) {
    memory.batch = b;
    if (estimate_inference(arch, memory).total_bytes_per_device <= usable) best_batch = b;
  }
  StepTime step = item_step(arch, setup, static_cast<double>(best_batch), o.input_tokens > 0 ? o.input_tokens : 128);
  double rps = static_cast<double>(best_batch) / step.time_s * replicas;
  result.update({{"step_time_s", step.time_s}, {"batch", best_batch}, {"requests_per_s", rps},
                 {"tokens_per_s", nullptr}, {"bound", step.bound}});
  text = fmt::format("{} on {}x {}: batch {} in {:.2f} ms, {} items/s ({}-bound)\n", arch.name, tp * replicas,
                     accelerator->name, best_batch, step.time_s * 1e3, format_number(rps, 0), step.bound);
  return std::nullopt;
}

// Decoders: each tensor-parallel layout's replicas at the largest batch their KV cache (or
// --max-batch) allows, the best first.
std::optional<Error> llm_throughput(const ModelArch& arch, const Accelerator* accelerator, std::optional<Precision> precision, const PerfSetup& setup, int tp,
                            int /*replicas: per layout*/, const PerfOptions& o, PerfResult& perf) {
  json& result = perf.body;
  std::string& text = perf.text;
  // The requests' lengths: one length each (--input-tokens, --output-tokens) or a file's mix.
  RequestLengths lengths = RequestLengths::fixed(o.input_tokens, o.output_tokens);
  if (!o.lengths_file.empty()) {
    if (o.input_tokens > 0 || o.output_tokens > 0)
      return option_error("--lengths", "give --lengths or --input-tokens and --output-tokens, not both");
    auto read = read_request_lengths_file(o.lengths_file);
    if (!read.ok()) return read.error();
    lengths = read.value();
  } else if (o.input_tokens <= 0 || o.output_tokens <= 0) {
    return option_error("--input-tokens", "--max-throughput needs --input-tokens and --output-tokens (or --lengths)");
  }
  // One layout: tp-way tensor parallel replicas on the devices, each at the largest batch
  // its KV cache (or --max-batch) allows.
  struct Layout {
    int tp = 1, replicas = 1;
    Throughput throughput;
    MemoryEstimate memory;
    double total_tokens_per_s() const { return throughput.tokens_per_s * replicas; }
  };
  bool weights_fit = false;  // on some layout: then only the --tpot-ms bound can leave none
  auto layout = [&](int layout_tp) -> std::optional<Layout> {
    if (arch.num_heads % layout_tp != 0) return std::nullopt;
    PerfSetup layout_setup = setup;
    layout_setup.tensor_parallel = layout_tp;
    Layout l;
    l.tp = layout_tp;
    l.replicas = o.count > 0 ? std::max(1, o.count / layout_tp) : 1;
    double free = kv_cache_free_bytes(arch, *accelerator, *precision, setup.kv_precision, layout_tp, &l.memory, 0, setup.weight_format);
    if (free <= 0) return std::nullopt;
    weights_fit = true;
    l.throughput = continuous_max_throughput_within_tpot(arch, layout_setup, l.memory.kv_cache_bytes_per_token, free,
                                                         lengths, o.max_batch, o.tpot_ms * 1e-3);
    if (l.throughput.batch < 1) return std::nullopt;
    return l;
  };
  // With --count and no --tp: every tensor-parallel degree that divides the devices, best first.
  std::vector<Layout> layouts;
  if (o.count > 0 && o.tp == 0) {
    for (int t = 1; t <= o.count; t *= 2)
      if (o.count % t == 0)
        if (auto l = layout(t)) layouts.push_back(*l);
    std::stable_sort(layouts.begin(), layouts.end(),
                     [](const Layout& a, const Layout& b) { return a.total_tokens_per_s() > b.total_tokens_per_s(); });
  } else if (auto l = layout(tp)) {
    layouts.push_back(*l);
  }
  if (layouts.empty() && weights_fit && o.tpot_ms > 0)
    return option_error("--tpot-ms", fmt::format("no layout on {}x {} steps within {:g} ms even at batch 1",
                                                 std::max(1, o.count), accelerator->name, o.tpot_ms));
  if (layouts.empty()) {
    InferenceMemoryOptions memory;
    memory.weight_precision = *precision;
    memory.weight_format = setup.weight_format;
    memory.tensor_parallel = tp;
    MemoryEstimate e = estimate_inference(arch, memory);
    return option_error(o.tp > 0 || o.count == 0 ? "--tp" : "--count",
                        fmt::format("the weights ({:.1f} GiB per device at tp{}) and one request's KV cache do not fit "
                                    "on {}x {}", e.weights_bytes / (1u << 30), tp, std::max(1, o.count), accelerator->name));
  }
  const Layout& best = layouts.front();
  const Throughput& t = best.throughput;
  std::string limit = t.batch_limit == "KV cache" ? "KV-cache limit"
                      : t.batch_limit == "TPOT"
                          ? fmt::format("--tpot-ms limit: a larger batch steps past {:g} ms", o.tpot_ms)
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
                 {"layouts", alternatives}, {"tpot_limit_ms", o.tpot_ms > 0 ? json(o.tpot_ms) : json(nullptr)},
                 {"request_lengths", {{"file", o.lengths_file.empty() ? json(nullptr) : json(o.lengths_file)},
                                      {"requests", lengths.requests},
                                      {"mean_input_tokens", lengths.mean_input_tokens},
                                      {"mean_output_tokens", lengths.mean_output_tokens},
                                      {"slot_context_tokens", lengths.slot_context_tokens()},
                                      {"slot_reserved_tokens", lengths.slot_reserved_tokens()}}}});
  text = fmt::format("{} on {}x {} ({} x tp{}): batch {} per replica ({}), step {:.2f} ms, {} output tokens/s, "
                     "{} requests/s ({}-bound)\n", arch.name, best.tp * best.replicas, accelerator->name, best.replicas,
                     best.tp, t.batch, limit, t.step_time_s * 1e3, format_number(best.total_tokens_per_s(), 0),
                     format_number(t.requests_per_s * best.replicas, 2), t.bound);
  if (lengths.requests > 0)
    perf.explain += fmt::format(
        "request lengths: {} requests from {}, mean {:.1f} input and {:.1f} output tokens; a request holds its batch "
        "slot for its output tokens, so a slot reserves {:.1f} KV tokens and attends to {:.1f} on average (at the mean "
        "lengths: {:.1f} and {:.1f})\n",
        lengths.requests, o.lengths_file, lengths.mean_input_tokens, lengths.mean_output_tokens,
        lengths.slot_reserved_tokens(), lengths.slot_context_tokens(),
        lengths.mean_input_tokens + lengths.mean_output_tokens,
        lengths.mean_input_tokens + lengths.mean_output_tokens / 2);
  if (layouts.size() > 1) {
    text += "Layouts on these devices:\n";
    for (const auto& l : layouts)
      text += fmt::format("  {} x tp{}: batch {} ({}), {} output tokens/s\n", l.replicas, l.tp, l.throughput.batch,
                          l.throughput.batch_limit, format_number(l.total_tokens_per_s(), 0));
  }
  return std::nullopt;
}

// One step: prefill or decode at a batch and context, an item step for classic models.
std::optional<Error> one_step(const ModelArch& arch, const Accelerator* accelerator, std::optional<Precision>, const PerfSetup& setup,
                              int tp, int /*replicas*/, const PerfOptions& o, PerfResult& perf) {
  json& result = perf.body;
  std::string& text = perf.text;
  StepTime step;
  double tokens = 0;
  if (arch.kind != ModelKind::decoder) {
    step = item_step(arch, setup, static_cast<double>(o.batch), static_cast<double>(o.context_tokens));
    tokens = static_cast<double>(o.batch * o.context_tokens);
  } else if (o.phase == "prefill") {
    step = prefill_step(arch, setup, static_cast<double>(o.batch), static_cast<double>(o.context_tokens));
    tokens = static_cast<double>(o.batch * o.context_tokens);
  } else if (o.phase == "decode") {
    step = decode_step(arch, setup, static_cast<double>(o.batch), static_cast<double>(o.context_tokens));
    tokens = static_cast<double>(o.batch);
  } else {
    return option_error("--phase", "give --phase prefill or decode (or --max-throughput)");
  }
  result.update({{"step_time_s", step.time_s}, {"batch", o.batch}, {"tokens_per_s", tokens / step.time_s},
                 {"requests_per_s", static_cast<double>(o.batch) / step.time_s}, {"bound", step.bound},
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
                     o.phase.empty() ? "item" : o.phase, accelerator->name, tp, step.time_s * 1e3, step.bound,
                     layers, step.compute_s * 1e3, step.memory_s * 1e3, step.network_s * 1e3, step.overhead_s * 1e3,
                     format_number(tokens / step.time_s, 0));
  return std::nullopt;
}

// Which decode kernel a step assumes and, by query head, at what L2 rate.
std::string decode_attention_explain(const ModelArch& arch, const Accelerator& accelerator, int tp, bool per_query_head,
                                     Precision kv_precision) {
  double group = layer_dims(arch, tp).query_heads_per_kv_head();
  if (arch.mla)
    return fmt::format("decode attention: the layer's compressed latent ({} + {} rotary elements per token) read once "
                       "for the device's {:g} query heads (FlashMLA, FlashInfer MLA)\n",
                       arch.kv_lora_rank, arch.qk_rope_head_dim, static_cast<double>(arch.num_heads) / std::max(1, tp));
  if (!per_query_head)
    return fmt::format("decode attention: grouped, each KV head's cache read once for its {:g} query heads "
                       "(FlashAttention, FlashInfer, XQA; --decode-attention per-query-head for kernels with a "
                       "thread block per query head)\n",
                       group);
  double l2 = measured_l2_read_bytes_per_s(accelerator.name);
  if (l2 <= 0)
    return fmt::format("decode attention: per query head, each KV head's cache read by its {:g} query heads; no "
                       "measured L2 bandwidth for {}, so every read at memory bandwidth\n",
                       group, accelerator.name);
  std::string narrow = precision_bytes(kv_precision) < 2
                           ? fmt::format("; the {} cache's elements stream from L2 at the 16-bit rate (the kernel "
                                         "converts each before its arithmetic)",
                                         precision_name(kv_precision))
                           : "";
  return fmt::format("decode attention: per query head, each KV head's cache read by its {:g} query heads, from "
                     "memory once and the rest from L2 at {:.0f} GB/s (measured: github.com/te42kyfo/gpu-benches "
                     "gpu-l2-cache){}\n",
                     group, l2 / 1e9, narrow);
}

}  // namespace

Result<PerfResult> perf_question(const Catalog& catalog, const ModelArch& arch, const PerfOptions& given) {
  PerfOptions o = given;
  o.precision = arch.precision_or_default(o.precision, false);
  PerfResult perf;
  auto named = catalog.accelerator_named(o.accelerator);
  if (!named.ok()) return option_error("--accelerator", named.error().message);
  const Accelerator* accelerator = named.value();
  auto precision = parse_precision(o.precision);
  if (!precision) return option_error("--precision", "'" + o.precision + "' is not one of " + precision_choices());
  const WeightFormat format = weight_format_of(o.precision);
  if (auto why = unsupported_precision(*accelerator, *precision, PrecisionEngine::serving, format))
    return option_error("--precision", accelerator->name + ": " + *why + " (" + precision_support_source(format) + ")");
  int tp = o.tp > 0 ? o.tp : o.count > 0 ? o.count : 1;
  if (o.count > 0 && o.tp > 0 && o.tp > o.count) return option_error("--tp", "tensor-parallel degree exceeds --count");
  if (arch.kind != ModelKind::generic && arch.num_heads % tp != 0)
    return option_error("--tp", fmt::format("{} attention heads are not divisible by {}", arch.num_heads, tp));
  PerfSetup setup;
  setup.accelerator = accelerator;
  setup.tensor_parallel = tp;
  setup.weight_precision = *precision;
  setup.weight_format = format;
  setup.kv_precision = o.kv_precision.empty() ? (*precision == Precision::fp8 ? Precision::fp8 : Precision::bf16)
                                                 : parse_precision(o.kv_precision).value_or(Precision::bf16);
  setup.efficiency = efficiency_for(*accelerator, o.calibration);
  if (o.step_model == "operators") use_layer_operators(setup, o.calibration);
  auto per_query_head = decode_attention_per_query_head(o.decode_attention);
  if (!per_query_head) return option_error("--decode-attention", unknown_decode_attention_message(o.decode_attention));
  setup.decode_attention_per_query_head = *per_query_head;
  int replicas = o.count > 0 ? std::max(1, o.count / tp) : 1;

  perf.body = {{"model", arch.name}, {"accelerator", accelerator->name}, {"tensor_parallel", tp},
               {"replicas", replicas}, {"precision", o.precision}, {"decode_attention", o.decode_attention},
               {"efficiency", {{"compute", setup.efficiency.compute}, {"compute_8bit", setup.efficiency.compute_8bit},
                               {"memory", setup.efficiency.memory}, {"overhead_per_layer_s", setup.efficiency.overhead_per_layer_s},
                               {"source", setup.efficiency.source}}}};
  std::optional<Error> error = !o.max_throughput ? one_step(arch, accelerator, precision, setup, tp, replicas, o, perf)
                               : arch.kind != ModelKind::decoder ? classic_throughput(arch, accelerator, precision, setup, tp, replicas, o, perf)
                                                                 : llm_throughput(arch, accelerator, precision, setup, tp, replicas, o, perf);
  if (error) return *error;
  if (uses_layer_operators(arch, setup)) {
    perf.explain += fmt::format("by operator: {}; the output head by the GEMM roofline, the KV writes by the roofline below{}\n",
                                setup.operator_basis,
                                std::string(arch.is_moe() ? "; MoE layers: the experts some token picked (routing spread "
                                                            "evenly), each at its share of the tokens, in one fused kernel "
                                                            "per matrix, the router, shared experts, dispatch and combine "
                                                            "at every token"
                                                          : "") +
                                    (arch.mla ? "; multi-head latent attention as vLLM and SGLang decode it: fused query and "
                                                "latent down-projections (replicated on every device), the query "
                                                "up-projection, the key and value up-projections absorbed (16-bit batched "
                                                "GEMMs), attention over the compressed cache, the output projection"
                                              : ""));
    perf.explain += decode_attention_explain(arch, *accelerator, tp, setup.decode_attention_per_query_head, setup.kv_precision);
  }
  perf.explain += fmt::format("efficiency: {} (compute {:.2f}, 8-bit {:.2f}, memory {:.2f}, {:.0f} us per layer)\n"
                              "peak {:.1f} TFLOPS, {:.0f} GB/s ({})\n",
                              setup.efficiency.source, setup.efficiency.compute, setup.efficiency.compute_8bit,
                              setup.efficiency.memory, setup.efficiency.overhead_per_layer_s * 1e6,
                              compute_peak_tflops(*accelerator, *precision), accelerator->memory_gb_per_s, accelerator->source);
  return perf;
}

nlohmann::json to_json(const PerfResult& result) { return json_document("perf", result.body); }

std::string perf_text(const PerfResult& result, bool explain) { return explain ? result.text + result.explain : result.text; }

}  // namespace gw
