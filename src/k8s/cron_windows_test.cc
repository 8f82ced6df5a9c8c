// Cron windows replayed as KEDA runs them: at each minute a trigger is active when its next end
// comes before its next start (both strictly after now, as robfig/cron's Next), reporting its
// count, else 1; the HPA takes the largest with the floor. Every minute of the period must
// come out at the schedule's count.
#include "k8s/cron_windows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

namespace gw {
namespace {

constexpr int kWeek = 7 * 1440;

// The minutes of a week (Monday 00:00 = 0) at which "M H * * D" fires.
std::vector<int> fire_minutes(const std::string& expr) {
  std::istringstream in(expr);
  int minute = 0, hour = 0;
  std::string dom, month, days;
  in >> minute >> hour >> dom >> month >> days;
  EXPECT_EQ(dom, "*");
  EXPECT_EQ(month, "*");
  std::vector<bool> on(7, days == "*");
  std::istringstream list(days == "*" ? "" : days);
  for (std::string part; std::getline(list, part, ',');) {
    const size_t dash = part.find('-');
    const int from = std::stoi(part.substr(0, dash)), to = dash == std::string::npos ? from : std::stoi(part.substr(dash + 1));
    for (int d = from; d <= to; ++d) on[static_cast<size_t>(d)] = true;
  }
  std::vector<int> out;
  for (int day = 0; day < 7; ++day)  // day 0 is Monday, cron's 1
    if (on[static_cast<size_t>((day + 1) % 7)]) out.push_back(day * 1440 + hour * 60 + minute);
  std::sort(out.begin(), out.end());
  return out;
}

int next_after(const std::vector<int>& fires, long long now) {
  for (int f : fires)
    if (f > now % kWeek) return static_cast<int>(now - now % kWeek + f);
  return static_cast<int>(now - now % kWeek + kWeek + fires.front());
}

// What KEDA's cron triggers and the floor ask for at each minute of `minutes`.
std::vector<int> keda_counts(const std::vector<CronWindow>& windows, int floor, int minutes) {
  std::vector<int> out(static_cast<size_t>(minutes), floor);
  for (const auto& w : windows) {
    const auto starts = fire_minutes(w.start), ends = fire_minutes(w.end);
    EXPECT_NE(w.start, w.end);
    // A week of minutes, a week in (so a window begun the week before is open).
    for (int m = 0; m < minutes; ++m)
      if (next_after(ends, kWeek + m) < next_after(starts, kWeek + m)) out[static_cast<size_t>(m)] = std::max(out[static_cast<size_t>(m)], w.replicas);
  }
  return out;
}

// What CronJobs setting the floor at their times leave at each minute of a week: the value of
// the latest to fire at or before it (a week in, so last week's latest counts); ones firing at
// the same minute must agree. -1 where none ever fires.
std::vector<int> floor_by_cronjobs(const std::vector<CronChange>& changes) {
  std::vector<std::pair<int, int>> fires;  // (minute of the week, value)
  for (const auto& c : changes)
    for (int f : fire_minutes(c.at)) fires.emplace_back(f, c.replicas);
  std::sort(fires.begin(), fires.end());
  for (size_t i = 1; i < fires.size(); ++i) {
    if (fires[i].first == fires[i - 1].first) {
      EXPECT_EQ(fires[i].second, fires[i - 1].second) << "two CronJobs at minute " << fires[i].first << " disagree";
    }
  }
  std::vector<int> out(static_cast<size_t>(kWeek), fires.empty() ? -1 : fires.back().second);
  size_t next = 0;
  for (int m = 0; m < kWeek; ++m) {
    if (m > 0) out[static_cast<size_t>(m)] = out[static_cast<size_t>(m - 1)];
    while (next < fires.size() && fires[next].first == m) out[static_cast<size_t>(m)] = fires[next++].second;
  }
  return out;
}

std::vector<int> at_least(std::vector<int> counts, int floor) {
  for (int& c : counts) c = std::max(c, floor);
  return counts;
}

// A random hourly schedule of `hours` (counts from `lowest`, `values` of them), by minute, each
// hour's count asked a random lead of 0-149 minutes ahead, as the autoscaler asks it.
std::vector<int> random_hourly_by_minute(std::mt19937& rng, int hours, int lowest, int values) {
  std::vector<int> hourly(static_cast<size_t>(hours));
  for (int& h : hourly) h = lowest + static_cast<int>(rng() % static_cast<unsigned>(values));
  const int lead_min = static_cast<int>(rng() % 150);
  std::vector<int> counts(static_cast<size_t>(hours * 60));
  for (int m = 0; m < hours * 60; ++m)
    for (int h = m / 60; h <= (m + lead_min) / 60; ++h)
      counts[static_cast<size_t>(m)] = std::max(counts[static_cast<size_t>(m)], hourly[static_cast<size_t>(h % hours)]);
  return counts;
}

// A daily schedule repeated over the week, for the replay.
std::vector<int> over_week(const std::vector<int>& counts) {
  std::vector<int> week;
  while (week.size() < static_cast<size_t>(kWeek)) week.insert(week.end(), counts.begin(), counts.end());
  return week;
}

std::vector<int> weekly(int floor) { return std::vector<int>(static_cast<size_t>(kWeek), floor); }
void set(std::vector<int>& counts, int from, int to, int replicas) {
  for (int m = from; m < to; ++m) counts[static_cast<size_t>(m % static_cast<int>(counts.size()))] = replicas;
}

TEST(CronWindows, WeekdaysShareATriggerAndADifferentMondayHasItsOwn) {
  auto counts = weekly(1);
  for (int day = 0; day < 5; ++day) set(counts, day * 1440 + 8 * 60 + 43, day * 1440 + 18 * 60, 3);
  set(counts, 12 * 60, 13 * 60, 4);  // Monday's lunch
  const auto windows = cron_windows(counts, 1);
  EXPECT_EQ(keda_counts(windows, 1, kWeek), counts);
  ASSERT_EQ(windows.size(), 4u);
  const auto shared = std::find_if(windows.begin(), windows.end(), [](const CronWindow& w) { return w.start == "43 8 * * 2-5"; });
  ASSERT_NE(shared, windows.end());
  EXPECT_EQ(shared->end, "0 18 * * 2-5");
  EXPECT_EQ(shared->replicas, 3);
  EXPECT_EQ(shared->note, "Tue-Fri 08:43 to 18:00");
}

TEST(CronWindows, RunsAcrossMidnightAndTheWeeksEnd) {
  auto counts = weekly(2);
  set(counts, 6 * 1440 + 22 * 60, kWeek + 6 * 60, 5);                                        // Sunday night into Monday
  for (int day = 1; day < 4; ++day) set(counts, day * 1440 + 23 * 60, day * 1440 + 25 * 60, 3);  // Tue-Thu 23:00-01:00
  set(counts, 4 * 1440 + 18 * 60 + 30, 5 * 1440 + 20 * 60, 4);                              // Friday evening to Saturday night
  const auto windows = cron_windows(counts, 2);
  EXPECT_EQ(keda_counts(windows, 2, kWeek), counts);
  ASSERT_EQ(windows.size(), 3u);
  for (const auto& w : windows) {
    if (w.replicas == 5) {
      EXPECT_EQ(w.start + " / " + w.end, "0 22 * * 0 / 0 6 * * 1");
    }
    if (w.replicas == 3) {
      EXPECT_EQ(w.start + " / " + w.end, "0 23 * * 2-4 / 0 1 * * 3-5");
    }
    if (w.replicas == 4) {
      EXPECT_EQ(w.note, "Fri 18:30 to 20:00 the next day");
    }
  }
}

TEST(CronWindows, OneCountThroughoutTakesTwoHalvesAndAtTheFloorNone) {
  const std::vector<int> day(1440, 3);
  const auto windows = cron_windows(day, 2);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].start, "0 0 * * *");
  EXPECT_EQ(keda_counts(windows, 2, kWeek), over_week(day));
  EXPECT_TRUE(cron_windows(day, 3).empty());
  EXPECT_TRUE(cron_windows(std::vector<int>(1000, 5), 1).empty());  // neither a day nor a week
}

