// Step times from Vidur's measured profiles (Llama-2-70B on A100, a copy in bench/profiles):
// profiled points read back exactly, values between them lie between, attention grows with
// batch and KV length, a step is the layers' sum, and bad inputs are named.
#include "perf/operator_profile.h"

#include <gtest/gtest.h>

#include <fstream>

#include "model/presets.h"

namespace gw {
namespace {

const std::string kProfile = std::string(GPUWISE_SOURCE_DIR) + "/bench/profiles/vidur-7d47513";

OperatorProfileOptions llama_70b_tp2() {
  return vidur_profile_options(kProfile, "a100", "a100_pairwise_nvlink", "meta-llama/Llama-2-70b-hf",
                               load_preset("llama-2-70b").value(), 2);
}

TEST(OperatorProfile, OptionsTakeTheModelsSizesFromItsArchitecture) {
  OperatorProfileOptions o = llama_70b_tp2();
  EXPECT_EQ(o.num_layers, 80);
  EXPECT_EQ(o.embedding_dim, 8192);
  EXPECT_EQ(o.kv_bytes_per_token, 2.0 * 4 * 128 * 80 * 2);  // 8 KV heads of 128 over two GPUs, fp16
  EXPECT_EQ(o.mlp_csv, kProfile + "/compute/a100/meta-llama/Llama-2-70b-hf/mlp.csv");
}

TEST(OperatorProfile, ProfiledPointsReadBackAndInterpolationStaysBetween) {
  auto timer = ProfiledStepTimer::load(llama_70b_tp2());
  ASSERT_TRUE(timer.ok()) << timer.error().to_string();
  const ProfiledStepTimer& t = *timer.value();
  // mlp.csv, tp2, 256 tokens: the nine per-token operators' medians, summed by hand from the file.
  double at_256 = t.per_token_ms(256), at_264 = t.per_token_ms(264), at_260 = t.per_token_ms(260);
  EXPECT_NEAR(at_256, 1.1285, 1e-9);
  EXPECT_NEAR(at_264, 1.535, 1e-9);
  EXPECT_GE(at_260, std::min(at_256, at_264));
  EXPECT_LE(at_260, std::max(at_256, at_264));
  // More tokens, more time (from 8 to 4,096 tokens).
  EXPECT_LT(t.per_token_ms(8), t.per_token_ms(4096));
  // A decode step of 64 sequences at 1,000 tokens of context, against one sequence and a longer context.
  double small = t.step_time_s(1, 1000, 0, 0, 1), batch = t.step_time_s(64, 64000, 0, 0, 64),
         longer = t.step_time_s(64, 64 * 3000.0, 0, 0, 64);
  EXPECT_LT(small, batch);
  EXPECT_LT(batch, longer);
  // A 70B decode step on two A100s is memory-bound: tens of milliseconds (Vidur's own predictions
  // for this model are ~35-60 ms at these batches).
  EXPECT_GT(small, 0.015);
  EXPECT_LT(longer, 0.2);
  // A whole 2,048-token prompt costs more than a decode step; twice the tokens, about twice the
  // time (the projections dominate; 2 x 70e9 x 2,048 FLOPs on two A100s at ~60% is ~0.75 s).
  double p1 = t.step_time_s(0, 0, 1024, 1024.0 * 1024 / 2, 1), p2 = t.step_time_s(0, 0, 2048, 2048.0 * 2048 / 2, 1);
  EXPECT_GT(p2, batch);
  EXPECT_GT(p2, 1.7 * p1);
  EXPECT_LT(p2, 2.3 * p1);
  EXPECT_GT(p2, 0.5);
  EXPECT_LT(p2, 1.0);
}

TEST(OperatorProfile, MissingLayoutsAndFilesAreNamed) {
  OperatorProfileOptions o = llama_70b_tp2();
  o.tensor_parallel = 3;
  auto none = ProfiledStepTimer::load(o);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().to_string().find("tensor parallel 3"), std::string::npos) << none.error().to_string();
  o = llama_70b_tp2();
  o.attention_csv = kProfile + "/no-such.csv";
  auto missing = ProfiledStepTimer::load(o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().to_string().find("no-such.csv"), std::string::npos) << missing.error().to_string();
}

}  // namespace
}  // namespace gw
