// A replica's paged KV cache as the simulator keeps it: a capacity in blocks of block_tokens
// tokens, the blocks in use, the decoding sequences grouped by the decode step at which each
// needs its next block (so a step's new blocks are one lookup, not a pass over the batch), and
// blocks x seconds used for the report. It checks its own invariants against what the requests
// hold. Prefix caching goes here: full blocks kept by the hash of their chain after their
// request leaves, evicted least recently used when a new block is needed. The micro-batch lanes
// of a pipelined replica may draw on one pool of blocks: each lane's cache then counts its own
// blocks and the pool's capacity and free blocks are the ones it admits against. Internal to
// src/sim.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace gw::sim_detail {

class KvCache {
 public:
  KvCache() : KvCache(0, 16) {}
  KvCache(long long capacity_blocks, int block_tokens);

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
  // Blocks that hold this many tokens (a partial block is a whole one).
  long long blocks_for(double tokens) const;

  void allocate(long long blocks) {
    used_blocks_ += blocks;
    if (pool_) pool_->used_blocks += blocks;
  }
  void release(long long blocks) {
    used_blocks_ -= blocks;
    if (pool_) pool_->used_blocks -= blocks;
  }

  // A sequence of `tokens` tokens that decodes from decode step `step` on writes into a new block
  // at every step congruent to its phase modulo block_tokens.
  int phase_of(long long step, double tokens) const;
  void join(int phase) { ++by_phase_[static_cast<size_t>(phase)]; }
  void leave(int phase) { --by_phase_[static_cast<size_t>(phase)]; }
  // Decoding sequences that need a new block at this decode step, and whether one of phase
  // `phase` is among them.
  long long growing_at(long long step) const { return by_phase_[static_cast<size_t>(step % block_tokens_)]; }
  bool grows_at(long long step, int phase) const { return step % block_tokens_ == phase; }

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
  std::vector<long long> by_phase_;
  double block_s_ = 0;
};

}  // namespace gw::sim_detail
