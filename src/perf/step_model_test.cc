#include "perf/step_model.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>

#include "catalog/catalog.h"
#include "model/presets.h"
#include "perf/layer_operators.h"

namespace gw {
namespace {

// The MLP's operators (up, activation, down) and the rest of a layer (its attention side).
std::array<bool, kLayerOperators> mlp_operators(bool mlp) {
  std::array<bool, kLayerOperators> marked{};
  for (int i = 0; i < kLayerOperators; ++i) {
    auto op = static_cast<LayerOperator>(i);
    marked[i] = mlp == (op == LayerOperator::mlp_up_proj || op == LayerOperator::mlp_act || op == LayerOperator::mlp_down_proj);
  }
  return marked;
}

// The simulator's step model and the planner's llm_step give the same time, by operator and by
// the whole-step roofline alike, so plans and simulations agree.
TEST(LlmStepModel, AgreesWithLlmStepByOperatorAndByRoofline) {
  auto catalog = Catalog::embedded();
  for (const char* model_name : {"llama-3.1-8b", "mixtral-8x7b"}) {
    auto arch = resolve_model(model_name);
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
              EXPECT_NEAR(fast, t.time_s, 1e-9 * t.time_s) << model_name << " on " << name << " tp" << tp << " operators "
                                                             << by_operator << " decode " << decode << " prefill " << prefill;
            }
          }
        }
      }
    }
  }
}

// gpt-oss in MXFP4 as vLLM runs it on an H100: the routed experts some token picked read at 4.25
// bits a weight, attention, the router and the head at 16 (weight-only: 16-bit compute). The
// simulator's step model agrees with llm_step, by operator and by the whole-step roofline, with
// gpt-oss's 128-token window on every other layer (contexts past it: exact).
TEST(LlmStepModel, Mxfp4ReadsTheExpertsAtFourBitsAndTheRestAtSixteen) {
  auto catalog = Catalog::embedded();
  ModelArch oss = resolve_model("gpt-oss-120b").value();
  const ParamBreakdown p = count_params(oss);
  for (bool by_operator : {false, true}) {
    PerfSetup bf16;
    bf16.accelerator = catalog.value().find_accelerator("H100");
    bf16.efficiency = default_efficiency(*bf16.accelerator);
    if (by_operator) use_layer_operators(bf16, nullptr);
    PerfSetup mxfp4 = bf16;
    mxfp4.weight_precision = Precision::fp4;
    mxfp4.weight_format = WeightFormat::mxfp4;
    const StepTime wide = decode_step(oss, bf16, 1, 1500), narrow = decode_step(oss, mxfp4, 1, 1500);
    // By the roofline a decode step is its bytes; by operator the experts' small GEMMs are
    // bound by their tiles and launches too (weight-only: 16-bit compute), and gain less.
    EXPECT_LT(narrow.time_s, (by_operator ? 0.95 : 0.6) * wide.time_s) << by_operator;
    if (!by_operator) {
      // One token: its 4 experts in each of the 36 layers, 4.25 bits a weight instead of 16.
      EXPECT_NEAR(wide.bytes - narrow.bytes, 4.0 * p.mlp_experts / 128 * (2 - 4.25 / 8), 1e-6 * wide.bytes);
    }
    LlmStepModel model(oss, mxfp4);
    for (double decode : {1.0, 64.0}) {
      StepTime t = llm_step(oss, mxfp4, decode, 1500, 0, 0, 0);
      EXPECT_NEAR(model.step_time_s(decode, decode * 1500, 0, 0, decode), t.time_s, 1e-9 * t.time_s) << by_operator;
    }
  }
}

