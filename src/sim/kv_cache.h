// A replica's paged KV cache as the simulator keeps it: a capacity in blocks of block_tokens
// tokens, the blocks in use, the decoding sequences grouped by the decode step at which each
// needs its next block (so a step's new blocks are one lookup, not a pass over the batch), and
// blocks x seconds used for the report. It checks its own invariants against what the requests
// hold. Prefix caching goes here: full blocks kept by the hash of their chain after their
// request leaves, evicted least recently used when a new block is needed. The micro-batch lanes
// of a pipelined replica may draw on one pool of blocks: each lane's cache then counts its own
// blocks and the pool's capacity and free blocks are the ones it admits against. Internal to
// src/sim. A model with sliding-window layers keeps its blocks per layer group (vLLM V1's hybrid
// allocator, model/kv_layer_groups.h): a block is one group's, a sequence holds a full group's
// block per block of tokens and a sliding group's only as far as the window reaches, and a
// decoding sequence stops growing its sliding groups at the step it passes the window.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/kv_layer_groups.h"

namespace gw::sim_detail {

class KvCache {
 public:
  KvCache() : KvCache(0, 16) {}
  KvCache(long long capacity_blocks, int block_tokens, KvLayerGroups groups = {});

  // Draws on `first`'s pool from now on (made one if it has none): their capacities add up.
  // Both must be empty.
  void share_pool_with(KvCache& first);
  int pool_sharers() const { return pool_ ? pool_->sharers : 1; }

  long long capacity_blocks() const { return pool_ ? pool_->capacity_blocks : capacity_blocks_; }
  int block_tokens() const { return block_tokens_; }
  long long used_blocks() const { return used_blocks_; }  // this cache's own
  long long free_blocks() const { return capacity_blocks() - (pool_ ? pool_->used_blocks : used_blocks_); }
  // The pool's blocks in use (a shared pool's, for every lane alike).
  double used_fraction() const {
    const long long capacity = capacity_blocks();
    return capacity > 0 ? static_cast<double>(capacity - free_blocks()) / static_cast<double>(capacity) : 0;
  }
  const KvLayerGroups& groups() const { return groups_; }
  // Blocks that hold a sequence of this many tokens (a partial block is a whole one).
  long long blocks_for(double tokens) const;
  // The most tokens a sequence holding `blocks` blocks can have.
  double tokens_within(long long blocks) const;
  // Blocks a sequence of `tokens` tokens adds for its next one.
  long long growth_of(double tokens) const { return blocks_for(tokens + 1) - blocks_for(tokens); }
  // Tokens of prefix `blocks` free blocks can keep cached (a cached block holds every group's).
  double cached_tokens_within(long long blocks) const {
    return static_cast<double>(blocks / groups_.groups()) * block_tokens_;
  }

  void allocate(long long blocks) {
    used_blocks_ += blocks;
    if (pool_) pool_->used_blocks += blocks;
  }
  void release(long long blocks) {
    used_blocks_ -= blocks;
    if (pool_) pool_->used_blocks -= blocks;
  }

  // A sequence of `tokens` tokens that decodes from decode step `step` on writes into a new block
  // at every step congruent to its phase modulo block_tokens, its sliding groups' too until the
  // step it passes the window (window_until; none without a window).
  struct Decoding {
    int phase = 0;
    long long window_until = 0;
    bool in_window = false;  // joined before passing the window
  };
  Decoding join(long long step, double tokens);
  void leave(const Decoding& d);
  // Blocks the decoding sequences need at this decode step (steps only move forward), and those
  // one of them, `d`, needs.
  long long growing_at(long long step);
  long long growth_at(long long step, const Decoding& d) const {
    if (step % block_tokens_ != d.phase) return 0;
    return groups_.full_groups + (step < d.window_until ? groups_.sliding_groups : 0);
  }

  // Blocks used x seconds: a step of this long holds what is used now.
  void accrue(double seconds) { block_s_ += static_cast<double>(used_blocks_) * seconds; }
  double block_s() const { return block_s_; }
  void add_block_s(double block_s) { block_s_ += block_s; }  // a replayed window's
  double mean_used_fraction(double duration_s) const;  // this cache's own blocks, of the pool

  // Empty, or what is wrong: blocks used outside [0, capacity], or not the `held_blocks` the
  // requests on the replica hold.
  std::string check(long long held_blocks) const;

 private:
  struct Pool {
    long long capacity_blocks = 0, used_blocks = 0;
    int sharers = 0;
  };
  std::shared_ptr<Pool> pool_;  // none: capacity_blocks_ alone
  long long capacity_blocks_ = 0;
  int block_tokens_ = 16;
  long long used_blocks_ = 0;
  KvLayerGroups groups_;
  std::vector<long long> by_phase_;
  // Sequences still growing their sliding groups, by phase, and by the step they stop.
  std::vector<long long> windowed_by_phase_;
  std::map<long long, long long> window_ends_;
  long long window_ends_through_ = -1;  // every end at or before this step is taken off
  double block_s_ = 0;
};

}  // namespace gw::sim_detail
