// Checks screened plans in the simulator: the cheapest candidates are simulated at peak traffic
// in cost order, candidates that miss the SLO in simulation are dropped, and the plan keeps the
// cheapest that meets it (adding replicas to the screened best when none does).
#pragma once

#include <limits>
#include <optional>
#include <string>

#include "core/serving_defaults.h"
#include "plan/inference.h"
#include "sim/deployment.h"

namespace gw {

struct VerifyOptions {
  ReplicaBuildOptions build;
  long long requests = 20000;  // per simulated candidate (traces: the whole trace, up to this)
  uint64_t seed = 1;
  int prefill_chunk_tokens = kStepTokenBudget;
  int extra_replicas = 6;      // how far to grow the best when no candidate passes
  int jobs = 1;                // frontier options simulated at once (0: one per core)
};

// The same with at most 5,000 requests: the shorter runs that check options beside the plan's
// (its frontier, the disaggregated layouts it weighs).
VerifyOptions brief_options(const VerifyOptions& options);

// The first p99 target of the SLO a simulation misses ("ttft_p99_s", ...; "" when it meets
// them all), or the prompts rejected: one rule for plan verification and scaling policies.
std::string slo_miss(const Slo& slo, const SimResult& result);

// Runs one candidate through the simulator.
Result<SimulatedCheck> simulate_option(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service,
                                       const PlanOption& option, const VerifyOptions& options);

// Simulates an option once (the result is kept in option.simulated); true when it meets the SLO.
bool verify_option(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service, PlanOption& option,
                   const VerifyOptions& options);

// Adds replicas to a screened option until the simulation agrees: one at a time up to
// extra_replicas, then doubling (to 16 times the screen's count) and bisecting to the fewest.
// Gives up on counts that cost below_usd_per_hour or more.
std::optional<PlanOption> grow_until_verified(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service,
                                              const PlanOption& screened, const VerifyOptions& options,
                                              double below_usd_per_hour = std::numeric_limits<double>::infinity());

void verify_plan(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, ServicePlan& plan,
                 const VerifyOptions& options);

// The deployment a plan option stands for, run by the engine the spec's deployment describes
// (its prefix cache, speculative decoding, scheduler), when given.
Deployment deployment_of(const PlanOption& option, bool llm, int prefill_chunk_tokens, const Deployment* engine = nullptr);

}  // namespace gw
