// How long a training run takes and what it costs: FLOPs per token (6 x active parameters plus
// attention, plus recomputation), achieved rate from compute, tensor-parallel all-reduces,
// pipeline bubbles and the data-parallel gradient all-reduce over NVLink inside a node and the
// instance network across nodes (partly overlapped with the backward pass); the layout (tp, pp,
// ZeRO, recomputation) chosen from the memory fit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "model/memory.h"
#include "perf/efficiency.h"

namespace gw {

struct TrainingJob {
  const ModelArch* arch = nullptr;
  double tokens = 0;
  long long sequence_length = 4096;
  double global_batch_tokens = 4.0 * 1024 * 1024;  // tokens per optimizer step
  Precision precision = Precision::bf16;
  Optimizer optimizer = Optimizer::adamw;
};

struct TrainingHardware {
  const Accelerator* accelerator = nullptr;
  int count = 1;                 // devices in the job
  int devices_per_node = 8;
  double node_network_gbps = 100;
  std::string fabric;            // efa, infiniband, ... (empty: plain TCP)
  bool cross_zone = false;
};

struct TrainingLayout {
  int tensor_parallel = 1, pipeline_parallel = 1, data_parallel = 1;
  int zero_stage = 0;
  Recompute recompute = Recompute::none;
  int micro_batch = 1;
  int micro_batches = 1;  // per data-parallel rank per step
};

struct TrainingEstimate {
  bool feasible = false;
  std::string reason;
  TrainingLayout layout;
  double step_time_s = 0, compute_s = 0, tp_comm_s = 0, dp_comm_s = 0, dp_exposed_s = 0, bubble_s = 0;
  double tokens_per_s = 0;
  double time_s = 0;
  double gpu_hours = 0;
  double mfu = 0;                // model FLOPs (no recomputation) / peak
  double memory_bytes_per_device = 0;
  double checkpoint_bytes = 0;   // weights, master weights and optimizer state
  std::string bound;             // compute or network
  std::vector<std::string> warnings;
};

// Training efficiency: the share of dense peak large training GEMMs reach.
double training_compute_efficiency(const Accelerator& accelerator, const Calibration* calibration, double hidden_size);

// The fastest layout that fits, for this hardware.
TrainingEstimate estimate_training_run(const TrainingJob& job, const TrainingHardware& hardware,
                                       const Calibration* calibration, double usable_fraction = 0.90);

// The time model for one given layout (for tests and for `--tp/--pp` overrides).
TrainingEstimate estimate_training_layout(const TrainingJob& job, const TrainingHardware& hardware,
                                          const TrainingLayout& layout, const Calibration* calibration,
                                          double usable_fraction = 0.90);

}  // namespace gw
