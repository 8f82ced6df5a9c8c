// gpuwise::simulate: each service's deployment (the spec's `deployment:`, or its plan's best) run
// through the discrete-event simulator on its traffic (a real trace, or a seeded arrival process):
// latency, TTFT and TPOT percentiles, throughput, SLO attainment and whether the deployment keeps
// up. The question `gpuwise simulate SPEC` answers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gpuwise/catalog.h"
#include "gpuwise/spec.h"

namespace gpuwise {

struct SimulateOptions {
  std::string calibration_path;  // from `gpuwise calibrate`; empty: the catalog's
  std::uint64_t seed = 1;        // the same seed, the same run
  bool average_rate = false;     // rate-driven traffic at its average (default: its peak)
  long long requests = 0;        // stop admitting after this many; 0: a whole trace, or 100,000
  double duration_s = 0;         // stop admitting after this many simulated seconds; 0: no limit
  bool explain = false;          // sample steps for the step-time error, as --explain does
};

class SimulateResult {
 public:
  // Every service with an SLO met it for 99% of its requests.
  bool all_meet() const;
  // `gpuwise simulate --format json`, byte for byte (schemas/simulate.schema.json).
  std::string to_json() const;
  // The table format (explain: with each service's assumptions) and the Markdown report.
  std::string to_text() const;
  std::string to_markdown() const;

  struct Impl;
  explicit SimulateResult(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

// Throws gpuwise::Error for a spec it cannot take (a service with neither a deployment nor an SLO
// to plan one, a deployment that does not fit its devices, a name the catalog lacks).
// Runs on the calling thread; independent calls may run in parallel threads.
SimulateResult simulate(const Catalog& catalog, const Spec& spec, const SimulateOptions& options = {});

}  // namespace gpuwise
