#include "model/memory.h"

#include <gtest/gtest.h>

#include "model/hf_config.h"
#include "model/presets.h"

namespace gw {
namespace {

ModelArch preset(const std::string& name) {
  auto arch = load_preset(name);
  EXPECT_TRUE(arch.ok()) << arch.error().to_string();
  return arch.value();
}

ModelArch generic(double params) {
  ModelArch arch;
  arch.kind = ModelKind::generic;
  arch.model_type = "generic";
  arch.generic_params = params;
  return arch;
}

// GPT-3 175B shape (Brown et al. 2020, Table 2.1), with dropout, as in Korthikanti et al.
ModelArch gpt3_175b() {
  auto arch = parse_model_config(R"({"model_type": "gpt2", "n_embd": 12288, "n_layer": 96, "n_head": 96,
    "n_positions": 2048, "vocab_size": 51200, "resid_pdrop": 0.1})", "gpt3.json");
  EXPECT_TRUE(arch.ok()) << arch.error().to_string();
  return arch.value();
}

// Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
// Models", Figure 1: a 7.5B model, 64-way data parallel, mixed-precision Adam (K = 12).
TEST(TrainingMemory, ZeroStagesMatchThePaperFigure1) {
  TrainingMemoryOptions options;
  options.data_parallel = 64;
  options.overhead_gib = 0;
  const double expected_gb[] = {120.0, 31.4, 16.6, 1.88};
  for (int stage = 0; stage <= 3; ++stage) {
    options.zero_stage = stage;
    MemoryEstimate e = estimate_training(generic(7.5e9), options);
    double model_states = e.weights_bytes + e.gradient_bytes + e.master_weight_bytes + e.optimizer_bytes;
    EXPECT_NEAR(model_states / 1e9, expected_gb[stage], 0.05) << "ZeRO stage " << stage;
  }
}

TEST(TrainingMemory, OptimizersAndOffload) {
  TrainingMemoryOptions options;
  options.overhead_gib = 0;
  options.optimizer = Optimizer::adam_8bit;
  EXPECT_DOUBLE_EQ(estimate_training(generic(1e9), options).optimizer_bytes, 2e9);
  options.optimizer = Optimizer::sgd_momentum;
  EXPECT_DOUBLE_EQ(estimate_training(generic(1e9), options).optimizer_bytes, 4e9);
  options.precision = Precision::fp32;  // no master copy, fp32 weights and gradients
  MemoryEstimate fp32 = estimate_training(generic(1e9), options);
  EXPECT_DOUBLE_EQ(fp32.master_weight_bytes, 0);
  EXPECT_DOUBLE_EQ(fp32.weights_bytes, 4e9);
  options.precision = Precision::bf16;
  options.optimizer = Optimizer::adamw;
  options.offload_optimizer = true;
  MemoryEstimate offloaded = estimate_training(generic(1e9), options);
  EXPECT_DOUBLE_EQ(offloaded.optimizer_bytes, 0);
  EXPECT_DOUBLE_EQ(offloaded.host_offload_bytes, 12e9);
}

// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// Table 2: activation bytes per layer for each parallelism and recomputation scheme.
TEST(TrainingMemory, ActivationsMatchKorthikantiTable2) {
  ModelArch gpt = gpt3_175b();
  TrainingMemoryOptions o;
  o.flash_attention = false;
  o.sequence_length = 2048;
  o.micro_batch = 1;
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  EXPECT_DOUBLE_EQ(training_activation_bytes_per_layer(gpt, o), s * b * h * (34 + 5 * a * s / h));
  o.tensor_parallel = 8;
  EXPECT_DOUBLE_EQ(training_activation_bytes_per_layer(gpt, o), s * b * h * (10 + 24 / t + 5 * a * s / (h * t)));
  o.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(training_activation_bytes_per_layer(gpt, o), s * b * h / t * (34 + 5 * a * s / h));
  o.recompute = Recompute::selective;
  EXPECT_DOUBLE_EQ(training_activation_bytes_per_layer(gpt, o), s * b * h * 34 / t);
  o.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(training_activation_bytes_per_layer(gpt, o), s * b * h * (10 + 24 / t));
  o.recompute = Recompute::full;
  EXPECT_DOUBLE_EQ(training_activation_bytes_per_layer(gpt, o), 2 * s * b * h);
}

TEST(TrainingMemory, FlashAttentionDropsTheQuadraticTerm) {
  ModelArch llama = preset("llama-3.1-8b");
  TrainingMemoryOptions o;
  o.sequence_length = 8192;
  double flash = training_activation_bytes_per_layer(llama, o);
  o.flash_attention = false;
  double eager = training_activation_bytes_per_layer(llama, o);
  // Eager attention stores the 2-byte softmax output: 2 * a * s^2 * b bytes, minus the
  // log-sum-exp flash keeps instead (no dropout in Llama, so no mask).
  EXPECT_DOUBLE_EQ(eager - flash, 2.0 * 32 * 8192.0 * 8192.0 - 4.0 * 32 * 8192.0);
}

TEST(InferenceMemory, KvCachePerTokenForGqaMqaAndMla) {
  InferenceMemoryOptions o;
  // Llama 3.1 8B: 32 layers x 2 (K, V) x 8 KV heads x 128 x 2 B = 128 KiB per token.
  EXPECT_DOUBLE_EQ(estimate_inference(preset("llama-3.1-8b"), o).kv_cache_bytes_per_token, 131072);
  // Llama 3.1 70B: 80 layers x 2 x 8 x 128 x 2 B = 320 KiB per token.
  EXPECT_DOUBLE_EQ(estimate_inference(preset("llama-3.1-70b"), o).kv_cache_bytes_per_token, 327680);
  // Falcon 7B, multi-query: 32 layers x 2 x 1 head x 64 x 2 B.
  EXPECT_DOUBLE_EQ(estimate_inference(preset("falcon-7b"), o).kv_cache_bytes_per_token, 8192);
  // DeepSeek-V3 MLA caches the latent: 61 layers x (512 + 64) x 2 B (DeepSeek-V2 paper, sec. 2.1).
  EXPECT_DOUBLE_EQ(estimate_inference(preset("deepseek-v3"), o).kv_cache_bytes_per_token, 61.0 * 576 * 2);
  // fp8 KV halves it.
  o.kv_precision = Precision::fp8;
  EXPECT_DOUBLE_EQ(estimate_inference(preset("llama-3.1-8b"), o).kv_cache_bytes_per_token, 65536);
}

TEST(InferenceMemory, KvCacheSplitsOverTensorParallelAndReplicatesFewKvHeads) {
  InferenceMemoryOptions o;
  o.tensor_parallel = 8;  // 8 KV heads over 8 ranks: one per rank
  EXPECT_DOUBLE_EQ(estimate_inference(preset("llama-3.1-70b"), o).kv_cache_bytes_per_token, 80.0 * 2 * 1 * 128 * 2);
  // Falcon's single KV head is replicated on every rank.
  o.tensor_parallel = 1;
  double single = estimate_inference(preset("falcon-7b"), o).kv_cache_bytes_per_token;
  o.tensor_parallel = 71;
  EXPECT_DOUBLE_EQ(estimate_inference(preset("falcon-7b"), o).kv_cache_bytes_per_token, single);
}

TEST(InferenceMemory, SlidingWindowKvCacheByHand) {
  InferenceMemoryOptions o;
  o.kv_block_tokens = 1;  // unpaged, to check the formula itself
  // Mistral 7B v0.1: every layer keeps a 4096-token window. Batch 2, 32k context:
  // 2 x 32 layers x 4096 tokens x (2 x 8 x 128 x 2 B) = 1 GiB.
  o.batch = 2;
  o.context = 32768;
  EXPECT_DOUBLE_EQ(estimate_inference(preset("mistral-7b"), o).kv_cache_bytes, 2.0 * 32 * 4096 * 4096);
  // Below the window the whole context is kept.
  o.context = 1000;
  EXPECT_DOUBLE_EQ(estimate_inference(preset("mistral-7b"), o).kv_cache_bytes, 2.0 * 32 * 1000 * 4096);
  // Gemma 2 9B: 21 local layers at 4096 tokens, 21 global at 8192; 2 x 8 x 256 x 2 B per layer-token.
  o.batch = 1;
  o.context = 8192;
  EXPECT_DOUBLE_EQ(estimate_inference(preset("gemma-2-9b"), o).kv_cache_bytes, (21.0 * 4096 + 21.0 * 8192) * 8192);
  // Paged in 16-token blocks, a sliding window spans one block more.
  o.kv_block_tokens = 16;
  o.context = 32768;
  EXPECT_DOUBLE_EQ(estimate_inference(preset("mistral-7b"), o).kv_cache_bytes, 32.0 * 4112 * 4096);
  o.context = 1001;  // rounds up to 1008
  EXPECT_DOUBLE_EQ(estimate_inference(preset("mistral-7b"), o).kv_cache_bytes, 32.0 * 1008 * 4096);
}

TEST(InferenceMemory, WeightsByPrecision) {
  ModelArch llama = preset("llama-3.1-8b");
  ParamBreakdown p = count_params(llama);
  InferenceMemoryOptions o;
  EXPECT_DOUBLE_EQ(estimate_inference(llama, o).weights_bytes, 8030261248.0 * 2);
  o.weight_precision = Precision::fp32;
  EXPECT_DOUBLE_EQ(estimate_inference(llama, o).weights_bytes, 8030261248.0 * 4);
  o.weight_precision = Precision::int8;
  double other = p.total() - p.quantizable();
  EXPECT_DOUBLE_EQ(estimate_inference(llama, o).weights_bytes, p.quantizable() + other * 2);
  o.weight_precision = Precision::int4;  // 4 bits + (16-bit scale + 4-bit zero) per 128 weights
  EXPECT_DOUBLE_EQ(estimate_inference(llama, o).weights_bytes, p.quantizable() * (4 + 20.0 / 128) / 8 + other * 2);
  o.quant_group_size = 32;
  EXPECT_DOUBLE_EQ(estimate_inference(llama, o).weights_bytes, p.quantizable() * (4 + 20.0 / 32) / 8 + other * 2);
}

// gpt-oss as it ships: routed experts in MXFP4 (4 bits and an 8-bit scale per 32 weights),
// attention, router, embeddings and head in bf16; the model card's checkpoint sizes (OpenAI,
// arXiv 2508.10925, table 1): 60.8 GiB and 12.8 GiB.
TEST(InferenceMemory, Mxfp4SizesGptOssAsItsCheckpoint) {
  for (auto [name, checkpoint_gib] : {std::pair{"gpt-oss-120b", 60.8}, std::pair{"gpt-oss-20b", 12.8}}) {
    ModelArch oss = preset(name);
    ParamBreakdown p = count_params(oss);
    InferenceMemoryOptions o;
    o.weight_precision = Precision::fp4;
    o.weight_format = WeightFormat::mxfp4;
    MemoryEstimate e = estimate_inference(oss, o);
    EXPECT_NEAR(e.weights_bytes, p.mlp_experts * 4.25 / 8 + (p.total() - p.mlp_experts) * 2, 1.0) << name;
    EXPECT_NEAR(e.weights_bytes / (1024.0 * 1024 * 1024) / checkpoint_gib, 1.0, 0.02) << name;
    // Plain fp4 would put attention at 4 bits too: smaller than the checkpoint.
    o.weight_format = WeightFormat::plain;
    EXPECT_LT(estimate_inference(oss, o).weights_bytes, e.weights_bytes) << name;
  }
  // On a dense model MXFP4 applies to every layer matrix.
  ModelArch llama = preset("llama-3.1-8b");
  ParamBreakdown p = count_params(llama);
  InferenceMemoryOptions o;
  o.weight_precision = Precision::fp4;
  o.weight_format = WeightFormat::mxfp4;
  EXPECT_DOUBLE_EQ(estimate_inference(llama, o).weights_bytes, p.quantizable() * 4.25 / 8 + (p.total() - p.quantizable()) * 2);
}

TEST(InferenceMemory, TensorAndPipelineSplits) {
  ModelArch llama = preset("llama-3.1-70b");
  InferenceMemoryOptions o;
  double whole = estimate_inference(llama, o).weights_bytes;
  o.tensor_parallel = 4;
  double quarter = estimate_inference(llama, o).weights_bytes;
  // Norms are replicated, so slightly more than a quarter.
  EXPECT_GT(quarter, whole / 4);
  EXPECT_LT(quarter, whole / 4 * 1.001);
  o.tensor_parallel = 1;
  o.pipeline_parallel = 2;
  double half = estimate_inference(llama, o).weights_bytes;
  EXPECT_GT(half, whole / 2 - 1);  // the first stage also holds the embedding
  EXPECT_LT(half, whole / 2 * 1.05);
}

TEST(InferenceMemory, TotalIsTheSumOfItsTermsAndHasFormulas) {
  InferenceMemoryOptions o;
  o.batch = 16;
  o.context = 8192;
  MemoryEstimate e = estimate_inference(preset("llama-3.1-70b"), o);
  EXPECT_DOUBLE_EQ(e.total_bytes_per_device, e.weights_bytes + e.kv_cache_bytes + e.activation_bytes + e.overhead_bytes);
  EXPECT_DOUBLE_EQ(e.kv_cache_bytes, 16.0 * 8192 * 327680);
  for (const auto& term : e.terms) EXPECT_FALSE(term.formula.empty()) << term.name;
}

TEST(InferenceMemory, EncodersHaveNoKvCache) {
  InferenceMemoryOptions o;
  o.batch = 32;
  o.context = 512;
  MemoryEstimate bert = estimate_inference(preset("bert-base"), o);
  EXPECT_EQ(bert.kv_cache_bytes, 0);
  EXPECT_GT(bert.activation_bytes, 0);
  MemoryEstimate resnet = estimate_inference(preset("resnet-50"), o);
  EXPECT_DOUBLE_EQ(resnet.weights_bytes, 25557032.0 * 2);
  EXPECT_DOUBLE_EQ(resnet.activation_bytes, 32 * 6.4e6);
}

}  // namespace
}  // namespace gw
