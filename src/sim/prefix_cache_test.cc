#include "sim/prefix_cache.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace gw::sim_detail {
namespace {

using Chain = std::vector<unsigned long long>;

TEST(PrefixCache, AHitIsTheLongestRunCachedFromTheFirstBlock) {
  PrefixCache cache(false, std::numeric_limits<double>::infinity());
  const Chain a = {1, 2, 3, 4};
  EXPECT_EQ(cache.longest_hit(a.data(), a.size(), 10), 0u);
  cache.acquire(a.data(), a.size(), 512);
  EXPECT_EQ(cache.longest_hit(a.data(), a.size(), 10), 4u);
  EXPECT_EQ(cache.longest_hit(a.data(), a.size(), 3), 3u);  // capped by the caller
  const Chain b = {1, 2, 9, 4};  // block 4 here is a different chain's: 9 breaks the run
  EXPECT_EQ(cache.longest_hit(b.data(), b.size(), 10), 2u);
  const Chain c = {7, 2, 3};
  EXPECT_EQ(cache.longest_hit(c.data(), c.size(), 10), 0u);
  EXPECT_EQ(cache.pins(), 4);
  EXPECT_EQ(cache.check(), "");
}

TEST(PrefixCache, PinnedBlocksAreNeverEvictedAndTheUnusedGoLastBlockFirst) {
  PrefixCache cache(true, 0);
  const Chain a = {1, 2, 3};
  const Chain b = {1, 2, 5, 6};
  cache.acquire(a.data(), a.size(), 16);
  cache.acquire(b.data(), b.size(), 16);  // shares 1 and 2 with a
  EXPECT_EQ(cache.cached_blocks(), 5u);
  EXPECT_EQ(cache.pins(), 7);
  cache.evict_to(0);
  EXPECT_EQ(cache.cached_blocks(), 5u) << "everything is pinned";
  cache.release(a.data(), a.size());
  EXPECT_DOUBLE_EQ(cache.unused_tokens(), 16);  // only block 3: 1 and 2 are still b's
  cache.release(b.data(), b.size());
  EXPECT_DOUBLE_EQ(cache.unused_tokens(), 5 * 16);
  EXPECT_EQ(cache.check(), "");
  // Eviction order: a's tail (3), then b's tail first (6, 5), then 2 and 1.
  cache.evict_to(4 * 16);
  EXPECT_EQ(cache.longest_hit(a.data(), a.size(), 10), 2u);
  EXPECT_EQ(cache.longest_hit(b.data(), b.size(), 10), 4u);
  cache.evict_to(2 * 16);
  EXPECT_EQ(cache.longest_hit(b.data(), b.size(), 10), 2u);
  EXPECT_EQ(cache.evictions(), 3);
  // A hit pins again: those blocks leave the eviction order.
  cache.acquire(b.data(), 2, 16);
  EXPECT_DOUBLE_EQ(cache.unused_tokens(), 0);
  cache.evict_to(0);
  EXPECT_EQ(cache.longest_hit(b.data(), b.size(), 10), 2u);
  EXPECT_EQ(cache.check(), "");
}

TEST(PrefixCache, AReusedSlotAndClearingKeepTheCountsRight) {
  PrefixCache cache(false, 32);
  const Chain a = {1, 2, 3};
  cache.acquire(a.data(), a.size(), 16);
  cache.release(a.data(), a.size());
  cache.evict_to_own_room();  // room for two blocks of 16
  EXPECT_EQ(cache.cached_blocks(), 2u);
  EXPECT_EQ(cache.longest_hit(a.data(), a.size(), 10), 2u);
  const Chain b = {8, 9};
  cache.acquire(b.data(), b.size(), 16);  // reuses the evicted slot
  EXPECT_EQ(cache.check(), "");
  cache.release(b.data(), b.size());
  cache.evict_to_own_room();
  EXPECT_EQ(cache.cached_blocks(), 2u);
  EXPECT_EQ(cache.longest_hit(a.data(), a.size(), 10), 0u) << "a's blocks were freed earlier: evicted first";
  EXPECT_EQ(cache.check(), "");
  cache.clear();
  EXPECT_EQ(cache.cached_blocks(), 0u);
  EXPECT_EQ(cache.evictions(), 3) << "evictions are counted across restarts";
}

}  // namespace
}  // namespace gw::sim_detail
