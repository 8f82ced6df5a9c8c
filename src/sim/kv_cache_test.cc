#include "sim/kv_cache.h"

#include <cstddef>
#include <random>
#include <vector>

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
  const KvCache::Decoding decoding = cache.join(0, 10);
  long long opened = 0;
  double tokens = 10;
  for (long long step = 0; step < 40; ++step) {
    const long long before = cache.blocks_for(tokens);
    tokens += 1;  // the token this step writes
    const bool grows = cache.blocks_for(tokens) > before;
    EXPECT_EQ(cache.growth_at(step, decoding), grows ? 1 : 0) << "step " << step;
    EXPECT_EQ(cache.growing_at(step), grows ? 1 : 0) << "step " << step;
    opened += grows;
  }
  EXPECT_EQ(opened, 10);
  cache.leave(decoding);
  for (long long step = 40; step < 44; ++step) EXPECT_EQ(cache.growing_at(step), 0);
}

// gpt-oss's layout in small: one full-attention group and one sliding group, a window of 8
// tokens in blocks of 4 (3 blocks kept: the window spans one more while it slides).
KvLayerGroups one_full_one_sliding_group() {
  ModelArch arch;
  arch.num_layers = 4;
  arch.sliding_window = 8;
  arch.sliding_window_pattern = 2;
  return kv_layer_groups(arch, 4);
}

TEST(KvCache, ASlidingGroupStopsGrowingPastItsWindow) {
  const KvLayerGroups groups = one_full_one_sliding_group();
  ASSERT_EQ(groups.full_groups, 1);
  ASSERT_EQ(groups.sliding_groups, 1);
  ASSERT_EQ(groups.window_blocks, 3);
  KvCache cache(1000, 4, groups);
  EXPECT_EQ(cache.blocks_for(4), 2);     // a block in each group
  EXPECT_EQ(cache.blocks_for(12), 6);    // three each: the window's reach
  EXPECT_EQ(cache.blocks_for(100), 28);  // 25 full + 3 sliding
  EXPECT_EQ(cache.tokens_within(6), 12);
  EXPECT_EQ(cache.tokens_within(28), 100);
  EXPECT_EQ(cache.tokens_within(27), 96);  // 24 full + 3 sliding
  EXPECT_EQ(cache.cached_tokens_within(28), 56);  // a cached block holds both groups'

  const KvCache::Decoding decoding = cache.join(0, 2);
  double tokens = 2;
  long long held = cache.blocks_for(tokens);
  for (long long step = 0; step < 60; ++step) {
    const long long grows = cache.growth_of(tokens);
    EXPECT_EQ(cache.growth_at(step, decoding), grows) << "step " << step;
    EXPECT_EQ(cache.growing_at(step), grows) << "step " << step;
    held += grows;
    tokens += 1;
  }
  EXPECT_EQ(held, cache.blocks_for(62));  // 16 full + 3 sliding
  EXPECT_EQ(held, 19);
}

TEST(KvCache, GrowthCountedByStepMatchesEverySequencesOwn) {
  // Sequences join and leave at random steps, before and past the window, and every step's
  // growth counted by phase and window end equals the sum of each live sequence's own.
  for (const KvLayerGroups& groups : {KvLayerGroups{}, one_full_one_sliding_group()}) {
    KvCache cache(1 << 20, 4, groups);
    std::mt19937 rng(7);
    struct Live {
      KvCache::Decoding decoding;
      double tokens;
    };
    std::vector<Live> live;
    for (long long step = 0; step < 400; ++step) {
      if (rng() % 3 == 0) {
        const double tokens = static_cast<double>(1 + rng() % 30);
        live.push_back({cache.join(step, tokens), tokens});
      }
      if (!live.empty() && rng() % 4 == 0) {
        const size_t gone = rng() % live.size();
        cache.leave(live[gone].decoding);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(gone));
      }
      long long expected = 0;
      for (Live& l : live) {
        expected += cache.growth_of(l.tokens);
        EXPECT_EQ(cache.growth_at(step, l.decoding), cache.growth_of(l.tokens));
        l.tokens += 1;
      }
      ASSERT_EQ(cache.growing_at(step), expected) << "step " << step << ", " << live.size() << " sequences";
    }
  }
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
