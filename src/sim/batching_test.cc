// The classic batchers' decisions: one at a time, and full-or-waited for static and dynamic
// batching (a full batch at once, a partial one only once the oldest waited the limit).
#include "sim/batching.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

TEST(ClassicBatcher, OneAtATimeTakesOneWhateverWaits) {
  auto batcher = make_classic_batcher(SimBatching::none, 32, 0.1);
  EXPECT_EQ(batcher->max_batch(), 1u);
  EXPECT_EQ(batcher->decide(7, 0.0, 0.0).take, 1u);
}

TEST(ClassicBatcher, FullBatchGoesAtOnceAndAPartialOneWaitsForTheOldest) {
  auto batcher = make_classic_batcher(SimBatching::dynamic, 8, 0.005);
  EXPECT_EQ(batcher->max_batch(), 8u);
  EXPECT_EQ(batcher->decide(11, 1.0, 1.0).take, 8u);
  BatchDecision wait = batcher->decide(3, 1.0, 1.002);
  EXPECT_EQ(wait.take, 0u);
  EXPECT_DOUBLE_EQ(wait.look_again_at_s, 1.005);
  // At the timer the oldest has waited the limit (within rounding): what waits goes.
  EXPECT_EQ(batcher->decide(3, 1.0, wait.look_again_at_s).take, 3u);
}

TEST(ClassicBatcher, StaticBatchUsesItsTimeoutAndZeroLimitDispatchesAtOnce) {
  auto timed = make_classic_batcher(SimBatching::static_batch, 4, 0.05);
  EXPECT_EQ(timed->decide(2, 0.0, 0.01).take, 0u);
  EXPECT_EQ(timed->decide(2, 0.0, 0.05).take, 2u);
  auto eager = make_classic_batcher(SimBatching::dynamic, 4, 0.0);
  EXPECT_EQ(eager->decide(1, 3.0, 3.0).take, 1u);
  EXPECT_EQ(make_classic_batcher(SimBatching::dynamic, 0, 0.0)->max_batch(), 1u);
}

TEST(ClassicBatcher, NamesRoundTrip) {
  for (SimBatching b : {SimBatching::none, SimBatching::static_batch, SimBatching::dynamic, SimBatching::continuous})
    EXPECT_EQ(parse_sim_batching(sim_batching_name(b)), b);
  EXPECT_FALSE(parse_sim_batching("adaptive"));
}

}  // namespace
}  // namespace gw
