#include "model/memory.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/text.h"
#include "model/kv_layer_groups.h"

namespace gw {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / kGiB); }

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// Parameters held by the most loaded device under tensor and pipeline parallelism: a
// pipeline stage of ceil(L/pp) layers plus the embedding (first stage) or the output head
// (last stage, which also holds a copy of tied embeddings); layer matrices and embeddings are
// split over tp, norms are replicated.
struct DeviceParams {
  double quantizable = 0;  // layer matrices
  double experts = 0;      // of which routed experts (MXFP4 quantizes these only)
  double embedding = 0;    // embeddings and output head
  double other = 0;        // norms, patch embedding, pooler
  double total() const { return quantizable + embedding + other; }
};

DeviceParams device_params(const ModelArch& arch, int tp, int pp) {
  ParamBreakdown p = count_params(arch);
  DeviceParams d;
  if (arch.kind == ModelKind::generic) {
    d.quantizable = p.total() / (static_cast<double>(tp) * pp);
    return d;
  }
  double layers_on_stage = std::ceil(static_cast<double>(arch.num_layers) / pp);
  double layer_share = layers_on_stage / arch.num_layers;
  d.quantizable = p.quantizable() * layer_share / tp;
  d.experts = p.mlp_experts * layer_share / tp;
  d.other = p.norms * layer_share + p.other;
  double head = arch.tied_embeddings ? p.embedding : p.lm_head;
  if (pp == 1) {
    d.embedding = (p.embedding + p.lm_head) / tp;
  } else {
    d.embedding = std::max(p.embedding, head) / tp;
  }
  return d;
}

// Bytes of weights for the device's parameters at a precision: quantized types apply to the
// layer matrices; embeddings, head and norms stay 16-bit (as vLLM, AWQ and GPTQ keep them).
// MXFP4 on a MoE model applies to the routed experts only (gpt-oss's checkpoints keep attention
// and the router in bf16: their quantization_config's modules_to_not_convert).
double weight_bytes(const DeviceParams& d, Precision precision, WeightFormat format, int group_size, std::string& formula) {
  double element = precision_bytes(precision);
  double high = precision == Precision::fp32 ? 4.0 : 2.0;
  double rest = (d.embedding + d.other) * high;
  if (quantizes_experts_only(format, d.experts > 0)) {
    const double bits = quantized_weight_bits(precision, format, group_size);
    const double sixteen_bit = d.quantizable - d.experts + d.embedding + d.other;
    formula = fmt::format("{:.4g} routed-expert params x {} + {:.4g} other params x 2 B", d.experts,
                          quantized_weight_bits_formula(precision, format, group_size), sixteen_bit);
    return d.experts * bits / 8 + sixteen_bit * 2.0;
  }
  if (precision == Precision::int4 || precision == Precision::fp4) {
    const double bits = quantized_weight_bits(precision, format, group_size);
    double matrices = d.quantizable * bits / 8.0;
    formula = fmt::format("{:.4g} matrix params x {} + {:.4g} other params x {} B", d.quantizable,
                          quantized_weight_bits_formula(precision, format, group_size), d.embedding + d.other, high);
    return matrices + rest;
  }
  if (precision == Precision::int8 || precision == Precision::fp8) {
    formula = fmt::format("{:.4g} matrix params x 1 B + {:.4g} other params x {} B", d.quantizable,
                          d.embedding + d.other, high);
    return d.quantizable * element + rest;
  }
  formula = fmt::format("{:.4g} params x {} B ({})", d.total(), element, precision_name(precision));
  return d.total() * element;
}

// Width of the MLP per token, counting every expert a token is routed to.
double mlp_width_per_token(const ModelArch& arch) {
  if (!arch.is_moe()) return arch.intermediate_size;
  double width = static_cast<double>(arch.experts_per_token) * arch.moe_intermediate_size;
  if (arch.num_shared_experts > 0)
    width += arch.shared_expert_intermediate_size > 0 ? arch.shared_expert_intermediate_size
                                                      : arch.num_shared_experts * arch.moe_intermediate_size;
  return std::max(width, static_cast<double>(arch.intermediate_size));
}

