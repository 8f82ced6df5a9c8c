#include "sim/kv_cache.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/llm_step_scheduler.h"

namespace gw::sim_detail {

KvCache::KvCache(long long capacity_blocks, int block_tokens)
    : capacity_blocks_(capacity_blocks), block_tokens_(std::max(1, block_tokens)),
      by_phase_(static_cast<size_t>(block_tokens_), 0) {}

long long KvCache::blocks_for(double tokens) const { return blocks_for_tokens(tokens, block_tokens_); }

int KvCache::phase_of(long long step, double tokens) const {
  const long long base = static_cast<long long>(tokens);
  return static_cast<int>(((step - base) % block_tokens_ + block_tokens_) % block_tokens_);
}

void KvCache::share_pool_with(KvCache& first) {
  if (!first.pool_) first.pool_ = std::make_shared<Pool>(Pool{first.capacity_blocks_, first.used_blocks_, 1});
  pool_ = first.pool_;
  pool_->capacity_blocks += capacity_blocks_;
  pool_->used_blocks += used_blocks_;
  pool_->sharers++;
}

double KvCache::mean_used_fraction(double duration_s) const {
  const long long capacity = capacity_blocks();
  return capacity > 0 && duration_s > 0 ? block_s_ / static_cast<double>(capacity) / duration_s : 0;
}

std::string KvCache::check(long long held_blocks) const {
  if (used_blocks_ < 0 || used_blocks_ > capacity_blocks())
    return fmt::format("{} KV blocks used of {}", used_blocks_, capacity_blocks());
  if (pool_ && (pool_->used_blocks < used_blocks_ || pool_->used_blocks > pool_->capacity_blocks))
    return fmt::format("{} KV blocks used of a pool of {} shared by {} lanes, {} of them by this one", pool_->used_blocks,
                       pool_->capacity_blocks, pool_->sharers, used_blocks_);
  if (held_blocks != used_blocks_) return fmt::format("{} KV blocks counted, requests hold {}", used_blocks_, held_blocks);
  return {};
}

}  // namespace gw::sim_detail
