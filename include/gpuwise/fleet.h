// gpuwise::fleet: the spec's fleet section: projects on a shared pool against static allocation,
// models sharing pools, request buckets across accelerators, owning against renting, and what-if
// optimizations with their payback. The question `gpuwise fleet SPEC` answers.
#pragma once

#include <cstdint>
#include <string>

#include "gpuwise/answer.h"
#include "gpuwise/catalog.h"
#include "gpuwise/spec.h"

namespace gpuwise {

struct FleetOptions {
  std::string calibration_path;  // from `gpuwise calibrate`; empty: the catalog's
  std::uint64_t seed = 1;        // for the what-if plans' simulations
};

// Throws gpuwise::Error for a spec without a fleet section or one it cannot take.
Answer fleet(const Catalog& catalog, const Spec& spec, const FleetOptions& options = {});

}  // namespace gpuwise