void add_term(MemoryEstimate& e, const std::string& name, double bytes, const std::string& formula) {
  e.terms.push_back({name, bytes, formula + " = " + gib(bytes)});
}

}  // namespace

std::string_view optimizer_name(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::adamw: return "adamw";
    case Optimizer::adam_8bit: return "adam-8bit";
    case Optimizer::sgd_momentum: return "sgd-momentum";
    case Optimizer::sgd: return "sgd";
  }
  return "adamw";
}

std::optional<Optimizer> parse_optimizer(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "adamw" || name == "adam") return Optimizer::adamw;
  if (name == "adam-8bit" || name == "adam8bit" || name == "adamw-8bit") return Optimizer::adam_8bit;
  if (name == "sgd-momentum" || name == "sgd_momentum" || name == "momentum") return Optimizer::sgd_momentum;
  if (name == "sgd") return Optimizer::sgd;
  return std::nullopt;
}

std::string_view recompute_name(Recompute recompute) {
  switch (recompute) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "none";
}

std::optional<Recompute> parse_recompute(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "none") return Recompute::none;
  if (name == "selective") return Recompute::selective;
  if (name == "full") return Recompute::full;
  return std::nullopt;
}

MemoryEstimate estimate_inference(const ModelArch& arch, const InferenceMemoryOptions& o) {
  MemoryEstimate e;
  ParamBreakdown p = count_params(arch);
  e.params = p.total();
  e.active_params = p.active();
  const int tp = std::max(1, o.tensor_parallel), pp = std::max(1, o.pipeline_parallel);

  std::string formula;
  DeviceParams d = device_params(arch, tp, pp);
  e.weights_bytes = weight_bytes(d, o.weight_precision, o.weight_format, o.quant_group_size, formula);
  if (tp > 1 || pp > 1) formula += fmt::format(" (one device of tp={} pp={})", tp, pp);
  add_term(e, "weights_bytes", e.weights_bytes, formula);

  const double act_bytes = precision_bytes(o.activation_precision);
  if (arch.kind == ModelKind::decoder) {
    // KV cache: per layer and token, K and V for the device's KV heads (replicated when there
    // are fewer KV heads than tensor-parallel ranks), or the MLA latent (replicated over tp).
    double kv_element = precision_bytes(o.kv_precision);
    double per_layer_elements;
    std::string per_layer_formula;
    if (arch.mla) {
      per_layer_elements = arch.kv_lora_rank + arch.qk_rope_head_dim;
      per_layer_formula = fmt::format("(kv_lora_rank {} + rope dim {})", arch.kv_lora_rank, arch.qk_rope_head_dim);
    } else {
      long long heads_here = std::max<long long>(1, ceil_div(arch.num_kv_heads, tp));
      per_layer_elements = 2.0 * heads_here * arch.head_dim;
      per_layer_formula = fmt::format("2 x {} KV heads x {} head_dim", heads_here, arch.head_dim);
    }
    double layers_here = std::ceil(static_cast<double>(arch.num_layers) / pp);
    e.kv_cache_bytes_per_token = layers_here * per_layer_elements * kv_element;
    add_term(e, "kv_cache_bytes_per_token", e.kv_cache_bytes_per_token,
             fmt::format("{} layers x {} x {} B", layers_here, per_layer_formula, kv_element));

    // Paged blocks round each sequence up; sliding-window layers keep only the window.
    long long block = std::max(1, o.kv_block_tokens);
    long long full_tokens = ceil_div(o.context, block) * block;
    long long window_tokens =
        arch.sliding_window ? std::min(full_tokens, sliding_window_tokens(*arch.sliding_window, static_cast<int>(block)))
                            : full_tokens;
    double token_layers = 0;
    int sliding_layers = 0;
    for (int layer = 0; layer < arch.num_layers; ++layer) {
      bool sliding = arch.is_sliding_layer(layer);
      sliding_layers += sliding;
      token_layers += static_cast<double>(sliding ? window_tokens : full_tokens);
    }
    token_layers /= pp;
    e.kv_cache_bytes = static_cast<double>(o.batch) * token_layers * per_layer_elements * kv_element;
    std::string window_note =
        sliding_layers > 0 ? fmt::format("; {} of {} layers keep a {}-token window ({} tokens in blocks)",
                                         sliding_layers, arch.num_layers, *arch.sliding_window, window_tokens)
                           : "";
    add_term(e, "kv_cache_bytes", e.kv_cache_bytes,
             fmt::format("batch {} x {} tokens (context {} in {}-token blocks) x per-token bytes{}", o.batch,
                         full_tokens, o.context, block, window_note));

    // Peak activations of one forward pass over a prefill chunk: residual and normed input,
    // then the MLP's gate, up and product tensors; plus fp32 logits for each sequence sampled.
    double tokens = static_cast<double>(std::min<long long>(o.batch * o.context, o.prefill_chunk_tokens));
    tokens = std::max(tokens, static_cast<double>(o.batch));
    double mlp = mlp_width_per_token(arch) * (arch.gated_mlp ? 3.0 : 2.0) / tp;
    double per_token = 2.0 * arch.hidden_size + std::max(mlp, (arch.q_dim() + 2.0 * arch.kv_dim() + arch.q_dim()) / tp);
    double sequences = std::min(static_cast<double>(o.batch), tokens);
    e.activation_bytes = tokens * per_token * act_bytes + sequences * arch.vocab_size * 4.0;
    add_term(e, "activation_bytes", e.activation_bytes,
             fmt::format("{} tokens in flight x {} values x {} B + {} sequences x {} vocab x 4 B logits", tokens,
                         per_token, act_bytes, sequences, arch.vocab_size));
  } else if (arch.kind == ModelKind::encoder) {
    long long sequence = arch.patch_size > 0
                             ? static_cast<long long>(std::pow(arch.image_size / arch.patch_size, 2)) + 1
                             : std::min<long long>(o.context, arch.max_position_embeddings);
    double tokens = static_cast<double>(o.batch) * sequence;
    double per_token = 2.0 * arch.hidden_size + arch.intermediate_size * 2.0 / tp;
    e.activation_bytes = tokens * per_token * act_bytes;
    add_term(e, "activation_bytes", e.activation_bytes,
             fmt::format("batch {} x {} tokens x ({} values) x {} B", o.batch, sequence, per_token, act_bytes));
  } else {
    e.activation_bytes = static_cast<double>(o.batch) * arch.activation_bytes_per_item * act_bytes / 2.0;
    add_term(e, "activation_bytes", e.activation_bytes,
             fmt::format("batch {} x {:.3g} B per item at 16-bit x {}/2", o.batch, arch.activation_bytes_per_item,
                         act_bytes));
  }

  e.overhead_bytes = o.overhead_gib * kGiB;
  add_term(e, "overhead_bytes", e.overhead_bytes,
           fmt::format("runtime overhead {} GiB (CUDA context, library workspaces, CUDA graphs; --overhead-gib)",
                       o.overhead_gib));
  e.total_bytes_per_device = e.weights_bytes + e.kv_cache_bytes + e.activation_bytes + e.overhead_bytes;
  e.assumptions.push_back("quantized weights (int8/fp8/int4/fp4) apply to the layers' matrices; embeddings, "
                          "output head and norms stay 16-bit");
  if (o.weight_format == WeightFormat::mxfp4)
    e.assumptions.push_back(arch.is_moe() ? "MXFP4: routed experts as 4-bit floats with an 8-bit scale per 32 weights (4.25 bits); "
                                            "attention, router, embeddings and head in bf16, as gpt-oss's checkpoints ship"
                                          : "MXFP4: layer matrices as 4-bit floats with an 8-bit scale per 32 weights (4.25 bits)");
  else if (o.weight_precision == Precision::int4 || o.weight_precision == Precision::fp4)
    e.assumptions.push_back(fmt::format("4-bit groups of {} weights carry an fp16 scale and a 4-bit zero point "
                                        "(AWQ/GPTQ layout)", o.quant_group_size));
  if (arch.kind == ModelKind::decoder)
    e.assumptions.push_back(fmt::format("paged KV cache in blocks of {} tokens; prefill in chunks of {} tokens",
                                        o.kv_block_tokens, o.prefill_chunk_tokens));
  return e;
}