// Hourly schedules, each hour's count asked for a lead ahead (as the autoscaler asks it), over
// a day or a week: the triggers reproduce every minute.
TEST(CronWindows, RandomHourlySchedulesWithLeadsReplayExactly) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int hours = trial % 2 ? 24 : 168;
    const int floor = 1 + static_cast<int>(rng() % 2);
    const std::vector<int> counts = random_hourly_by_minute(rng, hours, floor, 3);
    const auto windows = cron_windows(counts, floor);
    EXPECT_EQ(keda_counts(windows, floor, kWeek), hours == 24 ? over_week(counts) : counts) << "trial " << trial;
  }
}

// The same schedules as an HPA's floor that CronJobs set: one job per change of the count,
// weekdays sharing one, and every minute of the week at the schedule's count.
TEST(CronChanges, AWeekdayRampIsTwoJobsThatSetTheFloor) {
  auto counts = weekly(1);
  for (int day = 0; day < 5; ++day) set(counts, day * 1440 + 8 * 60 + 43, day * 1440 + 18 * 60, 3);
  const auto changes = cron_changes(counts, 1);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].at, "43 8 * * 1-5");
  EXPECT_EQ(changes[0].replicas, 3);
  EXPECT_EQ(changes[0].note, "Mon-Fri 08:43");
  EXPECT_EQ(changes[1].at, "0 18 * * 1-5");
  EXPECT_EQ(changes[1].replicas, 1);
  EXPECT_EQ(changes[0].holds_minutes, 9 * 60 + 17);      // to 18:00
  EXPECT_EQ(changes[1].holds_minutes, 14 * 60 + 43);     // Monday to Thursday: to 08:43 the next day
  EXPECT_EQ(floor_by_cronjobs(changes), counts);
}

