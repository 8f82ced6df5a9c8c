#include "telemetry/pushdown_coverage.h"

#include <gtest/gtest.h>

namespace gw::pushdown {
namespace {

// Whole hours: scrapes every 5 minutes (12 or 13 samples in an hour, as the window's ends fall)
// and slower step by 5 minutes; every 4 minutes, every minute, every 15 s step by the minute.
TEST(PushDownCoverage, MinuteStepIsFiveOnlyWhereNoSeriesIsScrapedOftenerThanFiveMinutes) {
  EXPECT_EQ(minute_step_min(12, 3600), 5);
  EXPECT_EQ(minute_step_min(13, 3600), 5);
  EXPECT_EQ(minute_step_min(7, 3600), 5);  // every 10 minutes
  EXPECT_EQ(minute_step_min(1, 3600), 5);  // one sample: nothing denser to resolve
  EXPECT_EQ(minute_step_min(0, 3600), 5);
  EXPECT_EQ(minute_step_min(16, 3600), 1);  // every 4 minutes
  EXPECT_EQ(minute_step_min(61, 3600), 1);
  EXPECT_EQ(minute_step_min(241, 3600), 1);
  // The hour in progress, 10 minutes in: 2-3 samples at 5 minutes, 10-11 at 1 minute.
  EXPECT_EQ(minute_step_min(3, 600), 5);
  EXPECT_EQ(minute_step_min(10, 600), 1);
}

}  // namespace
}  // namespace gw::pushdown
