#include "perf/throughput.h"

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

}  // namespace
}  // namespace gw
