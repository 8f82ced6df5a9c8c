#include "core/csv.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

TEST(Csv, ReadsQuotedFieldsAndRemembersLines) {
  auto table = parse_csv("a,b,c\n# comment\n1,\"x,y\",3\r\n\n4,\"say \"\"hi\"\"\",6\n", "t.csv");
  ASSERT_TRUE(table.ok()) << table.error().to_string();
  ASSERT_EQ(table.value().rows.size(), 2u);
  EXPECT_EQ(table.value().rows[0].cells[1], "x,y");
  EXPECT_EQ(table.value().rows[0].line, 3);
  EXPECT_EQ(table.value().rows[1].cells[1], "say \"hi\"");
  EXPECT_EQ(table.value().rows[1].line, 5);
}

TEST(Csv, RejectsRowsWithTheWrongColumnCount) {
  auto table = parse_csv("a,b\n1,2\n3\n", "t.csv");
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.error().line, 3);
  EXPECT_EQ(table.error().to_string(), "t.csv:3: expected 2 columns as in the header, found 1");
}

TEST(Csv, RejectsUnterminatedQuotesBinaryAndEmptyFiles) {
  EXPECT_EQ(parse_csv("a,b\n1,\"oops\n", "t.csv").error().line, 2);
  EXPECT_NE(parse_csv(std::string("a,b\n1,\0\n", 8), "t.csv").error().message.find("binary"), std::string::npos);
  EXPECT_NE(parse_csv("", "t.csv").error().message.find("empty"), std::string::npos);
}

TEST(Csv, RecordNamesTheFieldOfABadNumber) {
  auto table = parse_csv("name,memory_gib\nx,12GB\ny,nan\nz,-1\n", "acc.csv");
  ASSERT_TRUE(table.ok());
  CsvRecord bad_unit(table.value(), table.value().rows[0]);
  bad_unit.number("memory_gib", 0, 100);
  ASSERT_FALSE(bad_unit.ok());
  EXPECT_EQ(bad_unit.error().to_string(), "acc.csv:2: field 'memory_gib': '12GB' is not a finite number");
  CsvRecord not_a_number(table.value(), table.value().rows[1]);
  not_a_number.number("memory_gib", 0, 100);
  EXPECT_FALSE(not_a_number.ok());
  CsvRecord negative(table.value(), table.value().rows[2]);
  negative.number("memory_gib", 0, 100);
  EXPECT_EQ(negative.error().line, 4);
  EXPECT_NE(negative.error().message.find("outside"), std::string::npos);
}

}  // namespace
}  // namespace gw
