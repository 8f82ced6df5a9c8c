// The perf question (`gpuwise perf MODEL --accelerator A`): one step's time on given hardware
// (prefill or decode at a batch and context, by operator where profiles exist), or the best
// sustained throughput on a device count, every tensor-parallel layout tried, the binding limit named.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "catalog/catalog.h"
#include "model/model_arch.h"
#include "perf/efficiency.h"

namespace gw {

// What `gpuwise perf` takes; errors name its options ("--tp").
struct PerfOptions {
  std::string accelerator, precision, kv_precision, phase, step_model = "operators";  // precision empty: the checkpoint's (bf16)
  std::string decode_attention = "grouped";  // or per-query-head (PerfSetup::decode_attention_per_query_head)
  int count = 0, tp = 0;                 // devices and tensor parallel; 0: one device, or searched with count
  long long batch = 1, context_tokens = 1024;
  bool max_throughput = false;
  double input_tokens = 0, output_tokens = 0;
  std::string lengths_file;  // with max_throughput, instead of input/output tokens: a CSV of requests' lengths
  int max_batch = 256;
  double tpot_ms = 0;  // with max_throughput: every step (time per output token) at most this; 0: no bound
  const Calibration* calibration = nullptr;  // not owned; must outlive the call
};

// Written in one pass, as the figures are found: the JSON body, the text, and what --explain adds.
struct PerfResult {
  nlohmann::json body;
  std::string text;
  std::string explain;
};

Result<PerfResult> perf_question(const Catalog& catalog, const ModelArch& arch, const PerfOptions& options);

// The JSON `gpuwise perf --format json` prints; the text with or without the explanation.
nlohmann::json to_json(const PerfResult& result);
std::string perf_text(const PerfResult& result, bool explain);

}  // namespace gw
