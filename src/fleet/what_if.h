// What-if optimizations for a running service, applied in order on top of each other: right-size
// (no code change), batching, quantization (through the step-time model), response caching,
// a model cascade, distillation. Each step re-plans the service on the accelerator it runs on
// today and prices GPUs at what the user pays now; the payback is the step's engineering weeks
// against its weekly saving.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/error.h"
#include "perf/efficiency.h"
#include "spec/spec.h"

namespace gw {

struct WhatIfStepResult {
  std::string name;
  std::string change;          // what the step does, in words
  double weeks = 0;
  bool feasible = false;
  std::string binding;         // why not, when not
  int gpus = 0;
  double usd_per_month = 0;
  double saving_usd_per_month = 0;  // against the step before
  std::optional<double> payback_weeks;  // weeks of work x cost per week / weekly saving
  double latency_p99_s = 0;
};

struct WhatIfReport {
  std::string service, accelerator;
  int current_gpus = 0;
  double current_usd_per_month = 0;
  double usd_per_gpu_month = 0;
  std::vector<WhatIfStepResult> steps;  // right-size first, then the spec's steps
  double total_saving_usd_per_month = 0;
  double total_weeks = 0;
  std::optional<double> total_payback_weeks;
  std::vector<std::string> assumptions;
};

Result<WhatIfReport> plan_what_if(const Catalog& catalog, const Spec& spec, const WhatIfSpec& what_if, const Calibration* calibration,
                                  uint64_t seed);

}  // namespace gw
