#include "perf/step_model.h"

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "model/presets.h"
#include "perf/layer_operators.h"

namespace gw {
namespace {

// The simulator's step model and the planner's llm_step give the same time, by operator and by
// the whole-step roofline alike, so plans and simulations agree.
TEST(LlmStepModel, AgreesWithLlmStepByOperatorAndByRoofline) {
  auto catalog = Catalog::embedded();
  auto arch = resolve_model("llama-3.1-8b");
  ASSERT_TRUE(arch.ok());
  for (const char* name : {"H100", "A100-80GB", "L4"}) {
    for (bool by_operator : {true, false}) {
      for (int tp : {1, 2}) {
        PerfSetup setup;
        setup.accelerator = catalog.value().find_accelerator(name);
        setup.tensor_parallel = tp;
        setup.efficiency = default_efficiency(*setup.accelerator);
        if (by_operator) use_layer_operators(setup, nullptr);
        ASSERT_EQ(uses_layer_operators(arch.value(), setup), by_operator);
        LlmStepModel model(arch.value(), setup);
        for (double decode : {0.0, 1.0, 16.0, 200.0}) {
          for (double prefill : {0.0, 512.0}) {
            if (decode + prefill == 0) continue;
            double context = 1500;
            StepTime t = llm_step(arch.value(), setup, decode, context, prefill, prefill > 0 ? 1 : 0, prefill);
            double fast = model.step_time_s(decode, decode * context, prefill, prefill * prefill / 2, decode + (prefill > 0));
            EXPECT_NEAR(fast, t.time_s, 1e-9 * t.time_s) << name << " tp" << tp << " operators " << by_operator
                                                           << " decode " << decode << " prefill " << prefill;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace gw
