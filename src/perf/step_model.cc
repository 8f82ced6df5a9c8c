#include "perf/step_model.h"

#include <algorithm>
#include <cmath>

#include "model/memory.h"

namespace gw {

LlmStepModel::LlmStepModel(const ModelArch& arch, const PerfSetup& setup) : arch_(&arch) {
  // Derive every constant from the reference implementation, so both always agree: a step of
  // one token and a step of two differ by exactly the per-token costs.
  const double tp = std::max(1, setup.tensor_parallel);
  tp_ = tp;
  ParamBreakdown p = count_params(arch);
  StepTime one = llm_step(arch, setup, 0, 0, 1, 0, 0);
  StepTime two = llm_step(arch, setup, 0, 0, 2, 0, 0);
  flops_per_token_ = two.flops - one.flops;
  const bool by_operator = uses_layer_operators(arch, setup);
  if (by_operator) {
    operators_ = setup.layer_operators;
    if (arch.is_moe() || arch.mla) {
      moe_setup_ = std::make_unique<PerfSetup>(setup);
    } else {
      layer_ = operators_->bind(setup.operator_device, layer_dims(arch, setup.tensor_parallel), nullptr,
                                layer_gemm_precision(setup));
    }
    roofline_ = &operators_->roofline(setup.operator_device);
    head_shape_ = head_shape(arch, setup.tensor_parallel);
    flops_per_token_ = 0;  // the layer matrices, attention and head are the operators'
  }
  head_flops_ = 2.0 * arch.vocab_size * arch.hidden_size / tp;
  double attention_width = arch.mla ? arch.num_heads * (arch.qk_nope_head_dim + arch.qk_rope_head_dim + arch.v_head_dim)
                                    : 2.0 * arch.q_dim();
  attention_flops_ = 2.0 * attention_width * arch.num_layers / tp;
  if (arch.sliding_window) {
    for (int layer = 0; layer < arch.num_layers; ++layer) sliding_share_ += arch.is_sliding_layer(layer);
    sliding_share_ /= std::max(1, arch.num_layers);
    window_tokens_ = static_cast<double>(*arch.sliding_window);
  }
  InferenceMemoryOptions kv;
  kv.tensor_parallel = setup.tensor_parallel;
  kv.kv_precision = setup.kv_precision;
  kv_bytes_per_token_ = estimate_inference(arch, kv).kv_cache_bytes_per_token;
  StepTime empty = llm_step(arch, setup, 0, 0, 0, 0, 0);
  dense_weight_bytes_ = empty.bytes;  // no token: dense weights only (MoE experts hit: none)
  if (by_operator) dense_weight_bytes_ = 0;  // read by the operators
  if (arch.is_moe()) {
    for (int layer = 0; layer < arch.num_layers; ++layer) moe_layers_ += arch.is_moe_layer(layer);
    expert_bytes_per_expert_layer_ =
        p.mlp_experts / std::max(1, moe_layers_) / arch.num_experts * expert_weight_element_bytes(setup) / tp;
  }
  const Accelerator& a = *setup.accelerator;
  double peak = compute_peak_tflops(a, setup.weight_precision);
  bool eight_bit = peak > compute_peak_tflops(a, Precision::bf16) * 1.01;
  compute_rate_ = peak * 1e12 * (eight_bit ? setup.efficiency.compute_8bit : setup.efficiency.compute);
  memory_rate_ = a.memory_gb_per_s * 1e9 * setup.efficiency.memory;
  overhead_s_ = empty.overhead_s;
  if (tp > 1) {
    StepTime net_one = llm_step(arch, setup, 1, 1, 0, 0, 0);
    StepTime net_two = llm_step(arch, setup, 2, 1, 0, 0, 0);
    network_bytes_per_token_ = net_two.network_s - net_one.network_s;  // seconds per token
    network_latency_s_ = net_one.network_s - network_bytes_per_token_;
  }
}

double LlmStepModel::step_time_s(double decode_sequences, double context_sum, double prefill_tokens,
                                 double prefill_attended, double sampled_sequences) const {
  double tokens = decode_sequences + prefill_tokens;
  if (tokens <= 0) return 0;
  double network = tokens > 0 && network_latency_s_ > 0 ? network_latency_s_ + network_bytes_per_token_ * tokens : 0;
  if (roofline_) return parts(decode_sequences, context_sum, prefill_tokens, prefill_attended, sampled_sequences).total_s();
  context_sum = windowed(context_sum, decode_sequences * window_tokens_);
  prefill_attended = windowed(prefill_attended, prefill_tokens * window_tokens_ / 2);
  double flops = flops_per_token_ * tokens + head_flops_ * sampled_sequences +
                 attention_flops_ * (context_sum + prefill_attended);
  double bytes = dense_weight_bytes_ + kv_bytes_per_token_ * (context_sum + tokens);
  if (arch_->is_moe()) {
    double e = arch_->num_experts, k = arch_->experts_per_token;
    bytes += moe_layers_ * e * (1.0 - std::pow(1.0 - k / e, tokens)) * expert_bytes_per_expert_layer_;
  }
  return overhead_s_ + std::max(flops / compute_rate_, bytes / memory_rate_) + network;
}

}  // namespace gw

