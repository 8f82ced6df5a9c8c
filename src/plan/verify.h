// Checks screened plans in the simulator: the cheapest candidates are simulated at peak traffic
// in cost order, candidates that miss the SLO in simulation are dropped, and the plan keeps the
// cheapest that meets it (adding replicas to the screened best when none does).
#pragma once

#include "plan/inference.h"
#include "sim/deployment.h"

namespace gw {

struct VerifyOptions {
  ReplicaBuildOptions build;
  long long requests = 20000;  // per simulated candidate (traces: the whole trace, up to this)
  uint64_t seed = 1;
  int prefill_chunk_tokens = 2048;
  int extra_replicas = 6;      // how far to grow the best when no candidate passes
};

// Runs one candidate through the simulator.
Result<SimulatedCheck> simulate_option(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service,
                                       const PlanOption& option, const VerifyOptions& options);

void verify_plan(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, ServicePlan& plan,
                 const VerifyOptions& options);

// The deployment a plan option stands for.
Deployment deployment_of(const PlanOption& option, bool llm, int prefill_chunk_tokens);

}  // namespace gw
