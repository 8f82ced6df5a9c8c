// The plan question: the cheapest configuration meeting each service's SLO and each training
// job's deadline in a spec, with totals against the budget, the quotas needed and the cost per
// unit. One call answers `gpuwise plan`, a C++ program (include/gpuwise/plan.h) and Python alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/error.h"
#include "core/serving_defaults.h"
#include "perf/efficiency.h"
#include "plan/batch_plan.h"
#include "plan/inference.h"
#include "plan/quotas.h"
#include "plan/training_plan.h"
#include "plan/verify.h"
#include "spec/spec.h"

namespace gw {

struct PlanSpecOptions {
  const Calibration* calibration = nullptr;  // not owned; must outlive plan_spec (not the result)
  double usable_fraction = kUsableMemoryFraction;  // of device memory the server may use
  double overhead_gib = kRuntimeOverheadGib;       // per device
  int prefill_chunk_tokens = kStepTokenBudget;     // token budget per step (chunked prefill)
  bool simulate = true;                            // verify candidates in the simulator
  long long sim_requests = 20000;                  // per simulated candidate
  uint64_t seed = 1;
  int jobs = 0;  // services planned at once (0: one per core); the answer is the same for any
  // LLM services also laid out as disaggregated prefill and decode pools (off where the answer
  // must be one pool: autoscaling manifests).
  bool disaggregated = true;
};

// One line of the cost-per-unit summary: a service per 1k inferences, a training job per run.
struct UnitCost {
  std::string name, kind;  // kind: "service", "batch job" or "training"
  double usd_per_month = 0;
  double usd_per_unit = 0;  // NaN when the service has no traffic
  std::string unit;         // "1k inferences" or "run"
};

struct PlanResult {
  // A copy of the spec that was planned: the writers name its services, models and traces.
  Spec spec;
  std::vector<ServicePlan> services;  // one per spec.services, in order
  std::vector<TrainingPlan> training; // one per spec.training, in order
  std::vector<BatchJobPlan> batch_jobs;  // one per spec.batch_jobs, in order
  // Where each service's step-time efficiency came from (--explain), one per service.
  std::vector<std::string> efficiency_sources;
  double total_usd_per_month = 0;     // services plus training runs per month
  double one_off_training_usd = 0;    // training jobs with no runs per month, one run each
  double one_off_batch_usd = 0;       // batch jobs with no schedule or runs per month, one run each
  bool over_budget = false;           // the spec's budget_usd_per_month is exceeded
  std::vector<QuotaNeed> quotas;
  std::vector<UnitCost> unit_costs;   // the largest monthly cost first
  double unit_costs_usd_per_month = 0;  // their sum, the denominator of each share

  bool all_feasible() const;
  bool short_of_quota() const;
  // Every service and job planned, within budget and quota.
  bool met() const { return all_feasible() && !over_budget && !short_of_quota(); }
  // The CLI's exit status: 0 met, 3 the constraints cannot be met or the budget is exceeded.
  int exit_code() const { return met() ? 0 : 3; }
};

// Plans every service (screened, then verified in the simulator unless !options.simulate) and
// every training job of `spec`. An Error for a spec the question cannot take (no SLO, a name the
// catalog lacks, an unreadable spot trace); an infeasible plan is a result, not an error.
// The result points into `catalog` (accelerators, offerings): the catalog must outlive it.
Result<PlanResult> plan_spec(const Catalog& catalog, const Spec& spec, const PlanSpecOptions& options);

// The simulator options a plan was verified with (for scaling the plan's layout afterwards).
VerifyOptions verify_options(const PlanSpecOptions& options);

}  // namespace gw