TEST(CronChanges, RampsAcrossMidnightAndCountsBelowTheFloor) {
  auto counts = weekly(0);
  set(counts, 6 * 1440 + 22 * 60, kWeek + 6 * 60, 5);  // Sunday night into Monday
  set(counts, 1 * 1440 + 23 * 60, 2 * 1440 + 60, 3);    // Tuesday 23:00-01:00
  set(counts, 2 * 1440 + 60, 2 * 1440 + 120, 4);        // then 4 for an hour: two changes in a row
  const auto changes = cron_changes(counts, 2);
  EXPECT_EQ(floor_by_cronjobs(changes), at_least(counts, 2));
  for (const auto& c : changes) EXPECT_GE(c.replicas, 2) << c.at;
  EXPECT_TRUE(cron_changes(std::vector<int>(1440, 3), 2).empty());   // one count throughout: the floor is it
  EXPECT_TRUE(cron_changes(std::vector<int>(1440, 1), 2).empty());   // all below the floor
  EXPECT_TRUE(cron_changes(std::vector<int>(1000, 5), 1).empty());   // neither a day nor a week
}

TEST(CronChanges, RandomHourlySchedulesWithLeadsReplayExactly) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    const int hours = trial % 2 ? 24 : 168;
    const int floor = 1 + static_cast<int>(rng() % 2);
    const std::vector<int> counts = random_hourly_by_minute(rng, hours, floor - 1, 4);
    const auto changes = cron_changes(counts, floor);
    const auto expected = at_least(hours == 24 ? over_week(counts) : counts, floor);
    if (changes.empty()) {
      EXPECT_EQ(std::count(expected.begin(), expected.end(), expected.front()), kWeek) << "trial " << trial;
    } else {
      EXPECT_EQ(floor_by_cronjobs(changes), expected) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace gw
