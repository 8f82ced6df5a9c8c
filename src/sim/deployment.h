// Turns a deployment (accelerator groups, batching, limits) and a service into simulator
// replicas and arrivals: step times from the step-time model or the user's measurements, KV
// blocks from the memory model.
#pragma once

#include <vector>

#include "core/serving_defaults.h"
#include "catalog/catalog.h"
#include "perf/efficiency.h"
#include "sim/simulator.h"
#include "spec/spec.h"

namespace gw {

struct ReplicaBuildOptions {
  const Calibration* calibration = nullptr;
  double usable_fraction = kUsableMemoryFraction;
  double overhead_gib = kRuntimeOverheadGib;
};

Result<std::vector<ReplicaConfig>> build_replicas(const Catalog& catalog, const ModelSpec& model,
                                                  const ServiceSpec& service, const Deployment& deployment,
                                                  const ReplicaBuildOptions& options);

// Arrivals for a service: its trace (scaled), its profile, or its process at rate_rps.
ArrivalOptions arrival_options(const ServiceSpec& service, double rate_rps);

}  // namespace gw
