// The GLPK wrapper on problems small enough to know the answer: a knapsack-like cover, a fixed
// choice, and an infeasible system reported as such.
#include "core/milp.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

TEST(Milp, CheapestIntegerCoverOfADemand) {
  // Cover 10 units with boxes of 3 ($5) and 4 ($6): 3+3+4 = $16 beats 4+4+4 = $18 and 3x4 = $20.
  Milp m;
  int threes = m.add_integer(5), fours = m.add_integer(6);
  m.add_at_most({{threes, -3}, {fours, -4}}, -10);
  ASSERT_TRUE(m.solve());
  EXPECT_DOUBLE_EQ(m.value(threes), 2);
  EXPECT_DOUBLE_EQ(m.value(fours), 1);
}

TEST(Milp, ExactlyOneOfSeveralBinaries) {
  Milp m;
  int a = m.add_binary(3), b = m.add_binary(1), c = m.add_binary(2);
  m.add_exactly({{a, 1}, {b, 1}, {c, 1}}, 1);
  ASSERT_TRUE(m.solve());
  EXPECT_FALSE(m.chosen(a));
  EXPECT_TRUE(m.chosen(b));
  EXPECT_FALSE(m.chosen(c));
}

TEST(Milp, InfeasibleSaysSo) {
  Milp m;
  int x = m.add_binary(1);
  m.add_exactly({{x, 1}}, 2);  // a binary cannot be 2
  std::string why;
  EXPECT_FALSE(m.solve(&why));
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace gw