double training_activation_bytes_per_layer(const ModelArch& arch, const TrainingMemoryOptions& o) {
  const double s = static_cast<double>(o.sequence_length), b = static_cast<double>(o.micro_batch);
  const double h = arch.hidden_size, a = arch.num_heads, t = std::max(1, o.tensor_parallel);
  const double q = arch.q_dim(), kv = arch.mla ? arch.num_heads * arch.v_head_dim : arch.kv_dim();
  // The paper counts 16-bit activations. FP8 training (Transformer Engine) saves the inputs of
  // the linear layers in FP8 (about 40% of a layer's saved bytes) and the rest in bf16: ~0.8x.
  const double scale = o.precision == Precision::fp8 ? 0.8 : precision_bytes(o.precision) / 2.0;
  const bool dropout = arch.dropout > 0;
  const double sp = o.sequence_parallel ? t : 1.0;

  if (o.recompute == Recompute::full) return 2.0 * s * b * h * scale / sp;  // each layer's input

  // Kept whole on every tensor-parallel rank unless sequence parallelism splits them:
  // two norm inputs, the QKV and first-MLP inputs, and the two dropout masks (1 byte each).
  double replicated = (4.0 + 2.0 + 2.0) * s * b * h * scale + (dropout ? 2.0 * s * b * h : 0.0);
  // Split over tensor-parallel ranks: Q and K (for QK^T), V, the output projection's input.
  double attention = (2.0 * s * b * (q + kv) + 2.0 * s * b * kv + 2.0 * s * b * q) * scale;
  if (o.flash_attention) {
    attention += 4.0 * a * s * b;  // fp32 log-sum-exp per head and token
  } else if (o.recompute != Recompute::selective) {
    attention += 2.0 * a * s * s * b * scale;                             // softmax output
    if (dropout) attention += a * s * s * b + 2.0 * a * s * s * b * scale;  // mask and dropout output
  }
  double width = arch.is_moe() ? static_cast<double>(arch.experts_per_token) * arch.moe_intermediate_size
                               : arch.intermediate_size;
  double mlp = (arch.gated_mlp ? 6.0 : 4.0) * s * b * width * scale;
  if (arch.is_moe()) {
    mlp += 2.0 * s * b * h * arch.experts_per_token * scale;  // tokens dispatched to each expert
    if (arch.num_shared_experts > 0)
      mlp += 6.0 * s * b * arch.num_shared_experts * arch.moe_intermediate_size * scale;
  }
  return replicated / sp + (attention + mlp) / t;
}

