// A step-time model with its per-model constants computed once, for the simulator's hot loop:
// the same roofline as step_time.h, answered in a few arithmetic operations per step.
#pragma once

#include <atomic>
#include <mutex>

#include <optional>

#include "perf/layer_operators.h"
#include "perf/step_time.h"

namespace gw {

// The time of one serving step of an LLM replica, whatever answers it (the roofline below, or
// measured operator profiles); the simulator asks it once per step.
class LlmStepTimer {
 public:
  virtual ~LlmStepTimer() = default;
  // One step: decode_sequences produce a token each, attending to context_sum tokens in total;
  // prefill_tokens of prompts are processed, attending to prefill_attended token pairs in total
  // (a prompt chunk of c tokens after p done attends to c * p + c^2 / 2); sampled sequences get
  // the output head.
  virtual double step_time_s(double decode_sequences, double context_sum, double prefill_tokens,
                             double prefill_attended, double sampled_sequences) const = 0;
  // KV-cache bytes one token takes on each device of the replica.
  virtual double kv_bytes_per_token() const = 0;
};

// A by-operator step's time by part (sums to step_time_s).
struct StepParts {
  double layers_s = 0;            // the layers' per-token operators (tables and fitted roofline)
  double decode_attention_s = 0;  // attention kernels over the KV cache
  double prefill_attention_s = 0; // attention kernels over prompt chunks
  double head_s = 0;              // the output head's GEMM
  double network_s = 0;           // tensor-parallel collectives
  double other_s = 0;             // launches and the new tokens' KV writes
  double total_s() const { return layers_s + decode_attention_s + prefill_attention_s + head_s + network_s + other_s; }
};

class LlmStepModel final : public LlmStepTimer {
 public:
  LlmStepModel(const ModelArch& arch, const PerfSetup& setup);
  bool by_operator() const { return roofline_ != nullptr; }
  // The step's parts, by operator only (else all in other_s).
  StepParts parts(double decode_sequences, double context_sum, double prefill_tokens, double prefill_attended,
                  double sampled_sequences) const;

  double step_time_s(double decode_sequences, double context_sum, double prefill_tokens, double prefill_attended,
                     double sampled_sequences) const override;

  double kv_bytes_per_token() const override { return kv_bytes_per_token_; }

 private:
  // One layer's operators at `tokens`, remembered per whole token count: a simulation's steps
  // repeat the same counts millions of times, and the answer depends on nothing else.
  double layer_time_s(double tokens) const;
  double average_layer_time_s(double tokens) const;  // uncached
  // Token pairs attended where some layers see a sliding window only (Mistral, Gemma 2, gpt-oss),
  // as llm_step counts them: `attended` capped at `cap` on those layers' share. Exact for a
  // prompt (cap: its tokens x window / 2) and for decoding sequences whose contexts all reach
  // the window or all stay within it (cap: sequences x window); an upper bound otherwise.
  double windowed(double attended, double cap) const {
    return sliding_share_ * std::min(attended, cap) + (1 - sliding_share_) * attended;
  }
  static constexpr size_t kLayerCacheTokens = 16384;
  mutable std::once_flag layer_cache_once_;
  mutable std::unique_ptr<std::atomic<double>[]> layer_cache_;  // 0: not yet computed

  const ModelArch* arch_;
  double flops_per_token_ = 0;       // layer matrices, per device
  double head_flops_ = 0;            // output head per sampled sequence, per device
  double attention_flops_ = 0;       // per attended token pair, per device
  double dense_weight_bytes_ = 0;    // read every step, per device
  double expert_bytes_per_expert_layer_ = 0;
  int moe_layers_ = 0;
  double sliding_share_ = 0;         // of the layers, those that attend within a window
  double window_tokens_ = 0;
  double kv_bytes_per_token_ = 0;    // per device
  double compute_rate_ = 0;          // FLOP/s achieved
  double memory_rate_ = 0;           // bytes/s achieved
  double network_bytes_per_token_ = 0;
  double network_latency_s_ = 0;     // all-reduce latencies per step
  double overhead_s_ = 0;
  // By operator (PerfSetup::layer_operators): the layers' operators, the attention kernels and
  // the head GEMM answer per step; the new tokens' KV writes are the roofline's.
  std::shared_ptr<const LayerOperatorModel> operators_;
  std::optional<LayerOperatorModel::BoundLayer> layer_;  // dense models
  const OperatorRoofline* roofline_ = nullptr;  // attention kernels and the head GEMM
  std::unique_ptr<PerfSetup> moe_setup_;          // by operator, MoE: what layers_by_operator_s needs
  OperatorShape head_shape_;
  double tp_ = 1;
};

}  // namespace gw
