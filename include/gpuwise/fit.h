// gpuwise::fit: the memory a model needs per device, term by term (weights, KV cache,
// activations, and for training gradients and optimizer state), and on every accelerator in the
// catalog the fewest devices that hold it with the cheapest offering providing them. The
// question `gpuwise fit MODEL` answers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuwise/answer.h"
#include "gpuwise/catalog.h"

namespace gpuwise {

// Every field left unset takes `gpuwise fit`'s default; errors name the CLI's option.
struct FitQuery {
  std::string model;                 // a preset name (gpuwise models) or a Hugging Face config.json path
  bool train = false;                // training instead of inference
  std::string precision;             // weights: fp32, bf16, fp16, fp8, int8, int4, awq, gptq, fp4, mxfp4;
                                     // empty: the checkpoint's format (gpt-oss: mxfp4), else bf16
  std::string kv_precision;          // empty: bf16 (fp32 with fp32 weights)
  long long batch = 1;               // concurrent sequences (training: the micro-batch)
  long long context_tokens = 0;      // per sequence; 0: min(4096, the model's maximum)
  int tp = 0, pp = 0;                // tensor and pipeline parallel; 0: searched
  int dp = 1, zero = 0;              // training: data parallel and its ZeRO stage
  std::string optimizer = "adamw";   // adamw, adam-8bit, sgd-momentum, sgd
  std::string recompute = "none";    // none, selective, full
  std::string pricing = "on-demand"; // on-demand, spot, reserved-1y, reserved-3y
  bool sequence_parallel = false, no_flash_attention = false, offload_optimizer = false;
  std::optional<double> overhead_gib;            // runtime memory per device (1 GiB)
  std::optional<double> usable_memory_fraction;  // of device memory (0.90)
  std::optional<int> quant_group_size;           // weights per scale for int4/fp4 (128)
  std::optional<long long> prefill_chunk_tokens; // per forward pass in prefill (8192)
  std::optional<int> max_devices;                // per replica (64)
  std::vector<std::string> clouds, regions, accelerators;  // empty: all
  std::string geo;                               // us, europe, asia; empty: all
};

// exit_code() 3 when the model fits nowhere. Throws gpuwise::Error for a query it cannot take
// (an unknown preset, an unreadable config.json, an option out of range). Milliseconds.
Answer fit(const Catalog& catalog, const FitQuery& query);

}  // namespace gpuwise
