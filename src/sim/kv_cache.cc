#include "sim/kv_cache.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/llm_step_scheduler.h"

namespace gw::sim_detail {

KvCache::KvCache(long long capacity_blocks, int block_tokens, KvLayerGroups groups)
    : capacity_blocks_(capacity_blocks), block_tokens_(std::max(1, block_tokens)), groups_(groups),
      by_phase_(static_cast<size_t>(block_tokens_), 0),
      windowed_by_phase_(groups_.windowed() ? static_cast<size_t>(block_tokens_) : 0, 0) {}

long long KvCache::blocks_for(double tokens) const {
  return groups_.blocks_for(blocks_for_tokens(tokens, block_tokens_));
}

double KvCache::tokens_within(long long blocks) const {
  return static_cast<double>(groups_.sequence_blocks_within(blocks)) * block_tokens_;
}

KvCache::Decoding KvCache::join(long long step, double tokens) {
  const long long base = static_cast<long long>(tokens);
  Decoding d;
  d.phase = static_cast<int>(((step - base) % block_tokens_ + block_tokens_) % block_tokens_);
  ++by_phase_[static_cast<size_t>(d.phase)];
  if (groups_.windowed()) {
    // Its sliding groups grow at its steps before the one whose token passes the window.
    d.window_until = step + groups_.window_blocks * block_tokens_ - base;
    d.in_window = d.window_until > step;
    if (d.in_window) {
      ++windowed_by_phase_[static_cast<size_t>(d.phase)];
      ++window_ends_[d.window_until];
    }
  }
  return d;
}

void KvCache::leave(const Decoding& d) {
  --by_phase_[static_cast<size_t>(d.phase)];
  if (!d.in_window || d.window_until <= window_ends_through_) return;  // past its window by now
  auto end = window_ends_.find(d.window_until);
  --windowed_by_phase_[static_cast<size_t>(d.phase)];
  if (--end->second == 0) window_ends_.erase(end);
}

long long KvCache::growing_at(long long step) {
  const size_t phase = static_cast<size_t>(step % block_tokens_);
  if (!groups_.windowed()) return by_phase_[phase];
  while (!window_ends_.empty() && window_ends_.begin()->first <= step) {
    const auto [end, sequences] = *window_ends_.begin();
    windowed_by_phase_[static_cast<size_t>(end % block_tokens_)] -= sequences;
    window_ends_.erase(window_ends_.begin());
  }
  window_ends_through_ = std::max(window_ends_through_, step);
  return groups_.full_groups * by_phase_[phase] + groups_.sliding_groups * windowed_by_phase_[phase];
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
