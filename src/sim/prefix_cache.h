// A replica's prefix cache as vLLM V1 keeps it (automatic prefix caching): full prompt blocks
// by the hash of their chain (the block and every block before it), so a request's hit is the
// longest run of its blocks cached from the first. Blocks a running request uses are pinned by
// reference counts; blocks no request uses stay cached and are evicted least recently freed
// first (a request's later blocks before its earlier ones, as vLLM frees them), when their room
// is wanted: the KV blocks not in use (vLLM), a capacity of its own (an offload tier of N
// tokens), or never (unlimited). A block here is one chain block of the trace's size
// (`chain_block_tokens`, 512 in the Mooncake traces), holding that many tokens of KV.
// Internal to src/sim.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "sim/block_index.h"
#include "sim/sim_request.h"

namespace gw::sim_detail {

class PrefixCache {
 public:
  // room_tokens: tokens the free cached blocks may hold when the cache has a room of its own;
  // infinity for unlimited. Ignored when `in_kv` (the room is the KV cache's free blocks).
  PrefixCache() = default;
  PrefixCache(bool in_kv, double room_tokens) : in_kv_(in_kv), room_tokens_(room_tokens) {}

  bool in_kv() const { return in_kv_; }

  // Blocks of the chain `ids` (n of them) cached from the first, at most max_blocks.
  size_t longest_hit(const unsigned long long* ids, size_t n, size_t max_blocks) const;
  // A request now uses the first n blocks of its chain (its hits and the blocks it computed):
  // each is cached (added if new) and pinned. block_tokens: the chain's block size.
  void acquire(const unsigned long long* ids, size_t n, int block_tokens);
  // Blocks [from, to) of a request's chain, each of its own size.
  void acquire(const ChainView& chain, size_t from, size_t to);
  // The request no longer uses them: unpinned; the unused stay cached until evicted, the last
  // block of the chain first in line.
  void release(const unsigned long long* ids, size_t n);
  // Evicts unused blocks, least recently freed first, until they hold at most room_tokens
  // (the KV cache's free tokens when in_kv; the cache's own room otherwise).
  void evict_to(double room_tokens);
  void evict_to_own_room() { evict_to(room_tokens_); }

  // Forgets every block (the replica's process ended); nothing may be pinned.
  void clear() {
    const long long evictions = evictions_;
    *this = PrefixCache(in_kv_, room_tokens_);
    evictions_ = evictions;
  }

  double unused_tokens() const { return unused_tokens_; }
  long long pins() const { return pins_; }
  size_t cached_blocks() const { return index_.size(); }
  long long evictions() const { return evictions_; }
  // Empty, or what is wrong: counts that disagree with the blocks, a pinned block in the
  // eviction order or an unused one out of it.
  std::string check() const;

 private:
  struct Entry {
    unsigned long long id = 0;
    int refs = 0;
    double block_tokens = 0;
    int prev = -1, next = -1;  // eviction order of unused blocks; -1 at the ends
  };
  void pin(unsigned long long id, double block_tokens);
  void unlink(int slot);
  void push_back(int slot);

  bool in_kv_ = true;
  double room_tokens_ = std::numeric_limits<double>::infinity();
  BlockIndex index_;  // chain hash -> entry slot
  std::vector<Entry> entries_;
  std::vector<int> free_slots_;
  int head_ = -1, tail_ = -1;  // unused blocks: head is evicted first
  double unused_tokens_ = 0;
  long long evictions_ = 0;
  long long pins_ = 0;  // references held by requests, all blocks together
};

}  // namespace gw::sim_detail
