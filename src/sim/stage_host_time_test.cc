#include "sim/stage_host_time.h"

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "model/presets.h"
#include "perf/layer_operators.h"
#include "perf/step_model.h"
#include "sim/deployment.h"
#include "sim/simulator.h"

namespace gw {
namespace {

// One request arriving at time 0.
class OnePromptArrival final : public ArrivalProcess {
 public:
  OnePromptArrival(double input, double output) : arrival_(0, input, output) {}
  std::optional<Arrival> next() override {
    if (given_) return std::nullopt;
    given_ = true;
    return arrival_;
  }

 private:
  Arrival arrival_;
  bool given_ = false;
};

// The A100's factors as DistServe's lowest-load disaggregated run calibrated them (the bench's
// held-out pass), with the memory share given.
Calibration a100_calibration(double memory) {
  const Catalog catalog = Catalog::embedded().value();
  EfficiencyFactors f = default_efficiency(*catalog.find_accelerator("A100-80GB"));
  f.compute = 0.5283;
  f.memory = memory;
  Calibration calibration;
  calibration.set("A100-80GB", f);
  return calibration;
}

PerfSetup a100_setup(const Catalog& catalog, const Calibration* calibration) {
  PerfSetup setup;
  setup.accelerator = catalog.find_accelerator("A100-80GB");
  setup.weight_precision = Precision::fp16;
  setup.kv_precision = Precision::bf16;
  setup.efficiency = efficiency_for(*setup.accelerator, calibration);
  use_layer_operators(setup, calibration);
  return setup;
}

double decode_slope_s(const LlmStepModel& m, double context) {
  return (m.step_time_s(64, 64 * context, 0, 0, 64) - m.step_time_s(16, 16 * context, 0, 0, 16)) / 48;
}

TEST(StageHostTime, WhatTheCalibrationAddsPerSequenceOverTheUncalibratedStep) {
  const Catalog catalog = Catalog::embedded().value();
  const ModelArch arch = load_preset("opt-13b").value();
  const Calibration calibration = a100_calibration(0.5171);
  const double host_s = stage_host_s_per_sequence(arch, a100_setup(catalog, &calibration), &calibration, 800);
  const LlmStepModel calibrated(arch, a100_setup(catalog, &calibration)), uncalibrated(arch, a100_setup(catalog, nullptr));
  EXPECT_NEAR(host_s, decode_slope_s(calibrated, 800) - decode_slope_s(uncalibrated, 800), 1e-12);
  // A tenth to a half of a millisecond, as the engines measured (bench/README.md): 0.72 ms per
  // sequence on one stage where the GPU's share is about 0.44.
  EXPECT_GT(host_s, 0.1e-3);
  EXPECT_LT(host_s, 0.5e-3);
  // A slower calibrated memory leaves more per sequence over the GPU's time.
  const Calibration slower = a100_calibration(0.4);
  EXPECT_GT(stage_host_s_per_sequence(arch, a100_setup(catalog, &slower), &slower, 800), host_s);
  // Nothing without a calibration of this accelerator, and never less than nothing.
  EXPECT_EQ(stage_host_s_per_sequence(arch, a100_setup(catalog, nullptr), nullptr, 800), 0);
  Calibration elsewhere;
  elsewhere.set("H100-SXM", calibration.find("A100-80GB").value());
  EXPECT_EQ(stage_host_s_per_sequence(arch, a100_setup(catalog, &elsewhere), &elsewhere, 800), 0);
  const Calibration faster = a100_calibration(1.0);
  EXPECT_EQ(stage_host_s_per_sequence(arch, a100_setup(catalog, &faster), &faster, 800), 0);
}

// Each stage past the first adds the host time per decoding sequence to a lane's step: one
// request decoding alone on a replica of two stages takes that much longer per token than on
// the same lanes without it; one stage pays none.
TEST(StageHostTime, EveryStagePastTheFirstPaysItPerDecodingSequence) {
  const Catalog catalog = Catalog::embedded().value();
  ModelSpec model;
  model.arch = load_preset("opt-13b").value();
  model.precision = Precision::fp16;
  ServiceSpec service;
  service.input_tokens.sample = {500};
  service.output_tokens.sample = {101};
  Deployment d;
  d.batching = "continuous";
  const Calibration calibration = a100_calibration(0.5171);
  ReplicaBuildOptions options;
  options.calibration = &calibration;
  d.groups = {{"A100-80GB", 1, 1, "both", 2}};
  auto lanes = build_replicas(catalog, model, service, d, options);
  d.groups = {{"A100-80GB", 1, 1}};
  auto one_stage = build_replicas(catalog, model, service, d, options);
  ASSERT_TRUE(lanes.ok() && one_stage.ok());
  const double host_s = lanes.value()[0].stage_host_s_per_sequence;
  EXPECT_NEAR(host_s,
              stage_host_s_per_sequence(model.arch, a100_setup(catalog, &calibration), &calibration, 500 + 101.0 / 2), 1e-12);
  std::vector<ReplicaConfig> without = lanes.value();
  for (auto& lane : without) lane.stage_host_s_per_sequence = 0;
  SimOptions o;
  o.check_invariants = true;
  auto tpot_s = [&o](const std::vector<ReplicaConfig>& replicas) {
    OnePromptArrival one(500, 101);
    auto r = simulate(one, replicas, o);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r.value().tpot.mean() : 0.0;
  };
  EXPECT_NEAR(tpot_s(lanes.value()) - tpot_s(without), host_s, 1e-9);
  EXPECT_NEAR(tpot_s(one_stage.value()), tpot_s(without), 1e-9);  // a lane's step is the whole model's
}

}  // namespace
}  // namespace gw
