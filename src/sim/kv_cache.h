// A replica's paged KV cache as the simulator keeps it: a capacity in blocks of block_tokens
// tokens, the blocks in use, the decoding sequences grouped by the decode step at which each
// needs its next block (so a step's new blocks are one lookup, not a pass over the batch), and
// blocks x seconds used for the report. It checks its own invariants against what the requests
// hold. Prefix caching goes here: full blocks kept by the hash of their chain after their
// request leaves, evicted least recently used when a new block is needed. Internal to src/sim.
#pragma once

#include <string>
#include <vector>

namespace gw::sim_detail {

class KvCache {
 public:
  KvCache() : KvCache(0, 16) {}
  KvCache(long long capacity_blocks, int block_tokens);

  long long capacity_blocks() const { return capacity_blocks_; }
  int block_tokens() const { return block_tokens_; }
  long long used_blocks() const { return used_blocks_; }
  long long free_blocks() const { return capacity_blocks_ - used_blocks_; }
  double used_fraction() const {
    return capacity_blocks_ > 0 ? static_cast<double>(used_blocks_) / static_cast<double>(capacity_blocks_) : 0;
  }
  // Blocks that hold this many tokens (a partial block is a whole one).
  long long blocks_for(double tokens) const;

  void allocate(long long blocks) { used_blocks_ += blocks; }
  void release(long long blocks) { used_blocks_ -= blocks; }

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
  double mean_used_fraction(double duration_s) const;

  // Empty, or what is wrong: blocks used outside [0, capacity], or not the `held_blocks` the
  // requests on the replica hold.
  std::string check(long long held_blocks) const;

 private:
  long long capacity_blocks_ = 0;
  int block_tokens_ = 16;
  long long used_blocks_ = 0;
  std::vector<long long> by_phase_;
  double block_s_ = 0;
};

}  // namespace gw::sim_detail
