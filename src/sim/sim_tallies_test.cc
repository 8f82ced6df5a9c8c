#include "sim/sim_tallies.h"

#include <gtest/gtest.h>

namespace gw::sim_detail {
namespace {

TEST(SimTallies, AReplayCountsTimeByTheWindowAndRequestsByTheRate) {
  SimTallies t;
  t.admitted = 110;
  t.completed = 100;
  t.in_flight = 10;
  t.request_s = 50;
  t.billed_node_s = 600;
  for (int i = 0; i < 100; ++i) t.latency.add(0.1);
  const SimTallies before = t;
  // A window: 40 more arrive and complete over 60 s with 2 nodes billed.
  t.admitted += 40;
  t.completed += 40;
  t.good += 38;
  t.request_s += 10 * 60.0;
  t.billed_node_s += 2 * 60.0;
  for (int i = 0; i < 40; ++i) t.latency.add(0.2);
  // Replayed 5 times at a rate 10% above the window's own count: 5 x 40 x 1.1 requests.
  RepeatedRequests added = t.repeat_since(before, 5, 5 * 1.1);
  EXPECT_EQ(added.completed, 220);
  EXPECT_EQ(added.left(), 220);
  EXPECT_EQ(t.completed, 360);
  EXPECT_EQ(t.admitted, 370);
  EXPECT_EQ(t.admitted - t.completed, 10);  // requests in the system stay as they were
  EXPECT_EQ(t.good, 38 + 209);
  EXPECT_DOUBLE_EQ(t.billed_node_s, 600 + 6 * 120.0);
  EXPECT_DOUBLE_EQ(t.billed_node_s_at_completion, t.billed_node_s);
  EXPECT_DOUBLE_EQ(t.request_s, 50 + 6 * 600.0);
  EXPECT_NEAR(static_cast<double>(t.latency.count()), 100 + 40 + 220, 1);
}

}  // namespace
}  // namespace gw::sim_detail
