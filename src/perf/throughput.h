// Sustained throughput from step times: static batches (a batch runs prefill then every decode
// step together) and continuous batching at the largest batch the KV cache allows.
#pragma once

#include "model/memory.h"
#include "perf/request_lengths.h"
#include "perf/step_time.h"

namespace gw {

struct Throughput {
  double batch = 0;            // concurrent sequences (or items)
  double step_time_s = 0;      // one decode step at that batch (items: one batch)
  double tokens_per_s = 0;     // output tokens per second, whole replica
  double requests_per_s = 0;
  double latency_s = 0;        // one request end to end at that batch
  std::string bound;
  std::string batch_limit;     // what capped the batch: "KV cache" or "max batch"
  double kv_cache_batch = 0;   // sequences the KV cache would hold
};

// A static batch of batch requests with input_tokens and output_tokens each: prefill, then
// output_tokens - 1 decode steps at a growing context.
Throughput static_batch_throughput(const ModelArch& arch, const PerfSetup& setup, double batch, double input_tokens,
                                   double output_tokens);

// The KV cache's room on each device of a tp-way replica: the usable share of device memory
// (kUsableMemoryFraction) less weights, activations and runtime overhead, as plans size it; or,
// with share_of_free > 0, that share of what weights, activations and overhead leave (how
// TensorRT-LLM's kv_cache_free_gpu_mem_fraction sizes it). <= 0 when the weights do not fit.
// memory: the estimate it came from.
double kv_cache_free_bytes(const ModelArch& arch, const Accelerator& accelerator, Precision weights, Precision kv,
                           int tensor_parallel, MemoryEstimate* memory = nullptr, double share_of_free = 0,
                           WeightFormat format = WeightFormat::plain);

// Continuous batching at the largest batch that fits: KV cache for batch x (input + output)
// within free_bytes (device memory left after weights, activations and overhead), at most
// max_batch. Each step decodes the batch and prefills the prompts of the requests that replace
// finished ones (input/output tokens per step).
Throughput continuous_max_throughput(const ModelArch& arch, const PerfSetup& setup, double kv_bytes_per_token,
                                     double free_bytes, double input_tokens, double output_tokens, double max_batch);
// The same over requests whose lengths vary: each slot reserves and attends to its requests'
// length-biased averages (RequestLengths), and prefill attention grows with the token-weighted
// prompt length.
Throughput continuous_max_throughput(const ModelArch& arch, const PerfSetup& setup, double kv_bytes_per_token,
                                     double free_bytes, const RequestLengths& lengths, double max_batch);
// The same with every step, the time between a request's output tokens (TPOT), at most
// max_step_s: the largest batch whose steady-state step fits, as a server bounded on TPOT runs
// (MLPerf's Server scenario bounds its p99). batch_limit "TPOT" where that binds; batch 0 where
// even one sequence's step is longer; max_step_s <= 0: no bound (continuous_max_throughput).
Throughput continuous_max_throughput_within_tpot(const ModelArch& arch, const PerfSetup& setup,
                                                 double kv_bytes_per_token, double free_bytes,
                                                 const RequestLengths& lengths, double max_batch, double max_step_s);

}  // namespace gw
