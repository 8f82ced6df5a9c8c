// The engine's host time per decoding sequence that each pipeline stage pays again: a replica of
// pp stages shares a step's GPU time among its micro-batches, but not the engine's per-sequence
// work around it (each micro-batch's inputs and block tables go to every stage's worker).
#pragma once

#include "model/model_arch.h"
#include "perf/efficiency.h"
#include "perf/step_time.h"

namespace gw {

// What a calibration adds to a decode step per sequence over the uncalibrated step (the roofline
// and the measured operator profiles: GPU time only), at `context_tokens` per sequence, taken as
// that host time. 0 without a calibration for the setup's accelerator: the uncalibrated step
// holds no host time to repeat. Checked on DistServe's measured two-stage decode (OPT-13B on
// A100-80GB: bench/README.md, distserve_alignment.py).
double stage_host_s_per_sequence(const ModelArch& arch, const PerfSetup& setup, const Calibration* calibration,
                                 double context_tokens);

}  // namespace gw
