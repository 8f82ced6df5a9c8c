// For the simulator's tests: a step costs a fixed part plus a part per token, enough to order
// events and cheap to evaluate.
#pragma once

#include "perf/step_model.h"

namespace gw::testing_support {

class LinearStepTimer final : public LlmStepTimer {
 public:
  double step_time_s(double decode, double, double prefill, double, double) const override {
    return 0.010 + 1e-4 * decode + 2e-5 * prefill;
  }
  double kv_bytes_per_token() const override { return 1e5; }
};

}  // namespace gw::testing_support
