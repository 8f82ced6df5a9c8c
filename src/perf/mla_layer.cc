#include "perf/mla_layer.h"

#include <algorithm>

#include "perf/step_time.h"

namespace gw {

std::vector<MlaGemm> mla_gemms(const ModelArch& arch, int tensor_parallel) {
  const double tp = std::max(1, tensor_parallel);
  const double heads = arch.num_heads / tp;
  const double q_head = arch.qk_nope_head_dim + arch.qk_rope_head_dim;
  const double latent = arch.kv_lora_rank + arch.qk_rope_head_dim;
  std::vector<MlaGemm> gemms;
  auto add = [&](const char* name, double n, double k, bool sixteen) {
    OperatorShape s;
    s.n = n;
    s.k = k;
    gemms.push_back({name, s, sixteen});
  };
  if (arch.q_lora_rank > 0) {
    add("q_a+kv_a", arch.q_lora_rank + latent, arch.hidden_size, false);
    add("q_b", heads * q_head, arch.q_lora_rank, false);
  } else {
    add("q", heads * q_head, arch.hidden_size, false);
    add("kv_a", latent, arch.hidden_size, false);
  }
  add("w_uk", heads * arch.kv_lora_rank, arch.qk_nope_head_dim, true);
  add("w_uv", heads * arch.v_head_dim, arch.kv_lora_rank, true);
  add("o", arch.hidden_size, heads * arch.v_head_dim, false);
  return gemms;
}

double mla_attention_side_s(const ModelArch& arch, const PerfSetup& setup, double tokens, const GemmPrecision& precision,
                            int* measured, int* roofline) {
  const LayerOperatorModel& model = *setup.layer_operators;
  const OperatorRoofline& fitted = model.roofline(setup.operator_device);
  const double tp = std::max(1, setup.tensor_parallel);
  double seconds = 0;
  int from_roofline = 0;
  for (const MlaGemm& g : mla_gemms(arch, setup.tensor_parallel)) {
    seconds += fitted.gemm_time_s(g.shape, tokens, g.sixteen_bit ? GemmPrecision{} : precision);
    ++from_roofline;
  }
  // Norms of the two latents (16-bit in and out) at the input norm's fitted rate.
  auto norm = [&](double width) {
    OperatorShape s;
    s.bytes_per_token = 4 * width;
    seconds += fitted.time_s(LayerOperator::input_layernorm, s, tokens, width);
    ++from_roofline;
  };
  if (arch.q_lora_rank > 0) norm(arch.q_lora_rank);
  norm(arch.kv_lora_rank);
  OperatorShape rope;
  rope.bytes_per_token = 4.0 * (arch.num_heads / tp + 1) * arch.qk_rope_head_dim;
  seconds += fitted.time_s(LayerOperator::attn_rope, rope, tokens, arch.hidden_size);
  ++from_roofline;
  // Input norm, post-attention norm and residual add: a dense layer's, measured where profiled.
  std::array<bool, kLayerOperators> dense_side{};
  dense_side[static_cast<size_t>(LayerOperator::input_layernorm)] = true;
  dense_side[static_cast<size_t>(LayerOperator::post_attention_layernorm)] = true;
  dense_side[static_cast<size_t>(LayerOperator::add)] = true;
  auto dense = model.layer_time(setup.operator_device, layer_dims(arch, setup.tensor_parallel), tokens, &dense_side, precision);
  seconds += dense.time_s;
  if (measured) *measured += dense.measured_operators;
  if (roofline) *roofline += dense.roofline_operators + from_roofline;
  return seconds;
}

}  // namespace gw