// An MoE layer by operator: its attention side as a dense layer's, its routed experts each at
// their share of the tokens. Mixtral 8x7B's experts have Mistral 7B's MLP shape and the two share
// attention, so one token (two experts hit, one token each) costs about two Mistral MLPs, and a
// large batch (every expert hit, a quarter of the tokens each) about two Mistral MLPs' work too.
TEST(LlmStepModel, MoeLayersTimeEachRoutedExpertAtItsShareOfTheTokens) {
  auto catalog = Catalog::embedded();
  ModelArch mixtral = resolve_model("mixtral-8x7b").value(), mistral = resolve_model("mistral-7b").value();
  PerfSetup setup;
  setup.accelerator = catalog.value().find_accelerator("H100");
  setup.efficiency = default_efficiency(*setup.accelerator);
  use_layer_operators(setup, nullptr);
  ASSERT_TRUE(uses_layer_operators(mixtral, setup));
  const auto mlp = mlp_operators(true);
  const LayerOperatorModel& model = *setup.layer_operators;
  LayerDims dims = layer_dims(mistral, 1);
  auto mistral_mlp = [&](double tokens) {
    return model.layer_time(setup.operator_device, dims, tokens, &mlp, layer_gemm_precision(setup)).time_s;
  };
  for (double tokens : {1.0, 4096.0, 16384.0}) {
    double extra_per_layer =
        (layers_by_operator_s(mixtral, setup, tokens) - layers_by_operator_s(mistral, setup, tokens)) / mixtral.num_layers;
    // Experts hit: 2 of 8 at one token; all 8 at thousands, each with tokens x 2 / 8.
    double hit = 8 * (1 - std::pow(1 - 2.0 / 8, tokens));  // expected experts hit, each token picking 2 of 8
    EXPECT_NEAR(hit, tokens == 1 ? 2.0 : 8.0, 1e-6);
    double routed = hit * mistral_mlp(tokens * 2 / hit);
    // Beyond Mistral's own MLP: the other routed expert's work, the router GEMM, dispatch and combine.
    EXPECT_NEAR(extra_per_layer, routed - mistral_mlp(tokens), 0.05 * routed) << tokens << " tokens";
    EXPECT_GT(extra_per_layer, 0.6 * mistral_mlp(tokens)) << tokens << " tokens";
  }
}

// Dispatch and combine move every token's hidden state on every device (tensor parallelism
// splits the experts' matrices, not the tokens): at tp8 they cost what they cost at tp1, and no
// less than their bytes at the device's whole bandwidth.
TEST(LlmStepModel, MoeDispatchAndCombineAreNotSplitByTensorParallelism) {
  auto catalog = Catalog::embedded();
  ModelArch mixtral = resolve_model("mixtral-8x7b").value();
  const double tokens = 16384;
  std::map<int, double> unsplit_s;
  for (int tp : {1, 8}) {
    PerfSetup setup;
    setup.accelerator = catalog.value().find_accelerator("H100");
    setup.efficiency = default_efficiency(*setup.accelerator);
    setup.tensor_parallel = tp;
    use_layer_operators(setup, nullptr);
    ASSERT_TRUE(uses_layer_operators(mixtral, setup));
    const LayerOperatorModel& model = *setup.layer_operators;
    const auto attention_side = mlp_operators(false);
    LayerDims dims = layer_dims(mixtral, tp);
    GemmPrecision precision = layer_gemm_precision(setup);
    double attention = model.layer_time(setup.operator_device, dims, tokens, &attention_side, precision).time_s;
    // The eight experts in one fused kernel per matrix (one launch each), one activation.
    std::array<bool, kLayerOperators> gemms{}, act{};
    gemms[static_cast<size_t>(LayerOperator::mlp_up_proj)] = gemms[static_cast<size_t>(LayerOperator::mlp_down_proj)] = true;
    act[static_cast<size_t>(LayerOperator::mlp_act)] = true;
    LayerDims expert = dims;
    expert.ffn = mixtral.moe_intermediate_size > 0 ? mixtral.moe_intermediate_size : mixtral.intermediate_size;
    double experts = 8 * model.layer_time(setup.operator_device, expert, tokens * 2 / 8, &gemms, precision).time_s -
                     7 * 2 * model.roofline(setup.operator_device).gemm_launch_s +
                     model.layer_time(setup.operator_device, expert, tokens * 2, &act, precision).time_s;
    OperatorShape router;
    router.n = 8;
    router.k = mixtral.hidden_size;
    double scoring = model.roofline(setup.operator_device).gemm_time_s(router, tokens);
    unsplit_s[tp] = layers_by_operator_s(mixtral, setup, tokens) / mixtral.num_layers - attention - experts - scoring;
    // Two passes over tokens x hidden x (1 + 2 experts), 16-bit.
    double bytes = 2 * tokens * 2.0 * mixtral.hidden_size * 3;
    EXPECT_GT(unsplit_s[tp], bytes / (setup.accelerator->memory_gb_per_s * 1e9)) << "tp" << tp;
  }
  EXPECT_NEAR(unsplit_s[8], unsplit_s[1], 1e-9 * unsplit_s[1]);
}

}  // namespace
}  // namespace gw
