// The train question: how long one training run takes and what it costs, on one hardware choice
// or the cheapest that meets a deadline, and spot with checkpoints against on-demand by Monte
// Carlo (`gpuwise train MODEL`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "model/model_arch.h"
#include "perf/efficiency.h"
#include "plan/spot.h"
#include "plan/training_plan.h"

namespace gw {

// What `gpuwise train` takes. Errors name the CLI's option (field "--tokens").
struct TrainOptions {
  double tokens = 0;                  // training tokens, at least 1
  std::string accelerator;            // empty: search all
  int count = 0;                      // devices; 0: search 1, 2, 4, ... 4096
  std::string offering;               // an instance type (its cheapest region); empty: search
  Precision precision = Precision::bf16;  // bf16, fp16, fp32 or fp8
  Pricing pricing = Pricing::on_demand;
  int zero = -1;                      // pinned ZeRO stage; -1: searched
  std::optional<Recompute> recompute; // pinned; empty: searched
  bool allow_tcp_clusters = false;
  bool cross_zone = false;
  double deadline_days = 0;           // 0: none
  long long sequence_length = 4096;
  double global_batch_tokens = 0;  // tokens per step; 0: the critical batch for the run's compute (critical_batch_tokens)
  double preemptions_per_hour = -1;   // per node; -1: assumed (or the trace's)
  std::string spot_trace;             // skypilot spot-traces JSON, replayed
  double storage_gbps = 10;           // checkpoint bandwidth per node
  double interval_min = 0;            // checkpoint interval; 0: Daly's optimum
  double provisioning_s = 300;
  int runs = 2000;                    // Monte Carlo runs per spot policy
  uint64_t seed = 1;
  std::vector<std::string> clouds, regions;
  const Calibration* calibration = nullptr;  // not owned; must outlive the call
};

struct SpotComparison {
  TrainingCandidate base;       // the run the policies are simulated on
  TrainingCandidate on_spot;    // priced on spot with its checkpoints
  std::string base_note;        // why it differs from the best, or empty
  bool replay = false;          // the trace replayed as is (one node)
  double node_preemptions_per_hour = 0;
  std::vector<SpotOutcome> outcomes;  // on-demand only, spot only, deadline-aware (where they apply)
};

struct TrainResult {
  ModelArch arch;
  TrainOptions options;         // as given (calibration cleared)
  bool calibrated = false;
  std::optional<double> deadline_s;
  TrainingPlan plan;            // no best: infeasible, plan.binding says why
  std::optional<SpotComparison> spot;  // empty: no spot price for the run (nor any that meets the constraints)
  bool rate_assumed = true;     // the preemption rate is the labelled assumption
  bool trace_given = false;
  double start_s_per_doubling = 0;
  const Accelerator* accelerator = nullptr;  // the best's, in the catalog
  std::optional<double> gemm_efficiency;     // of the accelerator's peak at the model's width
};

// The precision, recompute and pricing as `gpuwise train` spells them, set on `options`. An
// Error names the option ("--precision") for a value it cannot take.
struct TrainChoiceText {
  std::string precision = "bf16", recompute, pricing = "on-demand";  // recompute empty: searched
};
std::optional<Error> apply_train_choices(const TrainChoiceText& text, TrainOptions& options);

// An Error for options the question cannot take (no tokens, an unknown accelerator or offering,
// FP8 on hardware without it, an unreadable trace). A run that cannot fit or meet its deadline is
// a result (plan.best empty, or plan.feasible false). Points into `catalog`.
Result<TrainResult> train_run(const Catalog& catalog, const ModelArch& arch, const TrainOptions& options);

}  // namespace gw
