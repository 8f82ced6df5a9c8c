#include "perf/request_lengths.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

TEST(RequestLengths, FixedLengthsAreOneRequestsLengths) {
  RequestLengths l = RequestLengths::fixed(128, 2048);
  EXPECT_DOUBLE_EQ(l.slot_context_tokens(), 128 + 1024);
  EXPECT_DOUBLE_EQ(l.slot_reserved_tokens(), 128 + 2048);
  EXPECT_DOUBLE_EQ(l.prefill_context_tokens(), 128);
  // The same lengths read as requests give the same averages.
  RequestLengths same = RequestLengths::from_pairs({{128, 2048}, {128, 2048}, {128, 2048}});
  EXPECT_EQ(same.requests, 3u);
  EXPECT_DOUBLE_EQ(same.slot_context_tokens(), l.slot_context_tokens());
  EXPECT_DOUBLE_EQ(same.slot_reserved_tokens(), l.slot_reserved_tokens());
  EXPECT_DOUBLE_EQ(same.prefill_context_tokens(), l.prefill_context_tokens());
}

// A request holds its slot for its output tokens: of a 10-token and a 30-token answer to 100-token
// prompts, the longer fills three quarters of a slot's steps.
TEST(RequestLengths, LongOutputsFillTheRunningBatch) {
  RequestLengths l = RequestLengths::from_pairs({{100, 10}, {100, 30}});
  EXPECT_DOUBLE_EQ(l.mean_input_tokens, 100);
  EXPECT_DOUBLE_EQ(l.mean_output_tokens, 20);
  // Steps: 10 at context 100 + 5 on average, 30 at 100 + 15: (10 x 105 + 30 x 115) / 40.
  EXPECT_DOUBLE_EQ(l.slot_context_tokens(), (10 * 105.0 + 30 * 115.0) / 40);
  EXPECT_GT(l.slot_context_tokens(), 100 + 20 / 2.0);
  // Reserved: 110 tokens for 10 steps, 130 for 30 steps.
  EXPECT_DOUBLE_EQ(l.slot_reserved_tokens(), (10 * 110.0 + 30 * 130.0) / 40);
  // Prefill attention's pairs grow with the square of each prompt: 100 and 300 tokens weigh as 250.
  RequestLengths prompts = RequestLengths::from_pairs({{100, 10}, {300, 10}});
  EXPECT_DOUBLE_EQ(prompts.prefill_context_tokens(), (100.0 * 100 + 300.0 * 300) / 400);
}

TEST(RequestLengths, ReadFromCsvWithErrorsNamingLineAndField) {
  auto l = read_request_lengths("# lengths\ninput_length,output_length\n100,10\n100,30\n", "l.csv");
  ASSERT_TRUE(l.ok()) << l.error().to_string();
  EXPECT_EQ(l.value().requests, 2u);
  EXPECT_DOUBLE_EQ(l.value().mean_output_tokens, 20);
  auto zero = read_request_lengths("input_length,output_length\n100,10\n100,0\n", "l.csv");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().line, 3);
  EXPECT_EQ(zero.error().field, "output_length");
  auto missing = read_request_lengths("input_length,generated\n100,10\n", "l.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().field, "output_length");
  auto empty = read_request_lengths("input_length,output_length\n", "l.csv");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().file, "l.csv");
}

}  // namespace
}  // namespace gw
