#include "perf/mla_layer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "catalog/catalog.h"
#include "model/model_arch.h"
#include "model/presets.h"
#include "perf/efficiency.h"
#include "perf/step_time.h"

namespace gw {
namespace {

// The GEMMs gpuwise times for an MLA layer hold exactly the layer's attention matrices: the
// down-projections, the query up-projection, the key and value halves of kv_b_proj (absorbed)
// and the output projection. At tp8 the replicated down-projections stay whole.
TEST(MlaLayer, GemmsHoldTheLayersAttentionMatrices) {
  ModelArch ds = resolve_model("deepseek-v3").value();
  ASSERT_TRUE(ds.mla);
  double elements = 0;
  for (const MlaGemm& g : mla_gemms(ds, 1)) elements += g.shape.n * g.shape.k;
  EXPECT_NEAR(elements, count_params(ds).attention / ds.num_layers, 1e-6 * elements);
  auto tp8 = mla_gemms(ds, 8);
  ASSERT_EQ(tp8.size(), 5u);
  EXPECT_EQ(tp8[0].shape.n, 1536 + 512 + 64);  // q_a + kv_a, replicated
  EXPECT_EQ(tp8[0].shape.k, 7168);
  EXPECT_EQ(tp8[1].shape.n, 128 / 8 * (128 + 64));  // q_b, the device's heads
  EXPECT_EQ(tp8[2].shape.n, 128 / 8 * 512);         // w_uk: nope -> latent per head
  EXPECT_EQ(tp8[3].shape.k, 512);                   // w_uv: latent -> v per head
  EXPECT_EQ(tp8[4].shape.n, 7168);                  // o_proj
  EXPECT_TRUE(tp8[2].sixteen_bit && tp8[3].sixteen_bit && !tp8[4].sixteen_bit);
}

// DeepSeek-V3 fp8 decode on 8 x H200, by operator: every layer's kernels pay their launch, the
// routed experts run as one fused kernel per matrix (hundreds of experts hit at batch 32 must not
// cost hundreds of launches), and the step grows with the experts read as the batch spreads
// over them. SGLang v0.5.7 measured 12.8 ms between tokens at concurrency 8 (1k/1k) on this
// setup (bench/perf_measurements.csv); a whole-step roofline gave 3.7 ms at batch 1.
TEST(MlaLayer, DeepSeekV3DecodeOnEightH200) {
  auto catalog = Catalog::embedded();
  ModelArch ds = resolve_model("deepseek-v3").value();
  PerfSetup setup;
  setup.accelerator = catalog.value().find_accelerator("H200");
  setup.tensor_parallel = 8;
  setup.weight_precision = Precision::fp8;
  setup.kv_precision = Precision::fp8;
  setup.efficiency = default_efficiency(*setup.accelerator);
  use_layer_operators(setup, nullptr);
  ASSERT_TRUE(uses_layer_operators(ds, setup));
  StepTime one = decode_step(ds, setup, 1, 1536), eight = decode_step(ds, setup, 8, 1536),
           thirty_two = decode_step(ds, setup, 32, 1536);
  EXPECT_GT(one.time_s, 7e-3);
  EXPECT_LT(one.time_s, 14e-3);
  EXPECT_NEAR(eight.time_s, 12.8e-3, 0.25 * 12.8e-3);
  EXPECT_GT(eight.time_s, one.time_s * 1.2);  // ~57 of 256 experts read instead of 8
  EXPECT_LT(thirty_two.time_s, 3 * one.time_s);
  const double launch = setup.layer_operators->roofline(setup.operator_device).gemm_launch_s;
  const double hit = 256 * (1 - std::pow(1 - 8.0 / 256, 32));
  EXPECT_LT(thirty_two.layer_operators_s, ds.num_layers * hit * 2 * launch);  // not a launch per expert
}

}  // namespace
}  // namespace gw
