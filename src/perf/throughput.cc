#include "perf/throughput.h"

#include <algorithm>
#include <cmath>

#include "core/serving_defaults.h"
#include "model/kv_layer_groups.h"

namespace gw {

Throughput static_batch_throughput(const ModelArch& arch, const PerfSetup& setup, double batch, double input_tokens,
                                   double output_tokens) {
  Throughput t;
  t.batch = batch;
  StepTime prefill = prefill_step(arch, setup, batch, input_tokens);
  double total = prefill.time_s;
  double steps = std::max(0.0, output_tokens - 1);
  // Decode time is linear in context, so the mid-point context gives the sum exactly.
  StepTime decode = decode_step(arch, setup, batch, input_tokens + output_tokens / 2.0);
  total += steps * decode.time_s;
  t.step_time_s = decode.time_s;
  t.latency_s = total;
  t.tokens_per_s = batch * output_tokens / total;
  t.requests_per_s = batch / total;
  t.bound = steps * decode.time_s > prefill.time_s ? decode.bound : prefill.bound;
  return t;
}

double kv_cache_free_bytes(const ModelArch& arch, const Accelerator& accelerator, Precision weights, Precision kv,
                           int tensor_parallel, MemoryEstimate* memory, double share_of_free, WeightFormat format) {
  InferenceMemoryOptions options;
  options.weight_precision = weights;
  options.weight_format = format;
  options.kv_precision = kv;
  options.tensor_parallel = tensor_parallel;
  options.context = 2048;  // activations sized for a 2,048-token chunk
  options.batch = 1;
  MemoryEstimate e = estimate_inference(arch, options);
  if (memory) *memory = e;
  double taken = e.weights_bytes + e.activation_bytes + e.overhead_bytes;
  if (share_of_free > 0) return share_of_free * (accelerator.memory_bytes() - taken);
  return accelerator.memory_bytes() * kUsableMemoryFraction - taken;
}

Throughput continuous_max_throughput(const ModelArch& arch, const PerfSetup& setup, double kv_bytes_per_token,
                                     double free_bytes, double input_tokens, double output_tokens, double max_batch) {
  return continuous_max_throughput(arch, setup, kv_bytes_per_token, free_bytes,
                                   RequestLengths::fixed(input_tokens, output_tokens), max_batch);
}

Throughput continuous_max_throughput(const ModelArch& arch, const PerfSetup& setup, double kv_bytes_per_token,
                                     double free_bytes, const RequestLengths& lengths, double max_batch) {
  Throughput t;
  // Sliding-window layers keep only their window's blocks where vLLM's hybrid allocator runs.
  const double reserved = lengths.slot_reserved_tokens();
  double per_sequence =
      kv_bytes_per_token * (setup.accelerator && hybrid_kv_cache_manager(setup.accelerator->vendor, false)
                                ? kv_layer_groups(arch, kKvBlockTokens).all_layer_tokens(reserved, kKvBlockTokens)
                                : reserved);
  double kv_batch = per_sequence > 0 ? std::floor(free_bytes / per_sequence) : 1e300;
  double batch = std::clamp(kv_batch, 0.0, max_batch);
  t.kv_cache_batch = kv_batch;
  t.batch_limit = kv_batch <= max_batch ? "KV cache" : "max batch";
  if (batch < 1) return t;
  t.batch = batch;
  // In steady state every step finishes batch/output requests and admits as many, whose prompts
  // are prefilled (chunked) alongside the decode.
  double output_tokens = std::max(1.0, lengths.mean_output_tokens);
  double admitted = batch / output_tokens;
  StepTime step = llm_step(arch, setup, batch, lengths.slot_context_tokens(), admitted * lengths.mean_input_tokens,
                           admitted, lengths.prefill_context_tokens());
  t.step_time_s = step.time_s;
  t.tokens_per_s = batch / step.time_s;
  t.requests_per_s = t.tokens_per_s / output_tokens;
  t.latency_s = lengths.mean_output_tokens * step.time_s;
  t.bound = step.bound;
  return t;
}

Throughput continuous_max_throughput_within_tpot(const ModelArch& arch, const PerfSetup& setup,
                                                 double kv_bytes_per_token, double free_bytes,
                                                 const RequestLengths& lengths, double max_batch, double max_step_s) {
  Throughput widest = continuous_max_throughput(arch, setup, kv_bytes_per_token, free_bytes, lengths, max_batch);
  if (widest.batch < 1 || max_step_s <= 0 || widest.step_time_s <= max_step_s) return widest;
  // A step grows with the batch (more decodes, more prompts admitted), so the largest batch
  // within the bound is found by bisection over whole sequences.
  auto at = [&](double batch) {
    return continuous_max_throughput(arch, setup, kv_bytes_per_token, free_bytes, lengths, batch);
  };
  Throughput fits = at(1);
  if (fits.step_time_s > max_step_s) {
    Throughput none = widest;
    none.batch = none.tokens_per_s = none.requests_per_s = 0;
    none.batch_limit = "TPOT";
    return none;
  }
  double lo = 1, hi = widest.batch;  // step(lo) fits, step(hi) does not
  while (hi - lo > 1) {
    double mid = std::floor((lo + hi) / 2);
    Throughput t = at(mid);
    if (t.step_time_s <= max_step_s) {
      lo = mid;
      fits = t;
    } else {
      hi = mid;
    }
  }
  fits.batch_limit = "TPOT";
  fits.kv_cache_batch = widest.kv_cache_batch;
  return fits;
}

}  // namespace gw
