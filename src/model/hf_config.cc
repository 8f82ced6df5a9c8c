#include "model/hf_config.h"

#include <cmath>
#include <fmt/format.h>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "core/text.h"

namespace gw {

namespace {

using nlohmann::json;

// Finds the line where "key" appears, so field errors can point at it.
int line_of_key(std::string_view text, std::string_view key) {
  std::string quoted = "\"" + std::string(key) + "\"";
  size_t at = text.find(quoted);
  return at == std::string_view::npos ? 0 : line_of_offset(text, at);
}

class ConfigReader {
 public:
  ConfigReader(const json& object, std::string_view text, const std::string& file)
      : object_(object), text_(text), file_(file) {}

  bool has(std::string_view key) const {
    auto it = object_.find(std::string(key));
    return it != object_.end() && !it->is_null();
  }

  // The first present key among names; error when required and none is present.
  std::optional<double> number(std::initializer_list<const char*> names, bool required, double min,
                               double max) {
    for (const char* name : names) {
      auto it = object_.find(name);
      if (it == object_.end() || it->is_null()) continue;
      if (!it->is_number()) {
        fail(name, fmt::format("expected a number, found {}", it->type_name()));
        return std::nullopt;
      }
      double value = it->get<double>();
      if (!std::isfinite(value) || value < min || value > max) {
        fail(name, fmt::format("{} is outside [{}, {}]", it->dump(), min, max));
        return std::nullopt;
      }
      return value;
    }
    if (required) fail(*names.begin(), "required field is missing");
    return std::nullopt;
  }

  int integer(std::initializer_list<const char*> names, bool required, int min, int max,
              int fallback = 0) {
    auto value = number(names, required, min, max);
    if (!value) return fallback;
    if (*value != std::floor(*value)) {
      fail(*names.begin(), fmt::format("{} is not an integer", *value));
      return fallback;
    }
    return static_cast<int>(*value);
  }

  bool boolean(const char* name, bool fallback) {
    auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) {
      fail(name, fmt::format("expected true or false, found {}", it->type_name()));
      return fallback;
    }
    return it->get<bool>();
  }

  std::string text(const char* name) {
    auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) return {};
    if (!it->is_string()) {
      fail(name, fmt::format("expected a string, found {}", it->type_name()));
      return {};
    }
    return it->get<std::string>();
  }

  void fail(std::string_view field, std::string message) {
    if (!error_) error_ = Error{file_, line_of_key(text_, field), std::string(field), std::move(message)};
  }
  const std::optional<Error>& error() const { return error_; }

 private:
  const json& object_;
  std::string_view text_;
  const std::string& file_;
  std::optional<Error> error_;
};

constexpr int kMaxWidth = 1 << 20;
constexpr int kMaxLayers = 10000;

void read_generic(ConfigReader& r, ModelArch& arch) {
  arch.kind = ModelKind::generic;
  arch.generic_params = r.number({"params"}, true, 1, 1e15).value_or(0);
  arch.flops_per_item = r.number({"flops_per_item"}, false, 0, 1e18).value_or(2 * arch.generic_params);
  arch.activation_bytes_per_item = r.number({"activation_bytes_per_item"}, false, 0, 1e13).value_or(0);
  arch.training_activation_bytes_per_item =
      r.number({"training_activation_bytes_per_item"}, false, 0, 1e13).value_or(0);
}

