#include "model/hf_config.h"

#include <gtest/gtest.h>

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
