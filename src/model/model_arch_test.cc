// Parameter counts computed from the architecture against published counts. Exact figures are
// the safetensors totals on each model's Hugging Face page (cited in catalog/models/*.json).
#include "model/model_arch.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace gw {
namespace {

double params_of(const std::string& preset) {
  auto arch = load_preset(preset);
  EXPECT_TRUE(arch.ok()) << arch.error().to_string();
  return arch.ok() ? count_params(arch.value()).total() : 0;
}

TEST(ParamCount, MatchesSafetensorsTotalsExactly) {
  // huggingface.co/<repo> "Model size" (safetensors parameter count), read 2026-11-30.
  EXPECT_EQ(params_of("llama-3.1-8b"), 8030261248.0);     // meta-llama/Llama-3.1-8B
  EXPECT_EQ(params_of("llama-3.1-70b"), 70553706496.0);   // meta-llama/Llama-3.1-70B
  EXPECT_EQ(params_of("llama-3.2-1b"), 1235814400.0);     // tied embeddings
  EXPECT_EQ(params_of("mistral-7b"), 7241732096.0);       // mistralai/Mistral-7B-v0.1
  EXPECT_EQ(params_of("mixtral-8x7b"), 46702792704.0);    // MoE total
  EXPECT_EQ(params_of("qwen2.5-7b"), 7615616512.0);       // QKV biases
  EXPECT_EQ(params_of("qwen2.5-72b"), 72706203648.0);
  EXPECT_EQ(params_of("gemma-2-9b"), 9241705984.0);       // four norms per layer, tied
  EXPECT_EQ(params_of("gemma-2-27b"), 27227128320.0);
  EXPECT_EQ(params_of("phi-3-mini"), 3821079552.0);
  EXPECT_EQ(params_of("gpt2"), 124439808.0);              // learned positions, biases, tied
  EXPECT_EQ(params_of("gpt-neox-20b"), 20554567680.0);
  EXPECT_EQ(params_of("falcon-7b"), 6921720704.0);        // multi-query, parallel attention
  EXPECT_EQ(params_of("resnet-50"), 25557032.0);          // torchvision
}

TEST(ParamCount, MatchesPaperFiguresWithinRounding) {
  // Llama 3 herd paper (arXiv 2407.21783): 405B; safetensors 405.85B.
  EXPECT_NEAR(params_of("llama-3.1-405b") / 405.85e9, 1.0, 0.001);
  // DeepSeek-V3 report (arXiv 2412.19437): 671B total, 37B activated, excluding MTP.
  auto deepseek = load_preset("deepseek-v3");
  ASSERT_TRUE(deepseek.ok());
  ParamBreakdown p = count_params(deepseek.value());
  EXPECT_NEAR(p.total() / 671e9, 1.0, 0.001);
  EXPECT_NEAR(p.active() / 37e9, 1.0, 0.02);
  // Mixtral announcement (mistral.ai/news/mixtral-of-experts): 12.9B active of 46.7B.
  auto mixtral = load_preset("mixtral-8x7b");
  ASSERT_TRUE(mixtral.ok());
  EXPECT_NEAR(count_params(mixtral.value()).active() / 12.9e9, 1.0, 0.002);
  // BERT paper (Devlin et al. 2019): 110M and 340M, rounded; BertModel counts 109.48M, 335.1M.
  EXPECT_EQ(params_of("bert-base"), 109482240.0);
  EXPECT_NEAR(params_of("bert-large") / 340e6, 1.0, 0.02);
  // ViT paper (Dosovitskiy et al. 2021, Table 1): ViT-L 307M with its classification head.
  EXPECT_NEAR(params_of("vit-large") / 307e6, 1.0, 0.015);
}

TEST(ParamCount, EveryPresetCarriesAPublishedCountItMatches) {
  auto names = preset_names();
  EXPECT_GE(names.size(), 15u);
  for (const auto& name : names) {
    auto arch = load_preset(name);
    ASSERT_TRUE(arch.ok()) << name << ": " << arch.error().to_string();
    EXPECT_GT(arch.value().published_params, 0) << name;
    EXPECT_FALSE(arch.value().published_params_source.empty()) << name;
    EXPECT_NEAR(count_params(arch.value()).total() / arch.value().published_params, 1.0, 0.02) << name;
  }
}

TEST(ModelArch, SlidingWindowPatterns) {
  auto gemma = load_preset("gemma-2-9b");
  ASSERT_TRUE(gemma.ok());
  int sliding = 0;
  for (int layer = 0; layer < gemma.value().num_layers; ++layer) sliding += gemma.value().is_sliding_layer(layer);
  EXPECT_EQ(sliding, 21);  // Gemma 2 alternates local (4096) and global layers
  auto mistral = load_preset("mistral-7b");
  ASSERT_TRUE(mistral.ok());
  EXPECT_TRUE(mistral.value().is_sliding_layer(31));
  auto qwen = load_preset("qwen2.5-7b");
  ASSERT_TRUE(qwen.ok());
  EXPECT_FALSE(qwen.value().sliding_window.has_value());  // use_sliding_window: false
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// Hugging Face ids of fine-tunes name the preset of their base architecture.
TEST(Presets, HubIdsMapToTheirPreset) {
  EXPECT_EQ(preset_for_hub_id("meta-llama/Llama-3.1-70B-Instruct"), "llama-3.1-70b");
  EXPECT_EQ(preset_for_hub_id("meta-llama/Meta-Llama-3.1-8B-Instruct"), "llama-3.1-8b");
  EXPECT_EQ(preset_for_hub_id("meta-llama/Llama-2-70b-chat-hf"), "llama-2-70b");
  EXPECT_EQ(preset_for_hub_id("mistralai/Mistral-7B-Instruct-v0.3"), "mistral-7b");
  EXPECT_EQ(preset_for_hub_id("mistralai/Mixtral-8x7B-Instruct-v0.1"), "mixtral-8x7b");
  EXPECT_EQ(preset_for_hub_id("Qwen/Qwen2.5-72B-Instruct"), "qwen2.5-72b");
  EXPECT_EQ(preset_for_hub_id("google/gemma-2-27b-it"), "gemma-2-27b");
  EXPECT_EQ(preset_for_hub_id("microsoft/Phi-3-mini-4k-instruct"), "phi-3-mini");
  EXPECT_EQ(preset_for_hub_id("Qwen/Qwen2.5-14B-Instruct"), "");  // no such preset
  EXPECT_EQ(preset_for_hub_id("llama-3.1-8b"), "");                // not an id
  auto arch = resolve_model("meta-llama/Llama-3.1-70B-Instruct");
  ASSERT_TRUE(arch.ok());
  EXPECT_EQ(arch.value().name, "llama-3.1-70b");
  auto missing = resolve_model("foo/bar");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no preset matches this Hugging Face id"), std::string::npos);
}

}  // namespace
}  // namespace gw
