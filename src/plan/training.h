// How long a training run takes: FLOPs per token (6 x active parameters plus attention, plus
// recomputation) at the GEMM rate of the precision (FP8 GEMMs with bf16 attention for FP8
// training), tensor-parallel collectives over NVLink, pipeline bubbles and point-to-point sends,
// and the data-parallel traffic of every rank of a node through that node's NICs (hierarchical:
// NVLink inside the node, the network across), overlapped only with the backward compute that is
// left when each bucket is ready; the layout (tp, pp, ZeRO stage, recomputation, micro-batch)
// searched over what fits in memory.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/serving_defaults.h"
#include "catalog/catalog.h"
#include "model/memory.h"
#include "perf/efficiency.h"

namespace gw {

struct TrainingJob {
  const ModelArch* arch = nullptr;
  double tokens = 0;
  long long sequence_length = 4096;
  // Tokens per optimizer step, run as asked (whole sequences, rounded down by at most 5% to a
  // multiple of the data-parallel ranks x micro-batch); 0: the critical batch for the run's compute.
  double global_batch_tokens = 0;
  Precision precision = Precision::bf16;
  Optimizer optimizer = Optimizer::adamw;
  std::optional<int> zero_stage;          // pinned by the user, else searched
  std::optional<Recompute> recompute;     // pinned by the user, else searched
};

struct TrainingHardware {
  const Accelerator* accelerator = nullptr;
  int count = 1;                 // devices in the job
  int devices_per_node = 8;
  double node_network_gbps = 100;
  std::string fabric;            // efa, infiniband, ... (empty: plain TCP)
  bool cross_zone = false;       // nodes in different zones: half the bandwidth
  int nodes() const { return std::max(1, (count + devices_per_node - 1) / devices_per_node); }
};

// Bytes one data-parallel rank sends per optimizer step for its share of the gradients and
// parameters, shard_bytes being what the rank holds (its tensor/pipeline slice at the gradient
// precision), over a ring of `ranks`: ZeRO-0 all-reduces the gradients once, 2(n-1)/n x shard;
// ZeRO-1/2 reduce-scatter the gradients and all-gather the updated parameters, the same volume;
// ZeRO-3 also gathers the parameters in forward and again in backward and reduce-scatters every
// micro-batch: 3(n-1)/n x shard per micro-batch.
double data_parallel_bytes_per_rank(double shard_bytes, int ranks, int zero_stage, int micro_batches);

// Collective time over NVLink/ICI for `bus_bytes` (the 2(n-1)/n or (n-1)/n volume) per rank:
// a latency plus the bytes at the bus bandwidth NCCL reaches, fitted to measured all-reduce
// times (src/plan/README or training.cc for the sources).
double intra_node_collective_s(const Accelerator& accelerator, double bus_bytes);

// The batch a run of this compute trains well at, in tokens per step (whole sequences):
// DeepSeek LLM's fit of the near-optimal batch to compute, B = 0.2920 x C^0.3271 tokens with C =
// non-embedding FLOPs per token x training tokens (DeepSeek-AI 2024, arXiv:2401.02954, sec. 3.1):
// ~7.5M tokens for a 7B model on 1T tokens. Beyond it, more data parallelism buys little. Generic
// (non-token) models: 256 samples.
double critical_batch_tokens(const ModelArch& arch, double tokens, long long sequence_length);
inline constexpr const char* kCriticalBatchSource =
    "DeepSeek LLM (arXiv:2401.02954, sec. 3.1): B_opt = 0.2920 x C^0.3271 tokens";

// The global batch a job runs: the one asked for, or the critical batch when none was.
double global_batch_tokens_of(const TrainingJob& job);

struct TrainingLayout {
  int tensor_parallel = 1, pipeline_parallel = 1, data_parallel = 1;
  int zero_stage = 0;
  Recompute recompute = Recompute::none;
  int micro_batch = 1;
  int micro_batches = 1;  // per data-parallel rank per step
  int context_parallel = 1;  // ranks sharing each sequence (ring attention); pinned layouts only
};

struct TrainingEstimate {
  bool feasible = false;
  std::string reason;
  TrainingLayout layout;
  double step_time_s = 0, compute_s = 0, tp_comm_s = 0, cp_comm_s = 0, pp_comm_s = 0, dp_comm_s = 0, dp_exposed_s = 0, bubble_s = 0;
  double optimizer_s = 0;
  double dp_rank_bytes = 0;      // per data-parallel rank per step
  double dp_node_bytes = 0;      // through each node's NICs per step (0 inside one node)
  double network_bytes_per_s = 0;  // a node's usable network bandwidth
  int nodes = 1;
  std::string runner_up;         // the next-best layout and why it lost (search only)
  double global_batch_tokens = 0;  // tokens per optimizer step as run
  double tokens_per_s = 0;
  double time_s = 0;
  double gpu_hours = 0;
  double mfu = 0;                // model FLOPs (no recomputation) / peak
  double memory_bytes_per_device = 0;
  double checkpoint_bytes = 0;   // weights, master weights and optimizer state
  std::string bound;             // compute or network
  std::vector<std::string> warnings;
};

// Work done per step relative to the model's FLOPs: full recomputation runs the forward pass
// again (4/3), selective recomputation the attention core (~1.03).
double recompute_flops_factor(Recompute recompute);

// Training efficiency: the share of dense peak large training GEMMs reach.
double training_compute_efficiency(const Accelerator& accelerator, const Calibration* calibration, double hidden_size);

// The fastest layout that fits, for this hardware.
TrainingEstimate estimate_training_run(const TrainingJob& job, const TrainingHardware& hardware,
                                       const Calibration* calibration, double usable_fraction = kUsableMemoryFraction);

// The time model for one given layout (for tests and for `--tp/--pp` overrides).
TrainingEstimate estimate_training_layout(const TrainingJob& job, const TrainingHardware& hardware,
                                          const TrainingLayout& layout, const Calibration* calibration,
                                          double usable_fraction = kUsableMemoryFraction);

}  // namespace gw
