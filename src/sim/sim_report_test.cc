#include "sim/sim_report.h"

#include <gtest/gtest.h>

namespace gw::sim_detail {
namespace {

// Marks every second over 1,000 s of arrivals at 10/s with `in_flight(t)` requests in the system.
template <typename F>
SimResult judged(F in_flight, long long timed_out_per_s = 0, double last_completion_s = 1001) {
  SimTallies t;
  t.first_arrival_s = 0;
  t.last_arrival_s = 1000;
  t.last_completion_s = last_completion_s;
  t.admitted = 10000;
  std::vector<Mark> marks;
  for (int s = 0; s <= 1000; ++s) marks.push_back({static_cast<double>(s), in_flight(s), 10LL * s, timed_out_per_s * s});
  SimResult out;
  judge_overload(t, marks, marks.back(), out);
  return out;
}

TEST(SimReport, AStableQueueIsNotOverloadedAGrowingOneIs) {
  SimResult stable = judged([](int s) { return 20LL + (s % 7); });
  EXPECT_FALSE(stable.overloaded);
  EXPECT_NEAR(stable.backlog_growth, 0, 0.01);
  SimResult growing = judged([](int s) { return 20LL + s; });  // +1/s of 10/s arriving: 10%
  EXPECT_TRUE(growing.overloaded);
  EXPECT_NEAR(growing.backlog_growth, 0.1, 0.01);
}

TEST(SimReport, ClientsGivingUpOrABacklogLeftBehindAreOverloadToo) {
  SimResult giving_up = judged([](int) { return 20LL; }, 1);  // 1 of 10 a second times out
  EXPECT_TRUE(giving_up.overloaded);
  EXPECT_NEAR(giving_up.timed_out_share, 0.1, 0.01);
  // Stable at the end, but 1,500 requests left at the last arrival and 300 s to drain them.
  SimResult behind = judged([](int s) { return s < 700 ? 20LL + 2 * s : 1500LL; }, 0, 1300);
  EXPECT_TRUE(behind.overloaded);
  EXPECT_DOUBLE_EQ(behind.drain_s, 300);
  EXPECT_EQ(behind.backlog_at_last_arrival, 1500);
}

}  // namespace
}  // namespace gw::sim_detail
