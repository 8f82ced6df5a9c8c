#include "model/kv_layer_groups.h"

#include <gtest/gtest.h>

#include "model/memory.h"
#include "model/presets.h"

namespace gw {
namespace {

ModelArch preset_arch(const std::string& name) {
  auto arch = load_preset(name);
  EXPECT_TRUE(arch.ok()) << name;
  return arch.ok() ? arch.value() : ModelArch{};
}

// vLLM V1 groups layers so every group has as many: gpt-oss and Gemma 2 alternate sliding and
// full layers (two groups of half), Mistral 7B slides on every layer (one sliding group), a
// model without a window is one full group.
TEST(KvLayerGroups, GroupsTheLayersAsVllmsHybridAllocator) {
  const KvLayerGroups oss = kv_layer_groups(preset_arch("gpt-oss-120b"), 16);
  EXPECT_EQ(oss.full_groups, 1);
  EXPECT_EQ(oss.sliding_groups, 1);
  EXPECT_EQ(oss.layers_per_group, 18);
  EXPECT_EQ(oss.window_blocks, 9);  // 128 tokens in 8 blocks, one more while it slides
  EXPECT_EQ(oss.describe(16), "18 full-attention + 18 sliding-window layers (window 128: 9 blocks of 16 kept per sequence)");

  const KvLayerGroups gemma = kv_layer_groups(preset_arch("gemma-2-9b"), 16);
  EXPECT_EQ(gemma.full_groups, 1);
  EXPECT_EQ(gemma.sliding_groups, 1);
  EXPECT_EQ(gemma.layers_per_group, 21);
  EXPECT_EQ(gemma.window_blocks, 257);

  const KvLayerGroups mistral = kv_layer_groups(preset_arch("mistral-7b"), 16);
  EXPECT_EQ(mistral.full_groups, 0);
  EXPECT_EQ(mistral.sliding_groups, 1);
  EXPECT_EQ(mistral.blocks_for(10000), 257);  // past the window a sequence grows no more
  EXPECT_GT(mistral.sequence_blocks_within(257), 1LL << 40);
  EXPECT_EQ(mistral.sequence_blocks_within(100), 100);

  const KvLayerGroups llama = kv_layer_groups(preset_arch("llama-3.1-8b"), 16);
  EXPECT_FALSE(llama.windowed());
  EXPECT_EQ(llama.groups(), 1);
  EXPECT_EQ(llama.blocks_for(77), 77);
  EXPECT_EQ(llama.sequence_blocks_within(77), 77);
  EXPECT_EQ(llama.all_layer_tokens(5000, 16), 5000);
  EXPECT_EQ(llama.describe(16), "");

  // Gemma 3's five sliding layers in six: groups of the layers' greatest common divisor.
  ModelArch gemma3;
  gemma3.num_layers = 62;
  gemma3.sliding_window = 1024;
  gemma3.sliding_window_pattern = 6;
  const KvLayerGroups five_in_six = kv_layer_groups(gemma3, 16);
  EXPECT_EQ(five_in_six.full_groups * five_in_six.layers_per_group, 10);
  EXPECT_EQ(five_in_six.sliding_groups * five_in_six.layers_per_group, 52);
  EXPECT_EQ(five_in_six.layers_per_group, 2);
}

// vLLM keeps the groups apart on GPUs (CUDA, ROCm) and turns its hybrid manager off on other
// platforms and where a KV connector moves the cache (disaggregated prefill and decode).
TEST(KvLayerGroups, TheHybridManagerRunsOnGpusWithoutAKvConnector) {
  EXPECT_TRUE(hybrid_kv_cache_manager("nvidia", false));
  EXPECT_TRUE(hybrid_kv_cache_manager("amd", false));
  EXPECT_FALSE(hybrid_kv_cache_manager("google", false));
  EXPECT_FALSE(hybrid_kv_cache_manager("intel", false));
  EXPECT_FALSE(hybrid_kv_cache_manager("nvidia", true));
  EXPECT_EQ(no_hybrid_kv_cache_reason("nvidia", false), "");
  EXPECT_NE(no_hybrid_kv_cache_reason("nvidia", true).find("KV connector"), std::string::npos);
  EXPECT_NE(no_hybrid_kv_cache_reason("google", false).find("GPUs only"), std::string::npos);
}

// The inverse: the most blocks of tokens a count of group blocks holds, before and past the window.
TEST(KvLayerGroups, SequenceBlocksWithinInvertsBlocksFor) {
  KvLayerGroups g;
  g.full_groups = 2;
  g.sliding_groups = 3;
  g.layers_per_group = 1;
  g.window_blocks = 4;
  for (long long blocks = 0; blocks < 200; ++blocks) {
    const long long within = g.sequence_blocks_within(blocks);
    EXPECT_LE(g.blocks_for(within), blocks) << blocks;
    EXPECT_GT(g.blocks_for(within + 1), blocks) << blocks;
  }
}

// fit's KV bytes and the simulator's blocks agree: a 20,000-token gpt-oss-120b sequence takes
// as many bytes in fit's estimate as its group blocks hold.
TEST(KvLayerGroups, FitsBytesAreTheBlocksTheCacheHolds) {
  const ModelArch arch = preset_arch("gpt-oss-120b");
  InferenceMemoryOptions options;
  options.context = 20000;
  options.batch = 1;
  const MemoryEstimate e = estimate_inference(arch, options);
  const KvLayerGroups g = kv_layer_groups(arch, options.kv_block_tokens);
  const double layer_token_bytes = e.kv_cache_bytes_per_token / arch.num_layers;
  EXPECT_DOUBLE_EQ(e.kv_cache_bytes, static_cast<double>(g.blocks_for(20000 / 16)) * 16 * g.layers_per_group * layer_token_bytes);
  EXPECT_NEAR(g.all_layer_tokens(20000, 16), (20000 + 144) / 2.0, 1e-9);
}

}  // namespace
}  // namespace gw
