// Offline inference (a spec's batch_jobs): items to get through by a deadline after each start,
// planned for throughput rather than latency. Each replica runs full, at the largest batch its
// memory holds (the step model and KV cache `plan` sizes services with); the fewest whole nodes
// that finish by the deadline after a cold start, on every allowed accelerator, offering and
// pricing (spot for interruptible jobs, less the work reclaims cost), the cheapest per run;
// verified by simulating the replicas at the rate the deadline needs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/inference.h"
#include "plan/verify.h"

namespace gw {

struct BatchOption {
  Configuration config;
  const Offering* offering = nullptr;
  Pricing pricing = Pricing::on_demand;
  int replicas = 0, nodes = 0;
  double items_per_s_per_replica = 0;  // a replica run full, as the step model gives it
  double startup_s = 0;                // cold start before the first item
  double spot_loss_share = 0;          // spot: expected share of node time reclaims cost
  double run_hours = 0;                // start to last item, reclaims' expected losses included
  double usd_per_run = 0;
  std::optional<SimulatedCheck> simulated;  // the replicas at the rate the deadline needs
};

struct BatchJobPlan {
  std::string job;
  bool feasible = false;
  std::string binding;                 // why none finishes by the deadline
  std::optional<BatchOption> best;
  std::vector<BatchOption> frontier;   // the cheapest per accelerator, cheapest first
  double runs_per_month = 0;
  double usd_per_month = 0;            // best's cost per run x runs per month
  std::vector<std::string> assumptions;
};

// verify: simulate the best at the rate the deadline needs (nullptr: the screen alone).
BatchJobPlan plan_batch_job(const Catalog& catalog, const Spec& spec, const BatchJobSpec& job, const PlannerOptions& planner,
                            const VerifyOptions* verify);

// The job as a service at a rate: its model, lengths and engine settings, no SLO, clients that
// wait for ever (the simulator's and the step model's view of it).
ServiceSpec batch_job_service(const BatchJobSpec& job, bool llm, double rate_rps);

}  // namespace gw
