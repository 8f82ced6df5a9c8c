#include "perf/decode_attention_kernel.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

// Each name parses to its kernel; anything else (another spelling, an empty name) is no kernel,
// and the error names the choices.
TEST(DecodeAttentionKernel, NamesParseAndOthersAreRefused) {
  ASSERT_EQ(decode_attention_kernels().size(), 2u);
  EXPECT_EQ(decode_attention_kernels()[0], "grouped");
  EXPECT_EQ(decode_attention_per_query_head("grouped"), false);
  EXPECT_EQ(decode_attention_per_query_head("per-query-head"), true);
  EXPECT_FALSE(decode_attention_per_query_head("xqa"));
  EXPECT_FALSE(decode_attention_per_query_head("Grouped"));
  EXPECT_FALSE(decode_attention_per_query_head(""));
  EXPECT_EQ(unknown_decode_attention_message("xqa"), "'xqa' is not one of grouped, per-query-head");
}

}  // namespace
}  // namespace gw
