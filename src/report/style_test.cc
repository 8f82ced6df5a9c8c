#include "report/style.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

TEST(Style, ColourOnlyOnATerminalWithoutNoColor) {
  EXPECT_TRUE(colour_wanted(true, nullptr, false, "table"));
  EXPECT_TRUE(colour_wanted(true, "", false, "table"));        // NO_COLOR set but empty does not count
  EXPECT_FALSE(colour_wanted(true, "1", false, "table"));      // NO_COLOR
  EXPECT_FALSE(colour_wanted(false, nullptr, false, "table"));  // piped
  EXPECT_FALSE(colour_wanted(true, nullptr, true, "table"));    // -o FILE
  EXPECT_FALSE(colour_wanted(true, nullptr, false, "md"));
  EXPECT_EQ(paint("x", Style::bad, false), "x");
  EXPECT_EQ(paint("x", Style::bad, true), "\x1b[1;31mx\x1b[0m");
}

}  // namespace
}  // namespace gw
