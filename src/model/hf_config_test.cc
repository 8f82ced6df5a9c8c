#include "model/hf_config.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "model/presets.h"

namespace gw {
namespace {

TEST(HfConfig, ReadsGroupedQueryAttention) {
  auto arch = parse_model_config(R"({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256})", "c.json");
  ASSERT_TRUE(arch.ok()) << arch.error().to_string();
  EXPECT_EQ(arch.value().num_kv_heads, 8);
  EXPECT_EQ(arch.value().head_dim, 128);
  EXPECT_FALSE(arch.value().tied_embeddings);
}

TEST(HfConfig, ReadsTextConfigOfMultimodalModels) {
  auto arch = parse_model_config(R"({"model_type": "llava", "text_config": {"model_type": "llama",
    "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
    "vocab_size": 32064}})", "c.json");
  ASSERT_TRUE(arch.ok()) << arch.error().to_string();
  EXPECT_EQ(arch.value().num_layers, 32);
  EXPECT_FALSE(arch.value().assumptions.empty());
}

TEST(HfConfig, MalformedJsonNamesTheLine) {
  auto arch = parse_model_config("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": ,\n}", "bad.json");
  ASSERT_FALSE(arch.ok());
  EXPECT_EQ(arch.error().file, "bad.json");
  EXPECT_EQ(arch.error().line, 3);
  EXPECT_NE(arch.error().message.find("invalid JSON"), std::string::npos);
}

TEST(HfConfig, TruncatedJsonIsAnError) {
  auto arch = parse_model_config("{\n  \"model_type\": \"llama\",\n  \"hidden_si", "cut.json");
  ASSERT_FALSE(arch.ok());
  EXPECT_EQ(arch.error().line, 3);
}

TEST(HfConfig, WrongTypeAndAbsurdValuesNameFieldAndLine) {
  auto wrong = parse_model_config("{\n\"model_type\": \"llama\",\n\"hidden_size\": \"4096\"\n}", "w.json");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().to_string(), "w.json:3: field 'hidden_size': expected a number, found string");
  auto negative = parse_model_config(
      "{\"model_type\": \"llama\", \"hidden_size\": 4096,\n\"num_hidden_layers\": -2}", "n.json");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().field, "num_hidden_layers");
  EXPECT_EQ(negative.error().line, 2);
  auto huge = parse_model_config(
      R"({"model_type": "llama", "hidden_size": 1e300, "num_hidden_layers": 2, "num_attention_heads": 2})", "h.json");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().field, "hidden_size");
}

TEST(HfConfig, MissingFieldsAndInconsistentHeads) {
  auto missing = parse_model_config(R"({"model_type": "llama", "hidden_size": 64})", "m.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().field, "num_hidden_layers");
  auto heads = parse_model_config(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 8, "num_key_value_heads": 3, "intermediate_size": 128, "vocab_size": 10})", "k.json");
  ASSERT_FALSE(heads.ok());
  EXPECT_EQ(heads.error().field, "num_key_value_heads");
  auto no_type = parse_model_config(R"({"hidden_size": 64})", "t.json");
  ASSERT_FALSE(no_type.ok());
  EXPECT_EQ(no_type.error().field, "model_type");
  EXPECT_FALSE(parse_model_config("[1, 2]", "a.json").ok());
  EXPECT_FALSE(parse_model_config(std::string("{\0}", 3), "b.json").ok());
}

TEST(HfConfig, UnknownModelTypeIsReadAsLlamaStyleWithAnAssumption) {
  auto arch = parse_model_config(R"({"model_type": "newthing", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})", "u.json");
  ASSERT_TRUE(arch.ok());
  ASSERT_EQ(arch.value().assumptions.size(), 1u);
  EXPECT_NE(arch.value().assumptions[0].find("newthing"), std::string::npos);
}

// OpenAI's gpt-oss (the shape of openai/gpt-oss-120b's config.json): experts with biases, a
// router bias, attention sinks, every other layer sliding. The model card (arXiv 2508.10925,
// Table 1) counts 116.83B parameters, 5.13B active without the embedding; 20.91B and 3.61B for
// the 20b.
std::string gpt_oss_config(int layers, int experts) {
  std::string types;
  for (int i = 0; i < layers; ++i) types += std::string(i ? ", " : "") + (i % 2 ? "\"full_attention\"" : "\"sliding_attention\"");
  return R"({"architectures": ["GptOssForCausalLM"], "attention_bias": true, "experts_per_token": 4, "head_dim": 64,
    "hidden_act": "silu", "hidden_size": 2880, "intermediate_size": 2880, "max_position_embeddings": 131072,
    "model_type": "gpt_oss", "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": )" +
         std::to_string(layers) + R"(, "num_key_value_heads": 8, "num_local_experts": )" + std::to_string(experts) +
         R"(, "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
    "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"}, "rms_norm_eps": 1e-05, "rope_theta": 150000,
    "sliding_window": 128, "tie_word_embeddings": false, "vocab_size": 201088, "layer_types": [)" + types + "]}";
}

TEST(HfConfig, GptOssCountsAsItsModelCard) {
  for (auto [layers, experts, total, active] : {std::tuple{36, 128, 116.83e9, 5.13e9}, std::tuple{24, 32, 20.91e9, 3.61e9}}) {
    auto arch = parse_model_config(gpt_oss_config(layers, experts), "config.json");
    ASSERT_TRUE(arch.ok()) << arch.error().to_string();
    const ModelArch& a = arch.value();
    const ParamBreakdown p = count_params(a);
    EXPECT_NEAR(p.total() / total, 1.0, 0.0005) << p.total();
    EXPECT_NEAR((p.active() - p.embedding) / active, 1.0, 0.005) << p.active();
    int sliding = 0;
    for (int layer = 0; layer < a.num_layers; ++layer) sliding += a.is_sliding_layer(layer);
    EXPECT_EQ(sliding, layers / 2);
    EXPECT_FALSE(a.is_sliding_layer(1));  // layer_types[1] is full_attention
    // Known, so no "read as Llama-style" note; the checkpoint's MXFP4 is said not to be read.
    ASSERT_EQ(a.assumptions.size(), 1u);
    EXPECT_NE(a.assumptions[0].find("quant_method 'mxfp4'"), std::string::npos) << a.assumptions[0];
    // Served as it ships unless a precision is given (vLLM's default for the checkpoint).
    EXPECT_EQ(a.checkpoint_precision, "mxfp4");
    EXPECT_EQ(a.serving_precision(), "mxfp4");
  }
}

TEST(Presets, UnknownNameSuggestsTheClosest) {
  auto arch = resolve_model("llama-3.1-8");
  ASSERT_FALSE(arch.ok());
  EXPECT_NE(arch.error().message.find("did you mean 'llama-3.1-8b'"), std::string::npos);
  // A version digit off: every preset of that size and family is named, the closest first.
  auto version = resolve_model("llama-3-70b");
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.error().message.find("did you mean 'llama-2-70b' or 'llama-3.1-70b'?"), std::string::npos)
      << version.error().message;
  EXPECT_NE(version.error().message.find("config.json"), std::string::npos) << version.error().message;
  auto missing_file = resolve_model("./no/such/config.json");
  ASSERT_FALSE(missing_file.ok());
  EXPECT_EQ(missing_file.error().file, "./no/such/config.json");
}

}  // namespace
}  // namespace gw