void read_transformer(ConfigReader& r, ModelArch& arch) {
  const std::string& type = arch.model_type;
  arch.hidden_size = r.integer({"hidden_size", "n_embd", "d_model"}, true, 1, kMaxWidth);
  arch.num_layers = r.integer({"num_hidden_layers", "n_layer", "num_layers"}, true, 1, kMaxLayers);
  arch.num_heads = r.integer({"num_attention_heads", "n_head", "num_heads"}, true, 1, kMaxWidth);
  if (r.error()) return;
  if (!r.has("head_dim") && arch.hidden_size % arch.num_heads != 0)
    r.fail("num_attention_heads", fmt::format("hidden_size {} is not divisible by {} heads",
                                              arch.hidden_size, arch.num_heads));
  arch.head_dim = r.integer({"head_dim"}, false, 1, kMaxWidth, arch.hidden_size / arch.num_heads);
  arch.num_kv_heads = r.integer({"num_key_value_heads", "num_kv_heads"}, false, 1, kMaxWidth, arch.num_heads);
  arch.vocab_size = r.integer({"vocab_size"}, false, 1, 1 << 24, 0);
  arch.max_position_embeddings =
      r.integer({"max_position_embeddings", "n_positions", "seq_length"}, false, 1, 1 << 30, 0);
  arch.intermediate_size =
      r.integer({"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"}, false, 1, 1 << 24, 0);
  arch.dropout = r.number({"hidden_dropout", "resid_pdrop", "hidden_dropout_prob", "attention_dropout"},
                          false, 0, 1).value_or(0);
  if (auto window = r.number({"sliding_window"}, false, 1, 1e9)) {
    bool used = r.boolean("use_sliding_window", true);
    if (used) arch.sliding_window = static_cast<int>(*window);
  }

  bool decoder_default_tied = false;
  if (type == "gpt2") {
    arch.norm = NormKind::layernorm;
    arch.gated_mlp = false;
    arch.qkv_bias = arch.out_bias = arch.mlp_bias = true;
    arch.learned_positions = arch.max_position_embeddings;
    if (arch.intermediate_size == 0) arch.intermediate_size = 4 * arch.hidden_size;
    decoder_default_tied = true;
  } else if (type == "opt") {
    // Meta's OPT: LayerNorm, a ReLU MLP, biases throughout, learned positions with an offset of
    // 2 rows (transformers' OPTLearnedPositionalEmbedding), the head tied to the embeddings.
    arch.norm = NormKind::layernorm;
    arch.gated_mlp = false;
    arch.qkv_bias = arch.out_bias = arch.mlp_bias = r.boolean("enable_bias", true);
    arch.learned_positions = arch.max_position_embeddings + 2;
    if (arch.intermediate_size == 0) arch.intermediate_size = 4 * arch.hidden_size;
    if (r.integer({"word_embed_proj_dim"}, false, 1, kMaxWidth, arch.hidden_size) != arch.hidden_size)
      arch.assumptions.push_back("word_embed_proj_dim differs from hidden_size: the two projections (OPT-350M) not counted");
    decoder_default_tied = true;
  } else if (type == "gpt_neox") {
    arch.norm = NormKind::layernorm;
    arch.gated_mlp = false;
    arch.qkv_bias = arch.out_bias = arch.mlp_bias = true;
    arch.parallel_attention = r.boolean("use_parallel_residual", true);
  } else if (type == "falcon") {
    arch.norm = NormKind::layernorm;
    arch.gated_mlp = false;
    bool bias = r.boolean("bias", false);
    arch.qkv_bias = arch.out_bias = arch.mlp_bias = bias;
    arch.parallel_attention = r.boolean("parallel_attn", true);
    if (arch.intermediate_size == 0) arch.intermediate_size = 4 * arch.hidden_size;
    if (r.boolean("new_decoder_architecture", false)) {
      arch.num_kv_heads = r.integer({"num_kv_heads"}, false, 1, kMaxWidth, arch.num_heads);
      arch.norms_per_layer = 2;
    } else {
      if (r.boolean("multi_query", true)) arch.num_kv_heads = 1;
      arch.norms_per_layer = arch.parallel_attention ? 1 : 2;
    }
    decoder_default_tied = true;
  } else if (type == "bert" || type == "roberta" || type == "vit") {
    arch.kind = ModelKind::encoder;
    arch.norm = NormKind::layernorm;
    arch.gated_mlp = false;
    arch.qkv_bias = arch.out_bias = arch.mlp_bias = r.boolean("qkv_bias", true);
    if (type == "vit") {
      arch.image_size = r.integer({"image_size"}, true, 1, 1 << 16);
      arch.patch_size = r.integer({"patch_size"}, true, 1, 1 << 16);
      arch.num_channels = r.integer({"num_channels"}, false, 1, 64, 3);
      arch.vocab_size = 0;
      arch.max_position_embeddings = 0;
    } else {
      arch.learned_positions = arch.max_position_embeddings;
      arch.token_type_vocab = r.integer({"type_vocab_size"}, false, 0, 1 << 16, 2);
      arch.has_pooler = true;
      arch.final_norm = false;
    }
  } else {
    // Llama family: llama, mistral, mixtral, qwen2(_moe), qwen3, phi3, gemma(2/3), deepseek, gpt-oss.
    static const char* kKnown[] = {"llama",     "mistral",   "mixtral",     "qwen2",      "qwen2_moe",
                                   "qwen3",     "qwen3_moe", "phi3",        "gemma",      "gemma2",
                                   "gemma3_text", "deepseek_v2", "deepseek_v3", "olmo2", "granite", "gpt_oss"};
    bool known = false;
    for (auto name : kKnown) known = known || type == name;
    if (!known)
      arch.assumptions.push_back("model_type '" + type +
                                 "' is not one gpuwise knows: read as a Llama-style decoder "
                                 "(RMSNorm, gated MLP, no biases)");
    arch.mlp_bias = r.boolean("mlp_bias", false);
    arch.qkv_bias = r.boolean("attention_bias", type == "qwen2" || type == "qwen2_moe");
    arch.out_bias = type == "llama" || type == "granite" || type == "gpt_oss" ? arch.qkv_bias : false;
    decoder_default_tied = type == "gemma" || type == "gemma2" || type == "gemma3_text";
    if (type == "gemma2" || type == "gemma3_text") arch.norms_per_layer = 4;
    if (type == "gemma2" && arch.sliding_window) arch.sliding_window_pattern = 2;
    if (type == "gemma3_text" && arch.sliding_window)
      arch.sliding_window_pattern = r.integer({"sliding_window_pattern"}, false, 1, 1000, 6);
    if (type == "qwen3" || type == "qwen3_moe") arch.qk_norm_dim = arch.head_dim;
    if (type == "gpt_oss") {
      // OpenAI's gpt-oss (transformers' GptOssConfig): gated experts of intermediate_size with
      // biases, a router with a bias, a learned attention sink per head, and sliding-window
      // attention on every other layer (layer_types alternates sliding and full).
      arch.num_experts = r.integer({"num_local_experts"}, true, 1, 1 << 16);
      arch.experts_per_token = r.integer({"num_experts_per_tok", "experts_per_token"}, true, 1, 1 << 16);
      arch.moe_intermediate_size = arch.intermediate_size;
      arch.mlp_bias = true;
      if (arch.sliding_window) arch.sliding_window_pattern = 2;
    } else if (type == "mixtral") {
      arch.num_experts = r.integer({"num_local_experts"}, true, 1, 1 << 16);
      arch.experts_per_token = r.integer({"num_experts_per_tok"}, true, 1, 1 << 16);
      arch.moe_intermediate_size = arch.intermediate_size;
    } else if (type == "qwen2_moe" || type == "qwen3_moe") {
      arch.num_experts = r.integer({"num_experts"}, true, 1, 1 << 16);
      arch.experts_per_token = r.integer({"num_experts_per_tok"}, true, 1, 1 << 16);
      arch.moe_intermediate_size = r.integer({"moe_intermediate_size"}, true, 1, 1 << 24);
      arch.shared_expert_intermediate_size =
          r.integer({"shared_expert_intermediate_size"}, false, 0, 1 << 24, 0);
      arch.num_shared_experts = arch.shared_expert_intermediate_size > 0 ? 1 : 0;
      arch.moe_layer_interval = r.integer({"decoder_sparse_step"}, false, 1, 1000, 1);
    } else if (type == "deepseek_v2" || type == "deepseek_v3") {
      arch.num_experts = r.integer({"n_routed_experts"}, true, 1, 1 << 16);
      arch.experts_per_token = r.integer({"num_experts_per_tok"}, true, 1, 1 << 16);
      arch.moe_intermediate_size = r.integer({"moe_intermediate_size"}, true, 1, 1 << 24);
      arch.num_shared_experts = r.integer({"n_shared_experts"}, false, 0, 1 << 16, 0);
      arch.first_dense_layers = r.integer({"first_k_dense_replace"}, false, 0, kMaxLayers, 0);
      arch.moe_layer_interval = r.integer({"moe_layer_freq"}, false, 1, 1000, 1);
      arch.mla = true;
      arch.q_lora_rank = r.integer({"q_lora_rank"}, false, 0, kMaxWidth, 0);
      arch.kv_lora_rank = r.integer({"kv_lora_rank"}, true, 1, kMaxWidth);
      arch.qk_nope_head_dim = r.integer({"qk_nope_head_dim"}, true, 1, kMaxWidth);
      arch.qk_rope_head_dim = r.integer({"qk_rope_head_dim"}, true, 1, kMaxWidth);
      arch.v_head_dim = r.integer({"v_head_dim"}, true, 1, kMaxWidth);
      arch.head_dim = arch.qk_nope_head_dim + arch.qk_rope_head_dim;
    }
  }
  arch.tied_embeddings = r.boolean("tie_word_embeddings", decoder_default_tied);
  if (r.error()) return;
  if (arch.intermediate_size == 0 && !(arch.is_moe() && arch.first_dense_layers == 0))
    r.fail("intermediate_size", "required field is missing");
  if (arch.kind == ModelKind::decoder && arch.vocab_size == 0) r.fail("vocab_size", "required field is missing");
  if (!arch.mla && arch.num_heads % arch.num_kv_heads != 0)
    r.fail("num_key_value_heads", fmt::format("{} attention heads are not a multiple of {} KV heads",
                                              arch.num_heads, arch.num_kv_heads));
  if (arch.is_moe() && arch.experts_per_token > arch.num_experts)
    r.fail("num_experts_per_tok", fmt::format("{} experts per token exceed the {} experts",
                                              arch.experts_per_token, arch.num_experts));
}

}  // namespace

