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

double KvCache::mean_used_fraction(double duration_s) const {
  return capacity_blocks_ > 0 && duration_s > 0 ? block_s_ / static_cast<double>(capacity_blocks_) / duration_s : 0;
}

std::string KvCache::check(long long held_blocks) const {
  if (used_blocks_ < 0 || used_blocks_ > capacity_blocks_)
    return fmt::format("{} KV blocks used of {}", used_blocks_, capacity_blocks_);
  if (held_blocks != used_blocks_) return fmt::format("{} KV blocks counted, requests hold {}", used_blocks_, held_blocks);
  return {};
}

}  // namespace gw::sim_detail
