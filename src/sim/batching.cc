#include "sim/batching.h"

#include <algorithm>

#include "core/text.h"

namespace gw {

std::string_view sim_batching_name(SimBatching batching) {
  switch (batching) {
    case SimBatching::none: return "none";
    case SimBatching::static_batch: return "static";
    case SimBatching::dynamic: return "dynamic";
    case SimBatching::continuous: return "continuous";
  }
  return "none";
}

std::optional<SimBatching> parse_sim_batching(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "none") return SimBatching::none;
  if (name == "static") return SimBatching::static_batch;
  if (name == "dynamic") return SimBatching::dynamic;
  if (name == "continuous") return SimBatching::continuous;
  return std::nullopt;
}

namespace {

// One request per pass, as soon as the replica is idle.
class OneAtATime final : public ClassicBatcher {
 public:
  size_t max_batch() const override { return 1; }
  BatchDecision decide(size_t, double, double) const override { return {1, 0}; }
};

// A full batch at once; otherwise what waits, once the oldest has waited wait_limit_s. Static
// batching (with its timeout) and Triton's dynamic batching (with max_queue_delay) follow this
// one rule; they differ in which limit a user sets and what it is called.
class FullOrWaited final : public ClassicBatcher {
 public:
  FullOrWaited(int max_batch, double wait_limit_s)
      : max_batch_(static_cast<size_t>(std::max(1, max_batch))), wait_limit_s_(wait_limit_s) {}
  size_t max_batch() const override { return max_batch_; }
  BatchDecision decide(size_t waiting, double oldest_arrival_s, double now_s) const override {
    if (waiting >= max_batch_) return {max_batch_, 0};
    // The tolerance lets the timer set for oldest + limit dispatch despite rounding.
    if (now_s - oldest_arrival_s >= wait_limit_s_ - 1e-12) return {waiting, 0};
    return {0, oldest_arrival_s + wait_limit_s_};
  }

 private:
  size_t max_batch_;
  double wait_limit_s_;
};

}  // namespace

std::unique_ptr<ClassicBatcher> make_classic_batcher(SimBatching batching, int max_batch, double wait_limit_s) {
  if (batching == SimBatching::none) return std::make_unique<OneAtATime>();
  return std::make_unique<FullOrWaited>(max_batch, wait_limit_s);
}

}  // namespace gw
