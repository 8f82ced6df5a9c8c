// One replica's state in the simulator: its queue, the classic batch in service, and for LLMs
// the continuous batch (prefilling, decoding by finish step, swapped, preemption order) with its
// KV cache. Internal to src/sim.
#pragma once

#include <deque>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "sim/batching.h"
#include "sim/kv_cache.h"
#include "sim/llm_step_scheduler.h"
#include "sim/prefix_cache.h"
#include "sim/sim_event.h"
#include "sim/simulator.h"

namespace gw::sim_detail {

struct DecodeEntry {
  long long finish_step;
  int id;
  unsigned version;
  bool operator>(const DecodeEntry& other) const {
    if (finish_step != other.finish_step) return finish_step > other.finish_step;
    return id > other.id;
  }
};

// A running request by preemption order: the largest key goes first (the latest arrival under
// vLLM v0 and Sarathi, the latest admitted under vLLM v1).
struct VictimEntry {
  long long key;
  int id;
  unsigned version;
  bool operator<(const VictimEntry& other) const { return key < other.key; }
};

struct ReplicaState {
  const ReplicaConfig* config = nullptr;
  size_t index = 0;                        // in the simulation's replicas and loads
  const LlmStepScheduler* scheduler = nullptr;  // LLM replicas
  std::unique_ptr<ClassicBatcher> batcher;      // classic replicas
  Life life = Life::ready;                 // set through Simulation::set_life (loads mirror it)
  unsigned life_version = 0;     // invalidates a pending ready event when a start is cancelled
  int outage = -1;               // the outage this replica is lost to, while it lasts
  double busy_observed = 0;      // busy seconds at the last scrape
  double observed_since = 0;     // when the replica last became ready or was scraped
  bool busy = false;
  unsigned timer_version = 0;
  std::deque<int> waiting;
  // Classic batch in service.
  std::vector<int> batch;
  // Continuous batching.
  std::deque<int> prefilling;                      // admitted, prompt not yet computed, in admission order
  std::deque<int> swapped;                         // preempted to host memory, oldest first
  std::priority_queue<DecodeEntry, std::vector<DecodeEntry>, std::greater<>> decoding;
  std::priority_queue<VictimEntry> victims;        // running requests, the next to preempt on top
  long long admissions = 0;                        // admission counter (vLLM v1's preemption order)
  long long decoding_count = 0;
  double context_sum = 0;                          // KV tokens of the decoding sequences
  KvCache kv;
  PrefixCache prefix;                              // prefix caching (ReplicaConfig::prefix_caching)
  long long decode_step = 0;                       // decode steps scheduled so far
  // The step in progress.
  bool step_decodes = false;
  std::vector<std::pair<int, double>> step_chunks;
  double step_started = 0;
  ReplicaStats stats;
};

// Continuous batching, or an LLM served one sequence at a time.
inline bool is_llm(const ReplicaConfig& c) { return c.batching == SimBatching::continuous || (c.llm && c.batching == SimBatching::none); }

}  // namespace gw::sim_detail
