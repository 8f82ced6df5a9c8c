// gpuwise::scale: each service's autoscaling policies (queue depth, GPU duty cycle, CPU for
// contrast, scale-to-zero with cold starts) simulated on its time-varying traffic, with the
// cheapest policy meeting the SLO. The question `gpuwise scale SPEC` answers.
#pragma once

#include <cstdint>
#include <string>

#include "gpuwise/answer.h"
#include "gpuwise/catalog.h"
#include "gpuwise/spec.h"

namespace gpuwise {

struct ScaleOptions {
  std::string calibration_path;  // from `gpuwise calibrate`; empty: the catalog's
  std::uint64_t seed = 1;
  double hours = 0;              // to simulate; 0: the traffic's own span
  int shapes = 0;                // replica layouts to compare; 0: the spec's scaling.shapes, else 1
  bool explain = false;          // each layout's assumptions in to_text()
  int jobs = 0;                  // policies simulated at once (0: one per core); the same answer for any
  // Spans over a day replay steady stretches instead of simulating them; exact simulates every
  // request of any span, fast_forward replays on a day or less too.
  bool exact = false;
  bool fast_forward = false;
};

// exit_code() 3 when a service has no policy meeting its SLO. Throws gpuwise::Error for a spec
// it cannot take. Seconds to minutes (a week of traffic); runs on the calling thread.
Answer scale(const Catalog& catalog, const Spec& spec, const ScaleOptions& options = {});

}  // namespace gpuwise