namespace gw {

double LlmStepModel::average_layer_time_s(double tokens) const {
  // Dense: the bound layer; MoE: every layer by operator (experts at their share), averaged.
  if (!moe_setup_) return layer_->time_s(tokens);
  return layers_by_operator_s(*arch_, *moe_setup_, tokens) / arch_->num_layers;
}

double LlmStepModel::layer_time_s(double tokens) const {
  if (tokens < 1 || tokens >= static_cast<double>(kLayerCacheTokens) || tokens != std::floor(tokens))
    return average_layer_time_s(tokens);
  std::call_once(layer_cache_once_, [this] { layer_cache_.reset(new std::atomic<double>[kLayerCacheTokens]()); });
  std::atomic<double>& slot = layer_cache_[static_cast<size_t>(tokens)];
  double cached = slot.load(std::memory_order_relaxed);
  if (cached > 0) return cached;
  // Threads that race here compute the same value; either store is the answer.
  double seconds = average_layer_time_s(tokens);
  slot.store(seconds, std::memory_order_relaxed);
  return seconds;
}

StepParts LlmStepModel::parts(double decode_sequences, double context_sum, double prefill_tokens, double prefill_attended,
                              double sampled_sequences) const {
  StepParts p;
  double tokens = decode_sequences + prefill_tokens;
  if (tokens <= 0) return p;
  if (!roofline_) {
    p.other_s = step_time_s(decode_sequences, context_sum, prefill_tokens, prefill_attended, sampled_sequences);
    return p;
  }
  // As llm_step by operator: layers, attention kernels, head GEMM, new tokens' KV writes.
  context_sum = windowed(context_sum, decode_sequences * window_tokens_);
  prefill_attended = windowed(prefill_attended, prefill_tokens * window_tokens_ / 2);
  const double layers = arch_->num_layers;
  const AttentionRoofline& a = roofline_->attention;
  p.layers_s = layer_time_s(tokens) * layers;
  p.decode_attention_s =
      layers * a.decode_time_s(decode_sequences, context_sum, kv_bytes_per_token_ / layers, roofline_->bandwidth_bytes_per_s);
  p.prefill_attention_s = layers * a.prefill_time_s(prefill_tokens, prefill_attended, arch_->q_dim() / tp_, roofline_->peak_flops);
  p.head_s = sampled_sequences > 0 ? roofline_->gemm_time_s(head_shape_, sampled_sequences) : 0;
  p.network_s = network_latency_s_ > 0 ? network_latency_s_ + network_bytes_per_token_ * tokens : 0;
  p.other_s = overhead_s_ + kv_bytes_per_token_ * tokens / memory_rate_;
  return p;
}

}  // namespace gw
