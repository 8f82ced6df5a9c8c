// A request as the simulator carries it through a replica, and the pool of slots requests live
// in (reused after completion, each slot's version growing so stale heap entries never match).
// Internal to src/sim.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "sim/kv_cache.h"

namespace gw::sim_detail {

// Where an LLM request is on its replica.
enum class Stage : unsigned char { queued, prefilling, decoding, swapped };

struct Request {
  double arrival = 0, scheduled = -1, first_token = -1;
  double input = 0, output = 0;
  // Continuous batching state.
  double prompt = 0;           // tokens to (re)compute at admission: input + tokens generated before a preemption
  double prefill_left = 0;
  double generated = 0;        // output tokens produced so far; never lost to a preemption
  double generated_at_join = 0;
  double length = 0;           // tokens in the KV cache when it joined decoding (or was swapped out)
  long long blocks = 0;        // blocks held while prefilling (and, under orca, throughout)
  long long join_step = 0;     // the replica's decode-step counter when it joined decoding
  long long arrival_order = 0; // arrival sequence number: vLLM v0 and Sarathi preempt the latest
  KvCache::Decoding kv_growth;  // when its decoding opens blocks (paged)
  Stage stage = Stage::queued;
  bool live = false;
  unsigned version = 0;        // grows at every preemption and release: stale heap entries never match
  int replica = -1;
  int prefix_pinned = 0;       // prefix-cache blocks of its chain it pins on its replica (its first ones)
  double kv_arrived = 0;       // disaggregated: prompt tokens whose KV came from a prefill replica, not to compute
  double prefill_started = -1; // when its prompt's first chunk ran (the KV transfer streams behind it)
  int held_on = -1;            // disaggregated: the prefill replica still holding its KV until a decode replica admits it
  long long held_blocks = 0;
  // KV pulled between steps: its transfer over the prefill replica's link, when the prompt was
  // done there, and whether a decode replica has still to pull it (again, if the one that had was lost).
  double kv_pull_s = 0;
  double kv_ready_at = 0;
  bool kv_to_pull = false;
};

// A request's prompt blocks by chain hash: ids, and where each block ends (tokens from the
// prompt's start): uniform blocks of block_tokens, or the given ends.
struct ChainView {
  const std::vector<unsigned long long>* ids = nullptr;
  const std::vector<double>* ends = nullptr;  // empty: uniform
  int block_tokens = 0;
  bool empty() const { return ids == nullptr || ids->empty(); }
  size_t size() const { return ids ? ids->size() : 0; }
  const unsigned long long* data() const { return ids->data(); }
  // Tokens up to the end of block i.
  double end(size_t i) const { return ends->empty() ? static_cast<double>((i + 1) * static_cast<size_t>(block_tokens)) : (*ends)[i]; }
  double tokens_of(size_t blocks) const { return blocks == 0 ? 0 : end(blocks - 1); }
  // Blocks that end at or before `tokens`.
  size_t blocks_within(double tokens) const {
    if (ends->empty()) return std::min(size(), static_cast<size_t>(std::max(0.0, std::floor(tokens / block_tokens))));
    size_t n = 0;
    while (n < ends->size() && (*ends)[n] <= tokens) ++n;
    return n;
  }
};

// Request slots reused after completion. A slot's version only grows, so an entry left in a
// heap by an earlier occupant never matches the next one.
class RequestPool {
 public:
  int add(const Request& r) {
    int id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<int>(slots_.size());
      slots_.emplace_back();
    }
    Request& slot = slots_[static_cast<std::size_t>(id)];
    unsigned version = slot.version;
    slot = r;
    slot.version = version;
    slot.live = true;
    return id;
  }
  // The request's prompt blocks by chain hash (prefix caching), and their size in tokens.
  void set_chain(int id, std::vector<unsigned long long>&& ids, int block_tokens, std::vector<double>&& ends) {
    const auto slot = static_cast<std::size_t>(id);
    if (chains_.size() <= slot) {
      chains_.resize(slot + 1);
      chain_ends_.resize(slot + 1);
      chain_block_tokens_.resize(slot + 1, 0);
    }
    chains_[slot] = std::move(ids);
    chain_ends_[slot] = std::move(ends);
    chain_block_tokens_[slot] = std::max(1, block_tokens);
  }
  ChainView chain(int id) const {
    const auto slot = static_cast<std::size_t>(id);
    if (slot >= chains_.size()) return {};
    return {&chains_[slot], &chain_ends_[slot], chain_block_tokens_[slot]};
  }
  Request& operator[](int id) { return slots_[static_cast<std::size_t>(id)]; }
  const Request& operator[](int id) const { return slots_[static_cast<std::size_t>(id)]; }
  void release(int id) {
    Request& slot = slots_[static_cast<std::size_t>(id)];
    slot.version++;
    slot.live = false;
    if (static_cast<std::size_t>(id) < chains_.size()) {
      chains_[static_cast<std::size_t>(id)].clear();
      chain_ends_[static_cast<std::size_t>(id)].clear();
    }
    free_.push_back(id);
  }
  std::size_t size() const { return slots_.size(); }

 private:
  std::vector<Request> slots_;
  std::vector<int> free_;
  std::vector<std::vector<unsigned long long>> chains_;  // by slot; sized when a chain is first set
  std::vector<std::vector<double>> chain_ends_;
  std::vector<int> chain_block_tokens_;
};

}  // namespace gw::sim_detail
