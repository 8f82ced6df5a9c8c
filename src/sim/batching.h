// How a replica groups requests into passes. Classic servers (one forward pass per batch) run
// one request at a time, a static batch (full, or partial after a timeout) or a dynamic batch
// with Triton's semantics (full, or whatever waits once the oldest has waited the maximum
// queue delay); LLM replicas batch continuously under an LlmStepScheduler.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

namespace gw {

enum class SimBatching { none, static_batch, dynamic, continuous };

std::string_view sim_batching_name(SimBatching batching);
std::optional<SimBatching> parse_sim_batching(std::string_view text);

// What a classic replica does when it is idle with requests queued.
struct BatchDecision {
  size_t take = 0;            // > 0: start a pass over this many of the oldest now
  double look_again_at_s = 0; // take == 0: decide again at this time unless the batch fills first
};

class ClassicBatcher {
 public:
  virtual ~ClassicBatcher() = default;
  // The most requests one pass takes: what an idle replica pulls from a shared queue.
  virtual size_t max_batch() const = 0;
  // waiting > 0 requests queued, the oldest arrived at oldest_arrival_s; the time is now_s.
  virtual BatchDecision decide(size_t waiting, double oldest_arrival_s, double now_s) const = 0;
};

// batching: none, static_batch or dynamic (not continuous). wait_limit_s: the static batch's
// timeout or the dynamic batch's maximum queue delay; max_batch below 1 counts as 1.
std::unique_ptr<ClassicBatcher> make_classic_batcher(SimBatching batching, int max_batch, double wait_limit_s);

}  // namespace gw
