#include "plan/fit_question.h"

#include <fmt/format.h>

#include <algorithm>

#include "catalog/region_names.h"
#include "core/text.h"

namespace gw {

Result<FitResult> fit_question(const Catalog& catalog, const ModelArch& arch, const FitOptions& given) {
  FitOptions o = given;
  o.precision = arch.precision_or_default(o.precision, o.train);
  FitRequest request;
  request.mode = o.train ? FitMode::training : FitMode::inference;
  request.usable_fraction = o.usable_fraction;
  request.max_devices = o.max_devices;
  auto pricing = parse_pricing(o.pricing);
  if (!pricing) return option_error("--pricing", "'" + o.pricing + "' is not one of on-demand, spot, reserved-1y, reserved-3y");
  request.pricing = *pricing;
  request.offering_filter.clouds = split_lists(o.clouds);
  request.offering_filter.regions = split_lists(o.regions);
  for (const auto& cloud : request.offering_filter.clouds)
    if (auto why = cloud_name_problem(catalog, cloud)) return option_error("--cloud", *why);
  for (const auto& region : request.offering_filter.regions)
    if (auto why = region_prefix_problem(catalog, region, request.offering_filter.clouds)) return option_error("--region", *why);
  request.offering_filter.geo = o.geo;
  request.accelerators = split_lists(o.accelerators);
  for (const auto& name : request.accelerators) {
    auto named = catalog.accelerator_named(name);
    if (!named.ok()) return option_error("--accelerator", named.error().message);
  }

  long long max_context = arch.max_position_embeddings > 0 ? arch.max_position_embeddings : (1LL << 24);
  long long context_tokens = o.context > 0 ? o.context : std::min<long long>(4096, max_context);
  if (arch.kind != ModelKind::generic && context_tokens > max_context)
    return option_error("--context", fmt::format("{} tokens exceed the model's max_position_embeddings ({})", context_tokens, max_context));
  request.parallelism_fixed = o.tp > 0 || o.pp > 0;
  int tp = std::max(1, o.tp), pp = std::max(1, o.pp);
  if (arch.kind != ModelKind::generic) {
    if (arch.num_heads % tp != 0)
      return option_error("--tp", fmt::format("{} attention heads are not divisible by tensor-parallel degree {}", arch.num_heads, tp));
    if (pp > arch.num_layers)
      return option_error("--pp", fmt::format("{} pipeline stages exceed the model's {} layers", pp, arch.num_layers));
  }

  auto parsed_weights = parse_precision(o.precision);
  if (!parsed_weights) return option_error("--precision", "'" + o.precision + "' is not one of " + precision_choices());
  Precision weights = *parsed_weights;
  if (o.train) {
    if (weights != Precision::bf16 && weights != Precision::fp16 && weights != Precision::fp32 && weights != Precision::tf32)
      return option_error("--precision", "training precision must be bf16, fp16, fp32 or tf32 (quantized training is not modelled)");
    auto& t = request.training;
    t.precision = weights;
    auto optimizer = parse_optimizer(o.optimizer);
    if (!optimizer) return option_error("--optimizer", "'" + o.optimizer + "' is not one of adamw, adam-8bit, sgd-momentum, sgd");
    t.optimizer = *optimizer;
    auto recompute = parse_recompute(o.recompute);
    if (!recompute) return option_error("--recompute", "'" + o.recompute + "' is not one of none, selective, full");
    t.recompute = *recompute;
    t.zero_stage = o.zero;
    t.data_parallel = o.dp;
    t.tensor_parallel = tp;
    t.pipeline_parallel = pp;
    t.sequence_parallel = o.sequence_parallel;
    t.flash_attention = !o.no_flash;
    t.micro_batch = o.batch;
    t.sequence_length = context_tokens;
    t.offload_optimizer = o.offload;
    t.overhead_gib = o.overhead_gib;
  } else {
    auto& i = request.inference;
    i.weight_precision = weights;
    i.weight_format = weight_format_of(o.precision);
    auto kv = o.kv_precision.empty() ? std::optional<Precision>(weights == Precision::fp32 ? Precision::fp32 : Precision::bf16)
                                     : parse_precision(o.kv_precision);
    if (!kv) return option_error("--kv-precision", "'" + o.kv_precision + "' is not one of " + precision_choices());
    i.kv_precision = *kv;
    i.activation_precision = weights == Precision::fp32 ? Precision::fp32 : Precision::bf16;
    i.batch = o.batch;
    i.context = context_tokens;
    i.tensor_parallel = tp;
    i.pipeline_parallel = pp;
    i.quant_group_size = o.quant_group_size;
    i.prefill_chunk_tokens = o.prefill_chunk;
    i.overhead_gib = o.overhead_gib;
  }

  FitResult result;
  result.estimate = estimate_for(arch, request, tp, pp);
  result.fits = fit_accelerators(catalog, arch, request);
  result.fitting = static_cast<int>(std::count_if(result.fits.begin(), result.fits.end(), [](const AcceleratorFit& f) { return f.fits; }));
  result.arch = arch;
  result.options = o;
  result.request = std::move(request);
  result.tensor_parallel = tp;
  result.pipeline_parallel = pp;
  result.context_tokens = context_tokens;
  return result;
}

}  // namespace gw
