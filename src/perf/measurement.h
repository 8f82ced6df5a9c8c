// Measured latencies (CSV: accelerator, model, phase, batch, tokens, latency_ms, and optionally
// precision, tp, output_tokens, kv_memory_fraction, decode_attention, lengths, tpot_ms), the step-time model's prediction for each, and the fit of
// per-accelerator efficiency factors to them (`gpuwise calibrate`).
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "model/model_arch.h"
#include "perf/efficiency.h"
#include "perf/request_lengths.h"

namespace gw {

struct Measurement {
  int line = 0;
  std::string accelerator;  // canonical catalog name
  std::string model;        // preset name or config path
  Precision precision = Precision::bf16;
  int tensor_parallel = 1;
  // prefill, decode, static (a batch of `batch` requests run together, latency_ms for all of it),
  // items, throughput (requests of `tokens` in and `output_tokens` out at maximum load with
  // continuous batching, at most `batch` at once; latency_ms = 1,000 / output tokens per second of
  // one tp-way replica)
  std::string phase;
  double batch = 1;
  double tokens = 0;         // prompt (prefill, static, throughput), context (decode), tokens per item (items)
  double output_tokens = 0;  // static, throughput
  double latency_ms = 0;
  // Throughput rows: the share of the memory left after weights, activations and runtime that the
  // engine gives its KV cache (TensorRT-LLM's kv_cache_free_gpu_mem_fraction); 0: as plans size it.
  double kv_memory_fraction = 0;
  // The engine's decode attention kernel (decode_attention column): per-query-head or grouped
  // (empty: grouped). See PerfSetup::decode_attention_per_query_head.
  bool decode_attention_per_query_head = false;
  // Throughput rows: the requests' lengths (lengths column: a CSV of input_length, output_length
  // per request, read relative to the working directory), whose means must agree with tokens and
  // output_tokens within 2%; without it (requests == 0), every request has the row's tokens and
  // output_tokens.
  std::string lengths_file;
  RequestLengths lengths;
  // Throughput rows measured under a bound on the time between output tokens (tpot_ms column:
  // MLPerf's Server scenario bounds its p99): the engine's batch is the largest whose step fits;
  // 0: no bound (Offline, trtllm-bench).
  double tpot_limit_ms = 0;
  std::string source;
};

// Reads and validates a measurements CSV; models and accelerators must resolve.
Result<std::vector<Measurement>> read_measurements(std::string_view text, const std::string& file,
                                                   const Catalog& catalog);

// The model's prediction for one measurement, in milliseconds; by_operator: 16-bit dense LLM
// layers are timed by operator (perf/layer_operators.h), as plans time them.
double predict_latency_ms(const Measurement& m, const ModelArch& arch, const Accelerator& accelerator,
                          const EfficiencyFactors& factors, bool by_operator = false);

struct FitResult {
  EfficiencyFactors factors;
  double median_abs_error = 0;  // relative, on the fitted measurements
  int measurements = 0;
};

// Fits compute and memory efficiency and the per-layer overhead to one accelerator's
// measurements (minimising the mean squared log error, by coordinate search within physical
// bounds). models[i] is the architecture of measurements[i].
FitResult fit_efficiency(const std::vector<Measurement>& measurements, const std::vector<ModelArch>& models,
                         const Accelerator& accelerator, EfficiencyFactors start);

// Calibrates every accelerator present in the measurements.
Result<Calibration> calibrate(const std::vector<Measurement>& measurements, const Catalog& catalog);

}  // namespace gw
