#include "model/model_arch.h"

#include <algorithm>
#include <cmath>

namespace gw {

bool ModelArch::is_moe_layer(int layer) const {
  if (!is_moe() || layer < first_dense_layers) return false;
  return (layer - first_dense_layers) % std::max(1, moe_layer_interval) == 0;
}

bool ModelArch::is_sliding_layer(int layer) const {
  if (!sliding_window) return false;
  if (sliding_window_pattern <= 1) return true;
  // Gemma 2 and 3: every n-th layer (1-based) is global, the others local.
  return (layer + 1) % sliding_window_pattern != 0;
}

int ModelArch::q_dim() const {
  if (mla) return num_heads * (qk_nope_head_dim + qk_rope_head_dim);
  return num_heads * head_dim;
}

int ModelArch::kv_dim() const { return num_kv_heads * head_dim; }

double ParamBreakdown::total() const {
  return embedding + lm_head + attention + mlp_dense + mlp_experts + mlp_shared + norms + other;
}

double ParamBreakdown::active() const {
  return total() - mlp_experts + experts_active;
}

ParamBreakdown count_params(const ModelArch& a) {
  ParamBreakdown p;
  if (a.kind == ModelKind::generic) {
    p.other = a.generic_params;
    return p;
  }
  const double h = a.hidden_size;
  const double norm_size = a.norm == NormKind::layernorm ? 2 * h : h;

  p.embedding = static_cast<double>(a.vocab_size) * h +
                static_cast<double>(a.learned_positions) * h +
                static_cast<double>(a.token_type_vocab) * h;
  if (a.patch_size > 0) {
    // ViT: a conv patch embedding (with bias), a class token and one position per patch + 1.
    double patches = std::pow(static_cast<double>(a.image_size) / a.patch_size, 2);
    p.other += static_cast<double>(a.num_channels) * a.patch_size * a.patch_size * h + h + h;
    p.embedding += (patches + 1) * h;
  }
  if (a.kind == ModelKind::encoder && a.token_type_vocab > 0) p.norms += norm_size;  // embedding LN
  if (!a.tied_embeddings && a.kind == ModelKind::decoder) p.lm_head = static_cast<double>(a.vocab_size) * h;
  if (a.has_pooler) p.other += h * h + h;

  for (int layer = 0; layer < a.num_layers; ++layer) {
    // Attention.
    if (a.mla) {
      double qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim;
      if (a.q_lora_rank > 0) {
        p.attention += h * a.q_lora_rank + a.q_lora_rank * static_cast<double>(a.num_heads) * qk_head;
        p.norms += a.q_lora_rank;  // q_a_layernorm
      } else {
        p.attention += h * a.num_heads * qk_head;
      }
      p.attention += h * (a.kv_lora_rank + a.qk_rope_head_dim);  // kv_a_proj_with_mqa
      p.norms += a.kv_lora_rank;                                  // kv_a_layernorm
      p.attention += static_cast<double>(a.kv_lora_rank) * a.num_heads * (a.qk_nope_head_dim + a.v_head_dim);
      p.attention += static_cast<double>(a.num_heads) * a.v_head_dim * h;  // o_proj
    } else {
      double q = a.q_dim(), kv = a.kv_dim();
      p.attention += h * (q + 2 * kv) + q * h;
      if (a.qkv_bias) p.attention += q + 2 * kv;
      if (a.out_bias) p.attention += h;
      if (a.model_type == "gpt_oss") p.attention += a.num_heads;  // attention sinks
    }
    // MLP.
    auto mlp = [&](double width) {
      double matrices = (a.gated_mlp ? 3 : 2) * h * width;
      double biases = a.mlp_bias ? (a.gated_mlp ? 2 * width : width) + h : 0;
      return matrices + biases;
    };
    if (a.is_moe_layer(layer)) {
      double expert = mlp(a.moe_intermediate_size);
      p.mlp_experts += a.num_experts * expert;
      p.experts_active += a.experts_per_token * expert;
      p.mlp_shared += h * a.num_experts;  // router
      if (a.num_shared_experts > 0) {
        int width = a.shared_expert_intermediate_size > 0 ? a.shared_expert_intermediate_size
                                                          : a.num_shared_experts * a.moe_intermediate_size;
        p.mlp_shared += mlp(width);
        if (a.shared_expert_intermediate_size > 0) p.mlp_shared += h;  // Qwen shared-expert gate
      }
      if (a.model_type == "deepseek_v3" || a.model_type == "gpt_oss") p.mlp_shared += a.num_experts;  // router bias
    } else {
      p.mlp_dense += mlp(a.intermediate_size);
    }
    p.norms += a.norms_per_layer * norm_size + 2.0 * a.qk_norm_dim;
  }
  if (a.final_norm) p.norms += norm_size;
  return p;
}

}  // namespace gw
