// The simulate question: each service's deployment (the spec's, or its plan's best) run through
// the discrete-event simulator on its traffic, with latency percentiles, throughput, SLO
// attainment, the verdict (stable or overloaded) and what the run rests on.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "perf/efficiency.h"
#include "perf/step_error.h"
#include "sim/deployment.h"
#include "sim/simulator.h"
#include "spec/spec.h"

namespace gw {

struct SimulateSpecOptions {
  const Calibration* calibration = nullptr;  // not owned; must outlive the call
  uint64_t seed = 1;
  bool average_rate = false;   // rps-driven traffic at its average rate (default: its peak)
  long long requests = 0;      // stop admitting after this many; 0: the whole trace, or 100,000 of a synthetic process
  double duration_s = 0;       // stop admitting after this many simulated seconds; 0: no limit
  bool sample_steps = false;   // sample every 16th step's parts for the step-time error (--explain)
  bool show_progress = false;  // a progress bar on stderr
};

struct ServiceRun {
  std::string name;
  bool llm = false;
  Deployment deployment;
  std::string origin;          // "spec" or "the plan's best"
  std::string arrivals;        // the arrival process
  double rate_rps = 0;         // the rate simulated (a trace's measured rate)
  SimResult result;
  bool slo_given = false;
  double client_timeout_s = 0;  // the spec's traffic.client_timeout_s (0: none)
  bool meets = true;           // 99% of requests within the SLO, or no SLO given
  std::string engine;          // an LLM replica's scheduler and KV cache, in words; empty otherwise
  std::optional<StepErrorSummary> step_error;
  // What the deployment costs on the cheapest offering the spec allows for each group (whole
  // instances at the spec's pricing); nullopt when a group has no priced offering.
  std::optional<double> usd_per_hour;
  std::vector<std::string> priced_on;  // "2 x g6.xlarge (aws us-east-1, on-demand)"
  std::vector<std::string> assumptions;
};

struct SimulateResult {
  std::string spec_path;
  uint64_t seed = 1;
  bool requests_given = false;  // --requests set the count (said when a run stops at it)
  std::vector<ServiceRun> services;
  bool all_meet() const;
};

// An Error for a spec the question cannot take (a name the catalog lacks, a service with neither
// a deployment nor an SLO to plan one, a deployment that does not fit).
Result<SimulateResult> simulate_spec(const Catalog& catalog, const Spec& spec, const SimulateSpecOptions& options);

// Deployment in words: "2 x A10G tp1, continuous batching (max 64), least-loaded".
std::string deployment_text(const Deployment& deployment);

}  // namespace gw
