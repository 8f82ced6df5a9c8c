#include "sim/sim_event.h"

#include <gtest/gtest.h>

namespace gw::sim_detail {
namespace {

TEST(EventQueue, EarliestFirstThenByKindThenInTheOrderPushed) {
  EventQueue q;
  q.push({2.0, static_cast<int>(EventKind::arrival), -1, 0, 0});
  q.push({1.0, static_cast<int>(EventKind::arrival), 7, 0, 0});
  q.push({1.0, static_cast<int>(EventKind::step_done), 3, 0, 0});
  q.push({1.0, static_cast<int>(EventKind::arrival), 8, 0, 0});
  // A step that ends frees its replica before an arrival at the same instant is routed.
  Event e = q.pop();
  EXPECT_EQ(e.kind, static_cast<int>(EventKind::step_done));
  EXPECT_EQ(q.pop().replica, 7);
  EXPECT_EQ(q.pop().replica, 8);
  EXPECT_EQ(q.pop().time, 2.0);
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace gw::sim_detail
