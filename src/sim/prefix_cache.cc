#include "sim/prefix_cache.h"

#include <fmt/format.h>

namespace gw::sim_detail {

size_t PrefixCache::longest_hit(const unsigned long long* ids, size_t n, size_t max_blocks) const {
  size_t hit = 0;
  const size_t limit = n < max_blocks ? n : max_blocks;
  while (hit < limit && index_.find(ids[hit]) >= 0) ++hit;
  return hit;
}

void PrefixCache::unlink(int slot) {
  Entry& e = entries_[static_cast<size_t>(slot)];
  if (e.prev >= 0) entries_[static_cast<size_t>(e.prev)].next = e.next;
  else head_ = e.next;
  if (e.next >= 0) entries_[static_cast<size_t>(e.next)].prev = e.prev;
  else tail_ = e.prev;
  e.prev = e.next = -1;
}

void PrefixCache::push_back(int slot) {
  Entry& e = entries_[static_cast<size_t>(slot)];
  e.prev = tail_;
  e.next = -1;
  if (tail_ >= 0) entries_[static_cast<size_t>(tail_)].next = slot;
  else head_ = slot;
  tail_ = slot;
}

void PrefixCache::acquire(const unsigned long long* ids, size_t n, int block_tokens) {
  for (size_t i = 0; i < n; ++i) pin(ids[i], block_tokens);
}

void PrefixCache::acquire(const ChainView& chain, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) pin(chain.data()[i], chain.end(i) - (i > 0 ? chain.end(i - 1) : 0));
}

void PrefixCache::pin(unsigned long long id, double block_tokens) {
  ++pins_;
  {
    const int found = index_.find(id);
    if (found < 0) {
      int slot;
      if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
      } else {
        slot = static_cast<int>(entries_.size());
        entries_.emplace_back();
      }
      entries_[static_cast<size_t>(slot)] = Entry{id, 1, block_tokens, -1, -1};
      index_.insert(id, slot);
      return;
    }
    Entry& e = entries_[static_cast<size_t>(found)];
    if (e.refs++ == 0) {
      unlink(found);
      unused_tokens_ -= e.block_tokens;
    }
  }
}

void PrefixCache::release(const unsigned long long* ids, size_t n) {
  // The chain's last block first: it goes nearer the front of the eviction order.
  for (size_t i = n; i-- > 0;) {
    const int slot = index_.find(ids[i]);
    if (slot < 0) continue;  // not held (a caller's bug shows in check())
    --pins_;
    Entry& e = entries_[static_cast<size_t>(slot)];
    if (--e.refs == 0) {
      push_back(slot);
      unused_tokens_ += e.block_tokens;
    }
  }
}

void PrefixCache::evict_to(double room_tokens) {
  while (unused_tokens_ > room_tokens && head_ >= 0) {
    const int slot = head_;
    Entry& e = entries_[static_cast<size_t>(slot)];
    unlink(slot);
    unused_tokens_ -= e.block_tokens;
    index_.erase(e.id);
    free_slots_.push_back(slot);
    ++evictions_;
  }
}

std::string PrefixCache::check() const {
  double unused = 0;
  size_t in_order = 0;
  for (int slot = head_; slot >= 0; slot = entries_[static_cast<size_t>(slot)].next) {
    const Entry& e = entries_[static_cast<size_t>(slot)];
    if (e.refs != 0) return fmt::format("prefix block {} is pinned {} times but waits to be evicted", e.id, e.refs);
    unused += e.block_tokens;
    if (++in_order > entries_.size()) return "the prefix cache's eviction order loops";
  }
  size_t unused_blocks = 0;
  long long refs = 0;
  std::string wrong;
  index_.for_each([&](unsigned long long id, int slot) {
    const Entry& e = entries_[static_cast<size_t>(slot)];
    if (!wrong.empty()) return;
    if (e.id != id) wrong = fmt::format("prefix block {} is filed under {}", e.id, id);
    else if (e.refs < 0) wrong = fmt::format("prefix block {} released more often than acquired", id);
    unused_blocks += e.refs == 0;
    refs += e.refs;
  });
  if (!wrong.empty()) return wrong;
  if (refs != pins_) return fmt::format("{} prefix pins counted, blocks hold {}", pins_, refs);
  if (unused_blocks != in_order)
    return fmt::format("{} unused prefix blocks, {} in the eviction order", unused_blocks, in_order);
  if (unused != unused_tokens_) return fmt::format("unused prefix tokens {} counted, {} held", unused_tokens_, unused);
  return {};
}

}  // namespace gw::sim_detail
