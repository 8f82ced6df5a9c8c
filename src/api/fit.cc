#include "gpuwise/fit.h"

#include "api/handles.h"
#include "plan/fit_question.h"
#include "plan/fit_report.h"

namespace gpuwise {

Answer fit(const Catalog& catalog, const FitQuery& query) {
  gw::FitOptions o;
  o.train = query.train;
  o.precision = query.precision;
  o.kv_precision = query.kv_precision;
  o.batch = query.batch;
  o.context = query.context_tokens;
  o.tp = query.tp;
  o.pp = query.pp;
  o.dp = query.dp;
  o.zero = query.zero;
  o.optimizer = query.optimizer;
  o.recompute = query.recompute;
  o.pricing = query.pricing;
  o.sequence_parallel = query.sequence_parallel;
  o.no_flash = query.no_flash_attention;
  o.offload = query.offload_optimizer;
  if (query.overhead_gib) o.overhead_gib = *query.overhead_gib;
  if (query.usable_memory_fraction) o.usable_fraction = *query.usable_memory_fraction;
  if (query.quant_group_size) o.quant_group_size = *query.quant_group_size;
  if (query.prefill_chunk_tokens) o.prefill_chunk = *query.prefill_chunk_tokens;
  if (query.max_devices) o.max_devices = *query.max_devices;
  o.clouds = query.clouds;
  o.regions = query.regions;
  o.accelerators = query.accelerators;
  o.geo = query.geo;
  auto held = catalog.impl();  // the result points into it
  auto result = std::make_shared<const gw::FitResult>(
      gw::value_or_throw(gw::fit_question(held->catalog, gw::public_model(query.model), o)));
  Answer::Impl a;
  a.command = "fit";
  a.body = gw::to_json(*result);
  a.exit_code = result->exit_code();
  a.text = [held, result](bool explain) { return gw::fit_report(*result, explain).text; };
  a.markdown = [held, result](bool explain) { return gw::fit_report(*result, explain).markdown; };
  a.document = [held, result] { return gw::fit_report(*result, false).document; };
  return Answer(std::make_shared<const Answer::Impl>(std::move(a)));
}

}  // namespace gpuwise
