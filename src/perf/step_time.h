// How long one forward step takes on an accelerator: a roofline (compute, memory, network) with
// achievable-efficiency factors. LLM steps mix decode sequences and prefill tokens, as
// continuous batching does; encoder and CNN models run one batch of items per step.
#pragma once

#include <memory>
#include <string>

#include "catalog/accelerator.h"
#include "core/precision.h"
#include "model/model_arch.h"
#include "perf/efficiency.h"

namespace gw {

class LayerOperatorModel;

struct PerfSetup {
  const Accelerator* accelerator = nullptr;
  int tensor_parallel = 1;
  Precision weight_precision = Precision::bf16;
  WeightFormat weight_format = WeightFormat::plain;  // mxfp4: a MoE model's routed experts only, the rest bf16
  Precision kv_precision = Precision::bf16;
  EfficiencyFactors efficiency;
  // Per-layer operators (norms, projections, MLP, add) from measured profiles and a roofline
  // fitted to them (perf/layer_operators.h), asked with operator_device; null: the whole-step
  // roofline. Used for dense LLMs; the profiles are fp16, so 8- and 4-bit GEMMs take the fitted
  // roofline at their precision's bytes and peak.
  std::shared_ptr<const LayerOperatorModel> layer_operators;
  std::string operator_device;
  std::string operator_basis;  // what answers, for --explain
  // Decode attention by a kernel that runs one thread block per query head (engines before
  // grouped-query kernels: TensorRT-LLM before XQA, FasterTransformer); false: one read of each
  // KV head per group, as FlashAttention, FlashInfer and XQA do.
  bool decode_attention_per_query_head = false;
};

struct StepTime {
  double time_s = 0;
  double compute_s = 0;   // FLOPs / (peak x efficiency)
  double memory_s = 0;    // bytes / (bandwidth x efficiency)
  double network_s = 0;   // tensor-parallel all-reduces
  double overhead_s = 0;  // per-layer launch and scheduling cost
  double layer_operators_s = 0;  // the layers' per-token operators, when PerfSetup has them
  double attention_s = 0;        // by operator: the attention kernels of every layer
  double head_s = 0;             // by operator: the output head's GEMM
  int measured_operators = 0, roofline_operators = 0;  // of one layer: from tables, from the roofline
  double flops = 0;       // per device
  double bytes = 0;       // per device
  std::string bound;      // compute, memory or network
};

// The peak rate (TFLOPS) a step runs at: fp8 weights use fp8 tensor cores where the hardware has
// them, int8 uses int8 (W8A8), 4-bit weights are dequantized to 16-bit (W4A16).
double compute_peak_tflops(const Accelerator& accelerator, Precision weight_precision);

// Whether llm_step times this model's layers by operator (setup has a model, an LLM without
// multi-head latent attention, 16-bit, 8-bit or 4-bit weights).
bool uses_layer_operators(const ModelArch& arch, const PerfSetup& setup);
// By operator: every layer's per-token operators at `tokens`, summed over the layers (needs
// uses_layer_operators). A dense layer takes its nine operators at every token. An MoE layer
// takes its attention side, router and shared experts at every token, and its routed experts
// each at its share of the tokens: distinct_experts(tokens) experts hit, tokens x k / that many
// tokens each (routing spread evenly), every expert's MLP split over the tensor-parallel group;
// its dispatch and combine (each token to its k experts and back) move every token on every device.
// measured / roofline: of one layer's operators, how many a table answered, how many the roofline.
double layers_by_operator_s(const ModelArch& arch, const PerfSetup& setup, double tokens, int* measured = nullptr,
                            int* roofline = nullptr);
// The layers' GEMM precision by operator (W8A8 where the device has 8-bit tensor cores).
struct GemmPrecision;
GemmPrecision layer_gemm_precision(const PerfSetup& setup);
// The bytes of the layers' dense matrices on one device (what the operators read by operator).
double layer_weight_bytes(const ModelArch& arch, const PerfSetup& setup);
// Bytes per weight of a MoE model's routed experts (with their scales).
double expert_weight_element_bytes(const PerfSetup& setup);

// The output head as a GEMM on one device (vocabulary share x hidden).
struct OperatorShape;
OperatorShape head_shape(const ModelArch& arch, int tensor_parallel);

// One step of an LLM: decode_sequences each produce one token having context_tokens in their
// cache, plus prefill_tokens of prompts (prefill_sequences prompts, each prefill_context long on
// average when they finish) in the same batch.
StepTime llm_step(const ModelArch& arch, const PerfSetup& setup, double decode_sequences, double context_tokens,
                  double prefill_tokens, double prefill_sequences, double prefill_context);

// Prefill of batch prompts of prompt_tokens each, in one step.
StepTime prefill_step(const ModelArch& arch, const PerfSetup& setup, double batch, double prompt_tokens);
// One decode step of batch sequences at context_tokens.
StepTime decode_step(const ModelArch& arch, const PerfSetup& setup, double batch, double context_tokens);
// One batch of items for encoder, CNN and generic models (tokens per item for encoders).
StepTime item_step(const ModelArch& arch, const PerfSetup& setup, double batch, double tokens_per_item);

}  // namespace gw
