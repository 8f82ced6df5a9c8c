#include "report/progress.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

// Disabled progress (not a terminal, or --quiet) writes nothing at all.
TEST(Progress, SilentWhenDisabled) {
  testing::internal::CaptureStderr();
  {
    Progress progress("simulating", "requests", 100, false);
    for (int i = 0; i <= 100; ++i) progress.update(i);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// Enabled, it draws a bar on one line and clears it at the end.
TEST(Progress, DrawsABarAndClearsIt) {
  testing::internal::CaptureStderr();
  {
    Progress progress("simulating", "requests", 100, true);
    progress.update(50);
  }
  std::string text = testing::internal::GetCapturedStderr();
  EXPECT_NE(text.find("simulating [###############...............]  50%"), std::string::npos) << text;
  EXPECT_NE(text.find("ETA"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 4), "\r\x1b[K");
}

}  // namespace
}  // namespace gw
