// VRAM need of a model per device: weights, KV cache, activations, gradients, optimizer state,
// master weights and runtime overhead, for inference and for training, under tensor, pipeline
// and data (ZeRO) parallelism. Every term carries the formula it came from, for --explain.
#pragma once

#include <string>
#include <vector>

#include "core/serving_defaults.h"
#include "core/precision.h"
#include "model/model_arch.h"

namespace gw {

enum class Optimizer { adamw, adam_8bit, sgd_momentum, sgd };
enum class Recompute { none, selective, full };

std::string_view optimizer_name(Optimizer optimizer);
std::optional<Optimizer> parse_optimizer(std::string_view text);
std::string_view recompute_name(Recompute recompute);
std::optional<Recompute> parse_recompute(std::string_view text);

struct InferenceMemoryOptions {
  Precision weight_precision = Precision::bf16;
  WeightFormat weight_format = WeightFormat::plain;  // awq or gptq: which kernels must run it
  Precision kv_precision = Precision::bf16;
  Precision activation_precision = Precision::bf16;
  long long batch = 1;               // concurrent sequences (or items)
  long long context = 4096;          // tokens per sequence: prompt plus output
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int quant_group_size = 128;        // int4/fp4: one fp16 scale and a 4-bit zero per group
  long long prefill_chunk_tokens = kActivationPeakTokens;  // tokens processed in one forward pass
  int kv_block_tokens = 16;          // paged KV cache block (vLLM default)
  double overhead_gib = kRuntimeOverheadGib;  // CUDA context, library workspaces, CUDA graphs
};

struct TrainingMemoryOptions {
  Precision precision = Precision::bf16;  // weights and activations; 16-bit means mixed precision
  Optimizer optimizer = Optimizer::adamw;
  int zero_stage = 0;               // 0-3; FSDP full shard is 3, grad-op shard is 2
  int data_parallel = 1;
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::none;
  bool flash_attention = true;
  long long micro_batch = 1;
  long long sequence_length = 4096;
  bool offload_optimizer = false;   // ZeRO-Offload: optimizer state and master weights in host RAM
  double overhead_gib = kRuntimeOverheadGib;
};

struct MemoryTerm {
  std::string name;     // JSON key, e.g. "weights_bytes"
  double bytes = 0;     // per device
  std::string formula;  // how it was computed, with the numbers
};

struct MemoryEstimate {
  double params = 0;          // whole model
  double active_params = 0;   // per token (MoE)
  double weights_bytes = 0;   // all figures below are per device
  double kv_cache_bytes_per_token = 0;
  double kv_cache_bytes = 0;
  double activation_bytes = 0;
  double gradient_bytes = 0;
  double optimizer_bytes = 0;
  double master_weight_bytes = 0;
  double overhead_bytes = 0;
  double host_offload_bytes = 0;  // moved to host RAM (not in the total)
  double total_bytes_per_device = 0;
  std::vector<MemoryTerm> terms;
  std::vector<std::string> assumptions;
};

MemoryEstimate estimate_inference(const ModelArch& arch, const InferenceMemoryOptions& options);
MemoryEstimate estimate_training(const ModelArch& arch, const TrainingMemoryOptions& options);

// Activation bytes one transformer layer stores for backward, after Korthikanti et al. 2022,
// "Reducing Activation Recomputation in Large Transformer Models", Table 2, generalised to
// GQA, gated MLPs, MoE and FlashAttention. For GPT (MHA, 4h MLP, dropout, no FlashAttention,
// no parallelism) it equals s*b*h*(34 + 5*a*s/h).
double training_activation_bytes_per_layer(const ModelArch& arch, const TrainingMemoryOptions& options);

}  // namespace gw
