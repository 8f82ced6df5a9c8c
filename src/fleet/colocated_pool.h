// Several models sharing the same GPUs, simulated together: every GPU of a pool holds a copy of
// each model (as `fleet` places them) and runs one model's step at a time, taking turns among
// the models that have work (one process per model time-slicing the GPU, as CUDA's default
// scheduler does between processes). A classic model's step is one batch from its queue; an
// LLM's step is one continuous-batching step of its running sequences plus the prompts it
// admits. Requests go to the GPU with the fewest requests outstanding. What `fleet` checks its
// shared pools with: each model's p99 against its SLO with the others on the same GPUs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "sim/arrivals.h"
#include "sim/simulator.h"
#include "spec/spec.h"

namespace gw {

struct ColocatedModel {
  std::string service;
  const ServiceSpec* spec = nullptr;  // token distributions and SLO
  ReplicaConfig replica;              // one copy on the pool's accelerator (batch_time, or llm)
  double rate_rps = 0;                // Poisson arrivals at this rate
};

struct ColocatedModelResult {
  std::string service;
  long long requests = 0;
  double latency_p99_s = 0;  // arrival to completion
  double ttft_p99_s = 0;     // LLMs: arrival to first token
  double tpot_p99_s = 0;     // LLMs: time per output token after the first
  // The SLO's tightest stated target and what it was measured against ("latency_p99", "ttft_p99",
  // "tpot_p99", "e2e_p99"), the simulated value, and whether every stated target is met.
  std::string binding_metric;
  double binding_target_s = 0, binding_simulated_s = 0;
  bool slo_met = true;
};

struct ColocatedResult {
  int gpus = 0;
  double duration_s = 0;
  std::vector<ColocatedModelResult> models;
  std::vector<double> gpu_busy_fraction;
  bool all_met() const;
};

// Simulates `gpus` GPUs each holding every model, `requests` arrivals in all (each model's share
// at its rate), seeded. Errors when a model has neither batch_time nor llm.
Result<ColocatedResult> simulate_colocated(const std::vector<ColocatedModel>& models, int gpus, long long requests,
                                           uint64_t seed);

}  // namespace gw
