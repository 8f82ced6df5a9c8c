#include "sim/stage_host_time.h"

#include <algorithm>

#include "perf/layer_operators.h"
#include "perf/step_model.h"

namespace gw {

double stage_host_s_per_sequence(const ModelArch& arch, const PerfSetup& setup, const Calibration* calibration,
                                 double context_tokens) {
  if (!setup.accelerator || !calibration || !calibration->find(setup.accelerator->name)) return 0;
  PerfSetup uncalibrated_setup = setup;
  uncalibrated_setup.efficiency = efficiency_for(*setup.accelerator, nullptr);
  use_layer_operators(uncalibrated_setup, nullptr);
  const LlmStepModel calibrated(arch, setup), uncalibrated(arch, uncalibrated_setup);
  // The slope between two decode batches: the per-step constants (weights, launches) cancel.
  constexpr double kFew = 16, kMany = 64;
  auto per_sequence_s = [context_tokens](const LlmStepModel& m) {
    return (m.step_time_s(kMany, kMany * context_tokens, 0, 0, kMany) - m.step_time_s(kFew, kFew * context_tokens, 0, 0, kFew)) /
           (kMany - kFew);
  };
  return std::max(0.0, per_sequence_s(calibrated) - per_sequence_s(uncalibrated));
}

}  // namespace gw
