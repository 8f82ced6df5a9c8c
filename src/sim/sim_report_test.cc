#include "sim/sim_report.h"

#include <gtest/gtest.h>

namespace gw::sim_detail {
namespace {

// Marks every second over 1,000 s of arrivals at 10/s with `in_flight(t)` requests in the system.
template <typename F>
SimResult judged(F in_flight, long long timed_out_per_s = 0, double last_completion_s = 1001, double service_s = 2) {
  SimTallies t;
  for (int i = 0; i < 100; ++i) {  // the requests served: their service time, no queue wait
    t.latency.add(service_s);
    t.wait.add(0);
  }
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

// Minute-long generations over a 1,000 s run: 600 requests in the system at the last arrival
// (6% of them) and 60 s (6% of the span) to finish them, but that is what 10/s for 60 s each
// holds (Little's law), not a backlog. The same 600 at 2 s each would be.
TEST(SimReport, LongServiceOnAShortRunIsNotABacklog) {
  SimResult long_service = judged([](int s) { return 600LL + (s % 5); }, 0, 1060, 60);
  EXPECT_FALSE(long_service.overloaded);
  EXPECT_DOUBLE_EQ(long_service.drain_s, 60);
  SimResult backlog = judged([](int s) { return s < 300 ? 20LL + 2 * s : 600LL; }, 0, 1060, 2);
  EXPECT_TRUE(backlog.overloaded);
}

// Requests that take 300 s in service over a 1,000 s run: the last quarter begins at 750 s,
// under three times that, and a system still filling grows then without being behind: the
// growth is not judged (undetermined). Queueing is judged whatever the run's length: the same
// growth with 2 s of service and the rest waiting is a backlog.
TEST(SimReport, GrowthOnARunShorterThanThreeServiceTimesIsNotJudged) {
  SimResult filling = judged([](int s) { return 20LL + 3 * s; }, 0, 1300, 300);
  EXPECT_TRUE(filling.too_short);
  EXPECT_FALSE(filling.overloaded);
  EXPECT_NEAR(filling.backlog_growth, 0.3, 0.01);
  SimResult long_enough = judged([](int s) { return 20LL + 3 * s; }, 0, 1300, 240);
  EXPECT_FALSE(long_enough.too_short);  // 750 s is more than 3 x 240 s
  EXPECT_TRUE(long_enough.overloaded);
  SimResult queued = judged([](int s) { return 20LL + 3 * s; }, 0, 1300, 2);
  EXPECT_FALSE(queued.too_short);
  EXPECT_TRUE(queued.overloaded);
}

}  // namespace
}  // namespace gw::sim_detail
