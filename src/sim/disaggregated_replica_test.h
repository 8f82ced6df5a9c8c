// For the simulator's tests: an LLM replica of a disaggregated pair on LinearStepTimer steps
// (1,000 blocks of 16 tokens, 8 sequences, 4,096 tokens a step, no watermark; 1e5 B of KV a
// token over `link_bytes_per_s`, 4 layers), to be given its role; and options that check the
// simulator's invariants at every event.
#pragma once

#include <memory>

#include "sim/linear_step_timer_test.h"
#include "sim/simulator.h"

namespace gw::testing_support {

inline ReplicaConfig disaggregated_llm_replica(double link_bytes_per_s) {
  ReplicaConfig c;
  c.batching = SimBatching::continuous;
  c.scheduler = LlmScheduler::vllm_v1;
  c.llm = std::make_shared<LinearStepTimer>();
  c.kv_blocks = 1000;
  c.block_tokens = 16;
  c.max_batch = 8;
  c.token_budget = 4096;
  c.watermark_fraction = 0;
  c.kv_bytes_per_token_replica = 1e5;
  c.kv_link_bytes_per_s = link_bytes_per_s;
  c.layers = 4;
  return c;
}

inline SimOptions checked_sim_options() {
  SimOptions o;
  o.check_invariants = true;
  o.max_requests = 1LL << 40;
  return o;
}

}  // namespace gw::testing_support