MemoryEstimate estimate_training(const ModelArch& arch, const TrainingMemoryOptions& o) {
  MemoryEstimate e;
  ParamBreakdown p = count_params(arch);
  e.params = p.total();
  e.active_params = p.active();
  const int tp = std::max(1, o.tensor_parallel), pp = std::max(1, o.pipeline_parallel);
  const double dp = std::max(1, o.data_parallel);
  const double params_here = device_params(arch, tp, pp).total();
  const bool mixed = o.precision != Precision::fp32 && o.precision != Precision::tf32;
  // FP8 training keeps bf16 weights and gradients (FP8 is only the GEMM inputs) and caches an
  // FP8 copy of each weight for the forward and backward GEMMs (Transformer Engine).
  const bool fp8 = o.precision == Precision::fp8;
  const double weight_element = fp8 ? 2.0 : mixed ? precision_bytes(o.precision) : 4.0;
  const std::string layout = fmt::format("{:.4g} params on this device (tp={} pp={})", params_here, tp, pp);

  auto shard = [&](int from_stage) { return o.zero_stage >= from_stage ? dp : 1.0; };
  auto shard_note = [&](int from_stage) {
    return o.zero_stage >= from_stage ? fmt::format(" / {} (ZeRO-{} over dp)", dp, o.zero_stage) : std::string();
  };

  e.weights_bytes = params_here * (weight_element + (fp8 ? 1.0 : 0.0)) / shard(3);
  add_term(e, "weights_bytes", e.weights_bytes,
           fmt::format("{} x {} B{}{}", layout, weight_element, fp8 ? " + 1 B FP8 copy" : "", shard_note(3)));
  e.gradient_bytes = params_here * weight_element / shard(2);
  add_term(e, "gradient_bytes", e.gradient_bytes, fmt::format("{} x {} B{}", layout, weight_element, shard_note(2)));
  e.master_weight_bytes = mixed ? params_here * 4.0 / shard(1) : 0.0;
  add_term(e, "master_weight_bytes", e.master_weight_bytes,
           mixed ? fmt::format("fp32 master copy: {} x 4 B{}", layout, shard_note(1))
                 : std::string("none: training in fp32"));
  double state_bytes = 0;
  switch (o.optimizer) {
    case Optimizer::adamw: state_bytes = 8; break;         // fp32 momentum and variance
    case Optimizer::adam_8bit: state_bytes = 2; break;     // 8-bit momentum and variance
    case Optimizer::sgd_momentum: state_bytes = 4; break;  // fp32 momentum
    case Optimizer::sgd: state_bytes = 0; break;
  }
  e.optimizer_bytes = params_here * state_bytes / shard(1);
  add_term(e, "optimizer_bytes", e.optimizer_bytes,
           fmt::format("{}: {} x {} B{}", optimizer_name(o.optimizer), layout, state_bytes, shard_note(1)));
  if (o.offload_optimizer) {
    e.host_offload_bytes = e.optimizer_bytes + e.master_weight_bytes;
    e.optimizer_bytes = 0;
    e.master_weight_bytes = 0;
    e.assumptions.push_back("optimizer state and master weights offloaded to host RAM (ZeRO-Offload)");
  }

  if (arch.kind == ModelKind::generic) {
    e.activation_bytes = static_cast<double>(o.micro_batch) * arch.training_activation_bytes_per_item *
                         precision_bytes(o.precision) / 2.0;
    add_term(e, "activation_bytes", e.activation_bytes,
             fmt::format("micro-batch {} x {:.3g} B per item at 16-bit", o.micro_batch,
                         arch.training_activation_bytes_per_item));
  } else {
    double per_layer = training_activation_bytes_per_layer(arch, o);
    // 1F1B: the first stage holds pp micro-batches of L/pp layers, i.e. about L layers' worth.
    double layers_held = std::ceil(static_cast<double>(arch.num_layers) / pp) * pp;
    double logits = pp == 1 && arch.vocab_size > 0
                        ? 4.0 * static_cast<double>(o.sequence_length) * o.micro_batch * arch.vocab_size / tp
                        : 0.0;
    e.activation_bytes = per_layer * layers_held + logits;
    add_term(e, "activation_bytes", e.activation_bytes,
             fmt::format("{} per layer (Korthikanti et al. 2022, recompute={}, sp={}, flash={}) x {} layers held{}",
                         gib(per_layer), recompute_name(o.recompute), o.sequence_parallel, o.flash_attention,
                         layers_held, logits > 0 ? fmt::format(" + fp32 logits {}", gib(logits)) : std::string()));
  }
  e.overhead_bytes = o.overhead_gib * kGiB;
  add_term(e, "overhead_bytes", e.overhead_bytes,
           fmt::format("runtime overhead {} GiB (CUDA context, NCCL buffers; --overhead-gib)", o.overhead_gib));
  e.total_bytes_per_device = e.weights_bytes + e.gradient_bytes + e.master_weight_bytes + e.optimizer_bytes +
                             e.activation_bytes + e.overhead_bytes;
  if (mixed)
    e.assumptions.push_back(fp8 ? std::string("FP8 training (Transformer Engine, delayed scaling): bf16 weights and gradients "
                                              "with an FP8 copy of the weights, fp32 master weights, FP8 linear-layer inputs saved")
                                : fmt::format("mixed precision: {} weights and gradients, fp32 master weights",
                                              precision_name(o.precision)));
  if (arch.is_moe())
    e.assumptions.push_back("experts are split like dense layers (no expert parallelism modelled)");
  return e;
}

}  // namespace gw
