// gpuwise::perf: one engine step's time on given hardware (prefill or decode at a batch and
// context, by operator where measured profiles exist), or the best sustained throughput on a
// device count with every tensor-parallel layout tried and the binding limit named. The question
// `gpuwise perf MODEL --accelerator A` answers.
#pragma once

#include <string>

#include "gpuwise/answer.h"
#include "gpuwise/catalog.h"

namespace gpuwise {

struct PerfQuery {
  std::string model;                 // a preset name or a config.json path
  std::string accelerator;           // required
  int count = 0;                     // devices; 0: one (max_throughput: tp's)
  int tp = 0;                        // tensor parallel; 0: searched with count
  std::string precision, kv_precision;  // precision empty: the checkpoint's format, else bf16; kv empty: bf16
  std::string phase;                 // prefill, decode; empty: both
  long long batch = 1, context_tokens = 1024;
  bool max_throughput = false;       // the best sustained output tokens/s on `count` devices
  double input_tokens = 0, output_tokens = 0;  // per request, for max_throughput; 0: the defaults
  // For max_throughput, instead of input_tokens and output_tokens: a CSV of requests' lengths
  // (input_length, output_length; or an Azure trace's ContextTokens, GeneratedTokens), whose mix
  // the batch runs (long answers hold their slots longer than a mean-length request would).
  std::string lengths_path;
  int max_batch = 256;
  double tpot_ms = 0;                // for max_throughput: each step at most this (ms); 0: no bound
  std::string step_model = "operators";  // operators or roofline
  // grouped (one read of each KV head per group: FlashAttention, FlashInfer, XQA) or
  // per-query-head (a thread block per query head: TensorRT-LLM before XQA, FasterTransformer)
  std::string decode_attention = "grouped";
  std::string calibration_path;      // from `gpuwise calibrate`; empty: the catalog's
};

// to_markdown() and to_html() throw: perf has only the table format. Throws gpuwise::Error for a
// query it cannot take (an unknown model or accelerator, a layout that does not fit).
Answer perf(const Catalog& catalog, const PerfQuery& query);

}  // namespace gpuwise
