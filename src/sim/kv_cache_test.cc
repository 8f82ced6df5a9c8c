#include "sim/kv_cache.h"

#include <gtest/gtest.h>

namespace gw::sim_detail {
namespace {

TEST(KvCache, CountsBlocksAndChecksThemAgainstWhatRequestsHold) {
  KvCache cache(100, 16);
  EXPECT_EQ(cache.blocks_for(1), 1);
  EXPECT_EQ(cache.blocks_for(16), 1);
  EXPECT_EQ(cache.blocks_for(17), 2);
  cache.allocate(30);
  EXPECT_EQ(cache.free_blocks(), 70);
  EXPECT_DOUBLE_EQ(cache.used_fraction(), 0.3);
  EXPECT_EQ(cache.check(30), "");
  EXPECT_EQ(cache.check(29), "30 KV blocks counted, requests hold 29");
  cache.allocate(80);
  EXPECT_EQ(cache.check(110), "110 KV blocks used of 100");
  cache.release(110);
  EXPECT_EQ(cache.check(0), "");
}

// Two lanes of a pipelined replica on one pool: each counts its own blocks, both admit against
// the pool's free blocks, and either may hold more than its share.
TEST(KvCache, LanesSharingAPoolAdmitAgainstItsFreeBlocks) {
  KvCache first(100, 16), second(100, 16);
  EXPECT_EQ(first.pool_sharers(), 1);
  second.share_pool_with(first);
  EXPECT_EQ(first.pool_sharers(), 2);
  EXPECT_EQ(second.capacity_blocks(), 200);
  first.allocate(150);
  EXPECT_EQ(second.free_blocks(), 50);
  EXPECT_EQ(second.used_blocks(), 0);
  EXPECT_DOUBLE_EQ(second.used_fraction(), 0.75);  // the pool's
  EXPECT_EQ(first.check(150), "");
  second.allocate(60);
  EXPECT_EQ(second.check(60), "210 KV blocks used of a pool of 200 shared by 2 lanes, 60 of them by this one");
  second.release(60);
  first.release(150);
  EXPECT_EQ(first.free_blocks(), 200);
}

TEST(KvCache, ASequenceNeedsANewBlockEveryBlockOfSteps) {
  KvCache cache(1000, 4);
  // 10 tokens joining at step 0: its 11th token (step 0's) fits block 3, its 13th (step 2) opens block 4.
  const int phase = cache.phase_of(0, 10);
  cache.join(phase);
  long long opened = 0;
  double tokens = 10;
  for (long long step = 0; step < 40; ++step) {
    const long long before = cache.blocks_for(tokens);
    tokens += 1;  // the token this step writes
    const bool grows = cache.blocks_for(tokens) > before;
    EXPECT_EQ(cache.grows_at(step, phase), grows) << "step " << step;
    EXPECT_EQ(cache.growing_at(step), grows ? 1 : 0) << "step " << step;
    opened += grows;
  }
  EXPECT_EQ(opened, 10);
  cache.leave(phase);
  for (long long step = 0; step < 4; ++step) EXPECT_EQ(cache.growing_at(step), 0);
}

TEST(KvCache, BlockSecondsGiveTheMeanUse) {
  KvCache cache(200, 16);
  cache.allocate(100);
  cache.accrue(2.0);  // half full for 2 s
  cache.release(100);
  cache.accrue(2.0);  // empty for 2 s
  EXPECT_DOUBLE_EQ(cache.block_s(), 200);
  EXPECT_DOUBLE_EQ(cache.mean_used_fraction(4.0), 0.25);
  EXPECT_DOUBLE_EQ(KvCache().mean_used_fraction(4.0), 0);  // a classic replica has none
}

}  // namespace
}  // namespace gw::sim_detail
