#include "core/numbers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <random>

namespace gw {
namespace {

TEST(ParseDecimal, EqualsTheGeneralParserBitForBit) {
  std::mt19937_64 random(7);
  for (int i = 0; i < 200000; ++i) {
    int whole_digits = static_cast<int>(random() % 10), fraction_digits = static_cast<int>(random() % 8);
    std::string text = random() % 4 == 0 ? "-" : "";
    for (int d = 0; d < std::max(1, whole_digits); ++d) text += static_cast<char>('0' + random() % 10);
    if (fraction_digits > 0) text += '.';
    for (int d = 0; d < fraction_digits; ++d) text += static_cast<char>('0' + random() % 10);
    auto fast = parse_decimal(text);
    auto general = parse_finite_double(text);
    ASSERT_TRUE(fast && general) << text;
    ASSERT_EQ(*fast, *general) << text;
  }
}

TEST(ParseDecimal, FallsBackForEverythingElse) {
  EXPECT_DOUBLE_EQ(*parse_decimal("1e3"), 1000);
  EXPECT_DOUBLE_EQ(*parse_decimal(" 42 "), 42);
  EXPECT_DOUBLE_EQ(*parse_decimal("12345678901234567890"), 12345678901234567890.0);
  EXPECT_FALSE(parse_decimal(""));
  EXPECT_FALSE(parse_decimal("-"));
  EXPECT_FALSE(parse_decimal("."));
  EXPECT_FALSE(parse_decimal("1.2.3"));
  EXPECT_FALSE(parse_decimal("nan"));
  EXPECT_FALSE(parse_decimal("inf"));
  EXPECT_FALSE(parse_decimal("1e999"));
  EXPECT_FALSE(parse_decimal("12%"));
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

TEST(ParseSeconds, UnitsPeopleWriteForDurations) {
  EXPECT_EQ(parse_seconds("500ms"), 0.5);
  EXPECT_EQ(parse_seconds("2 s"), 2);
  EXPECT_EQ(parse_seconds("1.5h"), 5400);
  EXPECT_EQ(parse_seconds("2min"), 120);
  EXPECT_EQ(parse_seconds("2m"), 120);
  EXPECT_EQ(parse_seconds("1d"), 86400);
  EXPECT_EQ(parse_seconds("0.25"), 0.25);
  for (const char* bad : {"", "ms", "5 sec", "5x", "s5", "nanms", "1e999s"}) EXPECT_FALSE(parse_seconds(bad)) << bad;
}

TEST(ParseCount, SuffixesPeopleWriteForTokensAndContexts) {
  EXPECT_EQ(parse_count("2T"), 2e12);
  EXPECT_EQ(parse_count("500B"), 5e11);
  EXPECT_EQ(parse_count("8k"), 8000);
  EXPECT_EQ(parse_count("8K"), 8000);
  EXPECT_EQ(parse_count("128Ki"), 131072);
  EXPECT_EQ(parse_count("1.5M"), 1.5e6);
  EXPECT_EQ(parse_count("2Gi"), 2147483648.0);
  EXPECT_EQ(parse_count(" 4096 "), 4096);
  EXPECT_EQ(parse_count("1e12"), 1e12);
  for (const char* bad : {"", "k", "8x", "8 kk", "T2", "nanT", "8kB"}) EXPECT_FALSE(parse_count(bad)) << bad;
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

TEST(Trim, SpacesTabsAndCarriageReturnsOnly) {
  EXPECT_EQ(trim("45"), "45");
  EXPECT_EQ(trim(" 45 %\r"), "45 %");
  EXPECT_EQ(trim("\t\t7\t"), "7");
  EXPECT_EQ(trim("   "), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("a b"), "a b");
  EXPECT_EQ(trim("\nx\v"), "\nx\v");  // other control characters stay
  EXPECT_EQ(trim(" \nx"), "\nx");
}

}  // namespace
}  // namespace gw
