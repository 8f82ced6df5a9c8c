// A model's architecture as far as memory and compute depend on it: transformer shapes
// (attention kind, MoE, MLA, sliding windows) or, for other models, parameters and per-item cost.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gw {

enum class ModelKind {
  decoder,  // autoregressive LLM with a KV cache
  encoder,  // BERT, ViT: one pass per item, no KV cache
  generic   // CNNs, tree ensembles: parameters plus FLOPs and bytes per item
};

enum class NormKind { rmsnorm, layernorm };

struct ModelArch {
  std::string name;        // preset name or config path
  std::string model_type;  // Hugging Face model_type, or "generic"
  ModelKind kind = ModelKind::decoder;

  // Transformer shape.
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int num_kv_heads = 0;  // == num_heads for MHA, 1 for MQA, in between for GQA
  int head_dim = 0;
  int intermediate_size = 0;  // dense MLP width
  int vocab_size = 0;
  int max_position_embeddings = 0;
  int learned_positions = 0;   // rows of a learned position table (GPT-2, BERT); 0 with RoPE
  int token_type_vocab = 0;    // BERT segment embeddings
  bool tied_embeddings = false;
  bool gated_mlp = true;       // SwiGLU/GeGLU: gate, up and down matrices
  bool qkv_bias = false;
  bool out_bias = false;
  bool mlp_bias = false;
  NormKind norm = NormKind::rmsnorm;
  int norms_per_layer = 2;
  bool parallel_attention = false;  // Falcon-7B: one norm feeds attention and MLP
  double dropout = 0;               // residual/attention dropout in training (masks are stored)
  bool has_pooler = false;          // BERT pooler
  bool final_norm = true;           // a norm after the last layer (not in BERT)
  int qk_norm_dim = 0;              // per-head q/k norms (Qwen3): weights per layer = 2 x this

  // Vision transformer patch embedding.
  int image_size = 0;
  int patch_size = 0;
  int num_channels = 0;

  // Mixture of experts.
  int num_experts = 0;  // routed experts; 0 for dense models
  int experts_per_token = 0;
  int moe_intermediate_size = 0;
  int num_shared_experts = 0;
  int shared_expert_intermediate_size = 0;
  int first_dense_layers = 0;  // DeepSeek first_k_dense_replace
  int moe_layer_interval = 1;  // every n-th layer is MoE (after the dense ones)

  // Multi-head latent attention (DeepSeek-V2/V3).
  bool mla = false;
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;

  // Sliding-window attention: layers that attend only to the last window tokens.
  std::optional<int> sliding_window;
  // 1: every layer uses the window; n > 1: n-1 of every n layers do (Gemma 2: 2, Gemma 3: 6).
  int sliding_window_pattern = 1;

  // Generic models.
  double generic_params = 0;
  double flops_per_item = 0;
  double activation_bytes_per_item = 0;           // inference working set per item, 16-bit
  double training_activation_bytes_per_item = 0;  // stored for backward per item, 16-bit

  // Where the description came from and what was assumed in reading it.
  std::string source;
  std::vector<std::string> assumptions;
  double published_params = 0;  // from the model card, when known (presets)
  std::string published_params_source;
  // The weights' format as the checkpoint ships them, where its quantization_config names one
  // gpuwise reads (mxfp4, fp8, awq, gptq): what vLLM serves unless told otherwise, and so the
  // precision fit, perf and specs take when none is given. Empty: 16-bit.
  std::string checkpoint_precision;
  // checkpoint_precision, or bf16.
  std::string serving_precision() const { return checkpoint_precision.empty() ? "bf16" : checkpoint_precision; }
  // The precision asked for, or where none was: bf16 to train, as the checkpoint ships to serve.
  std::string precision_or_default(const std::string& asked, bool training) const {
    return !asked.empty() ? asked : training ? "bf16" : serving_precision();
  }

  bool is_moe() const { return num_experts > 0; }
  bool is_moe_layer(int layer) const;
  bool is_sliding_layer(int layer) const;
  int q_dim() const;   // width of the query projection
  int kv_dim() const;  // width of one of K or V (per token, all KV heads)
};

// Parameter counts by role, from the architecture.
struct ParamBreakdown {
  double embedding = 0;     // token, position and segment embeddings
  double lm_head = 0;       // output projection when not tied
  double attention = 0;     // all layers' attention matrices and biases
  double mlp_dense = 0;     // dense MLP matrices and biases
  double mlp_experts = 0;   // all routed experts
  double mlp_shared = 0;    // shared experts and routers
  double norms = 0;         // norm weights and biases
  double other = 0;         // patch embedding, pooler, class token
  double experts_active = 0;  // routed expert parameters one token uses
  double total() const;
  double active() const;       // parameters one token touches (MoE: top-k experts)
  // Matrices inside the layers: what weight quantization applies to.
  double quantizable() const { return attention + mlp_dense + mlp_experts + mlp_shared; }
};

ParamBreakdown count_params(const ModelArch& arch);

}  // namespace gw
