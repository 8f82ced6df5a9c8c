#include "perf/throughput.h"

#include <cmath>

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "model/presets.h"
#include "perf/layer_operators.h"

namespace gw {
namespace {

// A bound on the time per output token caps the batch at the largest whose step fits: the next
// sequence would step past it. A bound the widest batch meets changes nothing; one that even a
// single sequence misses leaves no batch.
TEST(Throughput, TpotBoundCapsTheBatch) {
  auto catalog = Catalog::embedded();
  ASSERT_TRUE(catalog.ok());
  const Accelerator& h100 = *catalog.value().find_accelerator("H100");
  ModelArch arch = resolve_model("llama-3.1-8b").value();
  PerfSetup setup;
  setup.accelerator = &h100;
  setup.weight_precision = setup.kv_precision = Precision::fp8;
  setup.efficiency = default_efficiency(h100);
  use_layer_operators(setup, nullptr);
  MemoryEstimate memory;
  double free = kv_cache_free_bytes(arch, h100, Precision::fp8, Precision::fp8, 1, &memory);
  RequestLengths lengths = RequestLengths::fixed(1000, 500);
  Throughput widest = continuous_max_throughput(arch, setup, memory.kv_cache_bytes_per_token, free, lengths, 4096);
  ASSERT_GT(widest.batch, 64);

  Throughput loose = continuous_max_throughput_within_tpot(arch, setup, memory.kv_cache_bytes_per_token, free, lengths,
                                                           4096, 2 * widest.step_time_s);
  EXPECT_DOUBLE_EQ(loose.batch, widest.batch);
  EXPECT_EQ(loose.batch_limit, widest.batch_limit);

  const double bound_s = widest.step_time_s / 2;
  Throughput bounded = continuous_max_throughput_within_tpot(arch, setup, memory.kv_cache_bytes_per_token, free,
                                                             lengths, 4096, bound_s);
  EXPECT_EQ(bounded.batch_limit, "TPOT");
  EXPECT_LT(bounded.batch, widest.batch);
  EXPECT_LE(bounded.step_time_s, bound_s);
  EXPECT_GT(continuous_max_throughput(arch, setup, memory.kv_cache_bytes_per_token, free, lengths, bounded.batch + 1)
                .step_time_s,
            bound_s);
  EXPECT_LT(bounded.tokens_per_s, widest.tokens_per_s);
  EXPECT_DOUBLE_EQ(bounded.kv_cache_batch, widest.kv_cache_batch);

  Throughput none = continuous_max_throughput_within_tpot(arch, setup, memory.kv_cache_bytes_per_token, free, lengths,
                                                          4096, 1e-6);
  EXPECT_EQ(none.batch, 0);
  EXPECT_EQ(none.tokens_per_s, 0);
  EXPECT_EQ(none.batch_limit, "TPOT");
}

// gpt-oss's sliding layers keep only their 128-token window's blocks (vLLM V1's hybrid
// allocator): a slot of 16,400 tokens holds 18 layers' every token and 18 layers' 144 (the
// window and the block it spans while sliding), 0.504 of what every layer's tokens would take.
TEST(Throughput, SlidingWindowLayersHoldOnlyTheWindowsKv) {
  auto catalog = Catalog::embedded();
  ASSERT_TRUE(catalog.ok());
  const Accelerator& h100 = *catalog.value().find_accelerator("H100");
  ModelArch windowed = resolve_model("gpt-oss-120b").value();
  ModelArch every_token = windowed;
  every_token.sliding_window.reset();
  PerfSetup setup;
  setup.accelerator = &h100;
  setup.efficiency = default_efficiency(h100);
  const double kv_bytes_per_token = 72 * 1024;  // 36 layers x 2 x 8 KV heads x 64 x 2 bytes
  const double free_bytes = 10e9;
  RequestLengths lengths = RequestLengths::fixed(16000, 400);
  Throughput a = continuous_max_throughput(windowed, setup, kv_bytes_per_token, free_bytes, lengths, 4096);
  Throughput b = continuous_max_throughput(every_token, setup, kv_bytes_per_token, free_bytes, lengths, 4096);
  const double reserved = lengths.slot_reserved_tokens();
  EXPECT_DOUBLE_EQ(b.kv_cache_batch, std::floor(free_bytes / (kv_bytes_per_token * reserved)));
  EXPECT_DOUBLE_EQ(a.kv_cache_batch, std::floor(free_bytes / (kv_bytes_per_token * (reserved + 144) / 2)));
  EXPECT_EQ(a.batch_limit, "KV cache");
  EXPECT_GT(a.kv_cache_batch, 1.9 * b.kv_cache_batch);
  // vLLM runs its hybrid allocator on GPUs only: on a TPU every layer keeps every token.
  setup.accelerator = catalog.value().find_accelerator("TPU-v6e");
  setup.efficiency = default_efficiency(*setup.accelerator);
  EXPECT_DOUBLE_EQ(continuous_max_throughput(windowed, setup, kv_bytes_per_token, free_bytes, lengths, 4096).kv_cache_batch,
                   b.kv_cache_batch);
}

}  // namespace
}  // namespace gw
