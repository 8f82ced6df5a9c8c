#include "perf/step_error.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

TEST(StepError, EachPartWeighsItsHeldOutError) {
  StepErrorFigures f;
  StepParts decode_only;
  decode_only.decode_attention_s = 1;
  EXPECT_NEAR(step_error_contribution(decode_only).expected_error, f.decode_attention, 1e-12);
  EXPECT_EQ(step_error_contribution(decode_only).dominant, "decode attention");
  StepParts mixed;
  mixed.layers_s = 0.6, mixed.prefill_attention_s = 0.2, mixed.network_s = 0.1, mixed.other_s = 0.1;
  auto c = step_error_contribution(mixed);
  EXPECT_NEAR(c.expected_error, 0.6 * f.layers + 0.2 * f.prefill_attention, 1e-12);
  EXPECT_NEAR(c.unmeasured_share, 0.2, 1e-12);  // collectives and launches: counted apart
  EXPECT_EQ(c.dominant, "prefill attention");  // 0.2 x 12.6% over 0.6 x 3.2%
  EXPECT_EQ(step_error_contribution(StepParts{}).expected_error, 0);
}

TEST(StepError, SummaryOverSteps) {
  std::vector<StepParts> steps(100);
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i].layers_s = 1;
    steps[i].prefill_attention_s = i == 99 ? 1 : 0;  // one prefill-heavy step
  }
  StepErrorFigures f;
  auto s = summarize_step_errors(steps);
  EXPECT_EQ(s.steps, 100);
  EXPECT_NEAR(s.mean_error, (99 * f.layers + 0.5 * f.layers + 0.5 * f.prefill_attention) / 100, 1e-12);
  EXPECT_NEAR(s.p99_error, 0.5 * f.layers + 0.5 * f.prefill_attention, 1e-12);
  EXPECT_EQ(s.dominant, "layers");
  EXPECT_EQ(s.mean_contribution.size(), 4u);
  EXPECT_EQ(summarize_step_errors({}).steps, 0);
}

}  // namespace
}  // namespace gw
