// How much of a by-operator step's time rests on figures with a measured error, and what that
// error adds up to: each part's share of the step times the held-out median error of what times
// it (bench/operator_accuracy, against Vidur's profiles). The parts with no measured error
// (collectives, launches, KV writes) are counted apart, never averaged in.
#pragma once

#include <string>
#include <vector>

#include "perf/step_model.h"

namespace gw {

// Held-out median |error| of each timed part, from `gpuwise_operator_accuracy` (2026-12-01):
// layers: each model left out of its device's fit and tables (16,959 rows); attention: every
// other context length left out of the A100 FlashAttention fit (decode 2,048 rows, prefill 1,192).
// The output head is a GEMM of the layers' fitted roofline: the layers' figure.
struct StepErrorFigures {
  double layers = 0.032, decode_attention = 0.082, prefill_attention = 0.126, head = 0.032;
};

struct StepErrorContribution {
  double expected_error = 0;     // sum of share x held-out error over the measured parts
  double unmeasured_share = 0;   // share of the step in parts with no measured error
  std::string dominant;          // the part contributing most ("layers", "decode attention", ...)
};
StepErrorContribution step_error_contribution(const StepParts& parts, const StepErrorFigures& figures = {});

// Over many steps (e.g. every 16th step of a simulation): mean and p99 of the expected error,
// the mean unmeasured share, and the part whose contribution is largest on average.
struct StepErrorSummary {
  long long steps = 0;
  double mean_error = 0, p99_error = 0, mean_unmeasured_share = 0;
  std::string dominant;
  std::vector<std::pair<std::string, double>> mean_contribution;  // by part, largest first
};
StepErrorSummary summarize_step_errors(const std::vector<StepParts>& steps, const StepErrorFigures& figures = {});

}  // namespace gw
