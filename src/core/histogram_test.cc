#include "core/histogram.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

TEST(LogHistogram, RepeatSinceCountsTheLaterValuesAgain) {
  LogHistogram h;
  for (int i = 1; i <= 100; ++i) h.add(0.01 * i);  // 0.01 .. 1 s
  LogHistogram earlier = h;
  for (int i = 0; i < 50; ++i) h.add(5.0 + 0.1 * i);  // later values, above every earlier one
  LogHistogram replayed;
  for (int i = 1; i <= 100; ++i) replayed.add(0.01 * i);
  for (int copy = 0; copy < 4; ++copy)
    for (int i = 0; i < 50; ++i) replayed.add(5.0 + 0.1 * i);
  h.repeat_since(earlier, 3);
  EXPECT_EQ(h.count(), 300u);
  EXPECT_EQ(h.count(), replayed.count());
  EXPECT_NEAR(h.mean(), replayed.mean(), 1e-12);
  for (double q : {0.1, 0.3, 0.5, 0.9, 0.99}) EXPECT_DOUBLE_EQ(h.quantile(q), replayed.quantile(q)) << q;
  // Two thirds of the values are the later ones now: the median is among them.
  EXPECT_GT(h.quantile(0.5), 4.9);
}

TEST(LogHistogram, RepeatSinceOfNothingChangesNothing) {
  LogHistogram h;
  h.add(1.0);
  LogHistogram earlier = h;
  h.repeat_since(earlier, 10);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_DOUBLE_EQ(h.quantile(0.5), earlier.quantile(0.5));
}

}  // namespace
}  // namespace gw
