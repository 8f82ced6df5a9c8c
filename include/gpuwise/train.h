// gpuwise::train: how long one training run takes and what it costs, on one hardware choice or
// the cheapest that meets a deadline, with interconnect and ZeRO layout searched, and spot with
// checkpoints against on-demand by Monte Carlo. The question `gpuwise train MODEL` answers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuwise/answer.h"
#include "gpuwise/catalog.h"

namespace gpuwise {

struct TrainQuery {
  std::string model;                  // a preset name or a config.json path
  double tokens = 0;                  // training tokens; required
  std::string accelerator;            // empty: every accelerator
  int count = 0;                      // devices; 0: searched (1, 2, 4, ... 4096)
  std::string offering;               // an instance type; empty: searched
  std::string precision = "bf16";     // bf16, fp16, fp32, fp8
  std::string pricing = "on-demand";  // on-demand, spot, reserved-1y, reserved-3y
  int zero = -1;                      // ZeRO stage 0-3; -1: searched
  std::string recompute;              // none, selective, full; empty: searched
  bool allow_tcp_clusters = false, cross_zone = false;
  double deadline_days = 0;           // 0: none
  long long sequence_length = 4096;
  double global_batch_tokens = 0;  // tokens per optimizer step; 0: the critical batch for the run's compute
  double preemptions_per_hour = -1;   // per node; -1: assumed (or the spot trace's)
  std::string spot_trace;             // SkyPilot spot-traces JSON, replayed
  double storage_gbps = 10;           // checkpoint bandwidth per node
  double checkpoint_interval_min = 0; // 0: Daly's optimum
  double provisioning_s = 300;
  int runs = 2000;                    // Monte Carlo runs per spot policy
  std::uint64_t seed = 1;
  std::vector<std::string> clouds, regions;
  std::string calibration_path;
};

// exit_code() 3 when no choice meets the deadline (the answer is still written). Throws
// gpuwise::Error (kind infeasible) when nothing can run the model at all, as the CLI prints only
// an error then; bad_input for a query it cannot take.
Answer train(const Catalog& catalog, const TrainQuery& query);

}  // namespace gpuwise
