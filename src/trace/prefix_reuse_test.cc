#include "trace/prefix_reuse.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

// Four requests of 1,024 tokens in two 512-token blocks: two conversations (ids 1,2 then 1,3;
// 7,8 then 7,8 again). On one replica the second turns find one block and two blocks (capped at
// 1,023: the last token is computed); on two replicas taking turns, request 3 lands beside
// request 1 (finding block 1) and request 4 beside request 2 (finding both).
TEST(PrefixReuse, HitsDependOnWhereTurnsLand) {
  PrefixReuse reuse;
  reuse.add(1024, {1, 2}, 512);
  reuse.add(1024, {7, 8}, 512);
  reuse.add(1024, {1, 3}, 512);
  reuse.add(1024, {7, 8}, 512);
  auto curve = reuse.curve({1, 2, 4});
  ASSERT_EQ(curve.size(), 3u);
  EXPECT_DOUBLE_EQ(curve[0].second, (512 + 1023) / 4096.0);
  EXPECT_DOUBLE_EQ(curve[1].second, (512 + 1023) / 4096.0);
  EXPECT_DOUBLE_EQ(curve[2].second, 0);  // every request on a replica of its own
}

TEST(PrefixReuse, SharesBetweenAndBeyondTheCounts) {
  const std::vector<std::pair<int, double>> curve = {{1, 0.4}, {2, 0.3}, {4, 0.2}};
  EXPECT_DOUBLE_EQ(cached_share_at(curve, 1), 0.4);
  EXPECT_DOUBLE_EQ(cached_share_at(curve, 3), 0.25);
  EXPECT_DOUBLE_EQ(cached_share_at(curve, 8), 0.1);
  EXPECT_DOUBLE_EQ(cached_share_at({}, 8), 0);
}

}  // namespace
}  // namespace gw
