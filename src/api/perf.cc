#include "gpuwise/perf.h"

#include "api/handles.h"
#include "perf/perf_question.h"

namespace gpuwise {

Answer perf(const Catalog& catalog, const PerfQuery& query) {
  gw::PerfOptions o;
  o.accelerator = query.accelerator;
  o.precision = query.precision;
  o.kv_precision = query.kv_precision;
  o.phase = query.phase;
  o.step_model = query.step_model;
  o.decode_attention = query.decode_attention;
  o.count = query.count;
  o.tp = query.tp;
  o.batch = query.batch;
  o.context_tokens = query.context_tokens;
  o.max_throughput = query.max_throughput;
  o.input_tokens = query.input_tokens;
  o.output_tokens = query.output_tokens;
  o.lengths_file = query.lengths_path;
  o.max_batch = query.max_batch;
  o.tpot_ms = query.tpot_ms;
  std::optional<gw::Calibration> calibration = gw::load_public_calibration(query.calibration_path);
  if (calibration) o.calibration = &*calibration;
  auto result = std::make_shared<const gw::PerfResult>(
      gw::value_or_throw(gw::perf_question(catalog.impl()->catalog, gw::public_model(query.model), o)));
  Answer::Impl a;
  a.command = "perf";
  a.body = gw::to_json(*result);
  a.text = [result](bool explain) { return gw::perf_text(*result, explain); };
  return Answer(std::make_shared<const Answer::Impl>(std::move(a)));
}

}  // namespace gpuwise