Result<ModelArch> parse_model_config(std::string_view text, const std::string& file) {
  if (auto problem = encoding_problem(text)) return Error{file, 0, "", *problem + ": not a JSON config"};
  json document;
  try {
    document = json::parse(text.begin(), text.end(), nullptr, true, false);
  } catch (const json::parse_error& e) {
    size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    return Error{file, line_of_offset(text, offset), "", "invalid JSON: " + without_exception_id(e.what())};
  } catch (const std::exception& e) {
    return Error{file, 0, "", std::string("invalid JSON: ") + e.what()};
  }
  if (!document.is_object()) return Error{file, 1, "", "expected a JSON object at the top level"};

  // Multimodal configs keep the language model under text_config.
  const json* object = &document;
  ModelArch arch;
  arch.name = file;
  arch.source = file;
  if (!document.contains("hidden_size") && !document.contains("n_embd") &&
      document.contains("text_config") && document["text_config"].is_object()) {
    object = &document["text_config"];
    arch.assumptions.push_back("read the language model from text_config; vision towers are not counted");
  }
  ConfigReader reader(*object, text, file);
  arch.model_type = reader.text("model_type");
  if (arch.model_type.empty() && document.contains("model_type") && document["model_type"].is_string())
    arch.model_type = document["model_type"].get<std::string>();
  if (reader.error()) return *reader.error();
  if (arch.model_type.empty()) {
    reader.fail("model_type", "required field is missing (a Hugging Face config.json names its model_type)");
    return *reader.error();
  }
  if (arch.model_type == "generic") {
    read_generic(reader, arch);
  } else {
    read_transformer(reader, arch);
  }
  if (reader.error()) return *reader.error();
  // A quantized checkpoint says how in quantization_config; the weights are sized at the
  // precision gpuwise is given, which the note asks the user to match.
  const json* holders[] = {object, &document};
  for (const json* holder : holders) {
    auto q = holder->find("quantization_config");
    if (q == holder->end() || !q->is_object() || !q->contains("quant_method") || !(*q)["quant_method"].is_string()) continue;
    const std::string method = (*q)["quant_method"].get<std::string>();
    const std::string lower = to_lower(method);
    // The formats gpuwise sizes as such; vLLM serves a checkpoint in its own format by default.
    if (lower == "mxfp4" || lower == "fp8" || lower == "awq" || lower == "gptq") arch.checkpoint_precision = lower;
    std::string note = "the checkpoint is quantized (quantization_config.quant_method '" + method + "'): ";
    note += arch.checkpoint_precision.empty()
                ? "weights are sized at the precision given (--precision or the spec's: awq, gptq, int4, fp8, ...), not read "
                  "from the checkpoint"
                : "weights are sized as " + arch.checkpoint_precision + " (as vLLM serves it) unless a precision is given";
    if (method == "mxfp4")
      note += "; mxfp4 sizes it as it ships: routed experts at 4.25 bits (fp4 with an 8-bit scale per 32), "
              "attention, router and embeddings in bf16, run natively on fp4 tensor cores and weight-only on Ampere, "
              "Hopper and MI300 (vllm-project/recipes OpenAI/GPT-OSS.md, read 2026-12-07)";
    arch.assumptions.push_back(note);
    break;
  }

  // gpuwise presets carry their provenance under "_gpuwise".
  if (auto meta = document.find("_gpuwise"); meta != document.end() && meta->is_object()) {
    if (meta->contains("name") && (*meta)["name"].is_string()) arch.name = (*meta)["name"].get<std::string>();
    if (meta->contains("source") && (*meta)["source"].is_string())
      arch.source = (*meta)["source"].get<std::string>();
    if (meta->contains("published_params") && (*meta)["published_params"].is_number())
      arch.published_params = (*meta)["published_params"].get<double>();
    if (meta->contains("published_params_source") && (*meta)["published_params_source"].is_string())
      arch.published_params_source = (*meta)["published_params_source"].get<std::string>();
  }
  return arch;
}

Result<ModelArch> load_model_config(const std::string& path) {
  std::string text, message;
  if (!read_file(path, text, message)) return Error{path, 0, "", "cannot read: " + message};
  return parse_model_config(text, path);
}

}  // namespace gw
