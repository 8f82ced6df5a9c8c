// Cron fields, names, ranges and steps; starts over a span of real dates; errors that say why.
#include "core/cron.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

TEST(Cron, DailyWeeklyAndStepsOverFourWeeks) {
  std::string why;
  auto daily = parse_cron("0 2 * * *", &why);
  ASSERT_TRUE(daily) << why;
  auto starts = cron_starts(*daily, 2026, 11, 2, 28);  // Monday 2026-11-02
  ASSERT_EQ(starts.size(), 28u);
  EXPECT_EQ(starts[0], 120);
  EXPECT_EQ(starts[1], 1440 + 120);
  auto mondays = parse_cron("0 4 * * 1", &why);
  starts = cron_starts(*mondays, 2026, 11, 2, 28);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts[0], 240);
  EXPECT_EQ(starts[1], 7 * 1440 + 240);
  auto every_quarter_on_weekdays = parse_cron("*/15 9-17 * * MON-FRI", &why);
  ASSERT_TRUE(every_quarter_on_weekdays) << why;
  EXPECT_EQ(cron_starts(*every_quarter_on_weekdays, 2026, 11, 2, 7).size(), 5u * 9 * 4);
  auto sunday_as_seven = parse_cron("30 23 * * 7", &why);
  ASSERT_TRUE(sunday_as_seven) << why;
  starts = cron_starts(*sunday_as_seven, 2026, 11, 2, 7);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0], 6 * 1440 + 23 * 60 + 30);
}

TEST(Cron, DayOfMonthOrWeekdayWhenBothAreSet) {
  std::string why;
  // The 1st of the month, or any Friday (crontab(5): either matches when both are restricted).
  auto cron = parse_cron("0 0 1 * fri", &why);
  ASSERT_TRUE(cron) << why;
  auto starts = cron_starts(*cron, 2026, 11, 2, 30);  // to 2026-12-01
  // Fridays Nov 6, 13, 20, 27 and Dec 1.
  EXPECT_EQ(starts.size(), 5u);
}

TEST(Cron, ErrorsSayWhy) {
  std::string why;
  EXPECT_FALSE(parse_cron("0 2 * *", &why));
  EXPECT_NE(why.find("five fields"), std::string::npos);
  EXPECT_FALSE(parse_cron("0 25 * * *", &why));
  EXPECT_NE(why.find("hour"), std::string::npos);
  EXPECT_FALSE(parse_cron("*/0 * * * *", &why));
  EXPECT_NE(why.find("step"), std::string::npos);
  EXPECT_FALSE(parse_cron("0 2 * * funday", &why));
}

}  // namespace
}  // namespace gw
