#include "perf/matmul_efficiency.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

// The measured parts answer with a share of peak; parts the table did not measure the same way
// answer nothing, so callers fall back to their family defaults.
TEST(MatmulEfficiency, MeasuredPartsOnly) {
  for (const char* part : {"A100-80GB", "H100", "MI300X", "MI325X"}) {
    auto share = measured_matmul_share(part);
    ASSERT_TRUE(share) << part;
    EXPECT_GT(*share, 0.4) << part;
    EXPECT_LT(*share, 1.0) << part;
  }
  // The 1000 W MI325X sustains more of the same peak than the 750 W MI300X; both less than H100.
  EXPECT_GT(*measured_matmul_share("MI325X"), *measured_matmul_share("MI300X"));
  EXPECT_LT(*measured_matmul_share("MI325X"), *measured_matmul_share("H100"));
  EXPECT_FALSE(measured_matmul_share("GH200"));
  EXPECT_FALSE(measured_matmul_share("Gaudi2"));
  EXPECT_FALSE(measured_matmul_share("L4"));
}

}  // namespace
}  // namespace gw
