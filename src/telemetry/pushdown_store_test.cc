#include "telemetry/pushdown_store.h"

#include <gtest/gtest.h>

namespace gw::pushdown {
namespace {

TEST(PushDownStore, RunsGrowBothWaysAndForgetTheOldest) {
  HourRun<HourValues> run;
  EXPECT_EQ(run.find(10), nullptr);
  run.at(10).set(kCount, 12);
  run.at(8).set(kCount, 3);  // grown at the front: hour 9 unknown between
  run.at(12).set(kMean, 40.5);
  EXPECT_EQ(run.first_hour, 8);
  ASSERT_EQ(run.hours.size(), 5u);
  EXPECT_EQ((*run.find(8))[kCount], 3);
  EXPECT_FALSE(run.find(9)->any_known());
  EXPECT_EQ((*run.find(10))[kCount], 12);
  EXPECT_DOUBLE_EQ((*run.find(12))[kMean], 40.5);  // the mean kept in double precision
  EXPECT_EQ(run.find(13), nullptr);
  run.forget_before(10);
  EXPECT_EQ(run.first_hour, 10);
  EXPECT_EQ(run.find(9), nullptr);
  EXPECT_EQ((*run.find(10))[kCount], 12);
  run.forget_before(100);
  EXPECT_TRUE(run.hours.empty());
}

TEST(PushDownStore, AnHourIsCompleteOnceSettledAndForgottenWhenCleared) {
  PushDownStore store(900);
  const long long hour = 480000;  // an hour since the epoch; it ends at (hour + 1) x 3600
  const double end_s = static_cast<double>(hour + 1) * 3600;
  store.answered(hour, end_s + 899);
  EXPECT_FALSE(store.complete(hour)) << "answered before it settled: asked again";
  store.answered(hour, end_s + 900);
  EXPECT_TRUE(store.complete(hour));
  store.series["a"].run.at(hour).set(kCount, 60);
  store.series["b"].run.at(hour - 1).set(kCount, 60);
  store.hosts["hostname=n"].run.at(hour).cpu_pct = 12;
  store.clear_hour(hour);
  EXPECT_FALSE(store.complete(hour));
  EXPECT_FALSE(store.series["a"].run.find(hour)->any_known());
  EXPECT_TRUE(std::isnan(store.hosts["hostname=n"].run.find(hour)->cpu_pct));
  // Forgetting the hours before `hour` drops b (nothing left) and keeps a's run.
  store.series["a"].run.at(hour).set(kCount, 60);
  store.answered(hour - 1, end_s + 900);
  store.forget_before(hour);
  EXPECT_EQ(store.series.count("b"), 0u);
  ASSERT_EQ(store.series.count("a"), 1u);
  EXPECT_FALSE(store.complete(hour - 1));
}

}  // namespace
}  // namespace gw::pushdown

namespace gw::pushdown {
namespace {

// A watcher's store over two weeks of hourly refreshes: it holds the window's hours and no more,
// however long it runs, and series that stop reporting leave it once out of the window.
TEST(PushDownStore, HoldsTheWindowAndNoMoreOverWeeksOfRefreshes) {
  PushDownStore store(900);
  const long long window_hours = 168, first = 480000;
  size_t most = 0;
  for (long long hour = first; hour < first + 14 * 24; ++hour) {
    for (int s = 0; s < 1000; ++s) {
      // A tenth of the series are pods of 5 hours, each hour new ones.
      const bool pod = s % 10 == 0;
      const std::string id = pod ? "pod-" + std::to_string(s) + "-" + std::to_string((hour - first) / 5) : "gpu-" + std::to_string(s);
      store.series[id].run.at(hour).set(kCount, 12);
    }
    store.answered(hour, static_cast<double>(hour + 2) * 3600);
    store.forget_before(hour + 1 - window_hours);
    size_t hours = 0;
    for (const auto& [id, series] : store.series) hours += series.run.hours.size();
    most = std::max(most, hours);
    EXPECT_LE(hours, static_cast<size_t>(window_hours) * 1000) << hour;
  }
  // 900 GPUs and, per pod slot, the 35 five-hour pods a 168-hour window can touch.
  EXPECT_LE(store.series.size(), 900u + 100u * ((window_hours - 1) / 5 + 2));
  EXPECT_LE(most, static_cast<size_t>(window_hours) * 1000);
}

}  // namespace
}  // namespace gw::pushdown
