// Many models on shared GPU pools: each model needs, per accelerator type, a share of a GPU's
// time at its peak (from the planner at its SLO) and a copy of itself in every GPU of its pool
// (weights and working set). A pool is one accelerator type whose GPUs all host the same models;
// its GPUs = ceil(its busiest hour's sum of shares / utilization limit), so models that peak at
// different hours net out; and the copies must fit in one GPU's memory.
// The cheapest assignment of models to pools and types is a small MILP (GLPK, exact); brute force
// over set partitions checks it; one pool per model is the baseline.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "catalog/catalog.h"
#include "core/error.h"
#include "perf/efficiency.h"
#include "plan/inference.h"
#include "spec/spec.h"

namespace gw {

struct PoolCandidate {
  const Accelerator* accelerator = nullptr;
  std::string accelerator_name;
  double usd_per_gpu_hour = 0;
  double peak_gpus = 0;      // GPU-equivalents busy at peak (at utilization 1)
  double average_gpus = 0;
  double vram_gib = 0;       // one copy: weights, working set at the operating batch, overhead
  double usable_vram_gib = 0;
  std::vector<double> hourly_gpus;  // 24: the share at each hour of the day (a daily shape); empty: peak all day
  std::string instance_type;        // the offering the planner priced it on
  std::string cpu_architecture;     // its host CPU (x86_64, arm64): what the serving image is built for
  int gpus_per_node = 1;            // its GPUs: a pool on it is billed in whole nodes
  Pricing pricing = Pricing::on_demand;  // spot: a spot plan with its on-demand floor (interruptible services)
  // What a pool of these rents: the accelerator on one instance type at one pricing. Models share
  // a pool only where they would rent the same: a service that may not run on spot never rides
  // another's spot nodes, nor is billed at their price.
  std::string offer() const;
};

struct ModelDemand {
  std::string service;
  std::vector<PoolCandidate> candidates;  // one per accelerator type it can run on at its SLO (tp 1)
  double average_rps = 0;
  bool latency_tolerant = false;          // SLO of a second or more
  int min_replicas = 1;                   // the service's availability floor: its pool has at least this many GPUs
  // Scale to zero fits only where the traffic pauses for longer than the keep-alive and the
  // requests that meet a cold start stay within the SLO's 1% (or the cold start within the SLO).
  bool scale_to_zero_fits = false;
  std::string scale_to_zero_why;
};

// Whether a service may scale to zero, and why (the ModelDemand fields above).
std::pair<bool, std::string> scale_to_zero_advice(const ServiceSpec& service, double cold_start_s);

struct ModelPool {
  std::string accelerator;
  std::string offer;          // its models' candidates' offer()
  std::vector<int> models;   // indexes into the demands
  int gpus = 0;               // a whole number of nodes' GPUs
  int gpus_per_node = 1;
  double usd_per_month = 0;
  double vram_gib = 0, peak_gpus = 0;
};

struct PoolAssignment {
  std::vector<ModelPool> pools;
  double usd_per_month = 0;
  std::string method;        // glpk, brute force, one pool per model
};

// Exact by MILP (GLPK). Errors when a model has no candidate or the solver fails.
Result<PoolAssignment> assign_pools_exact(const std::vector<ModelDemand>& models, double max_utilization);
// Exact by enumerating set partitions (for tests and small cases: Bell(n) partitions).
PoolAssignment assign_pools_brute_force(const std::vector<ModelDemand>& models, double max_utilization);
PoolAssignment one_pool_per_model(const std::vector<ModelDemand>& models, double max_utilization);

// The model's candidate a pool runs it as (the one renting the pool's offer), or nullptr.
const PoolCandidate* candidate_in(const ModelDemand& model, const ModelPool& pool);

// The pool's GPUs busy in its busiest hour at utilization 1: its models' shares on its type, summed hour by hour.
double pool_peak_gpus(const std::vector<ModelDemand>& models, const ModelPool& pool);
// The demands with each pool's models' shares on its type scaled by the GPUs its simulation took
// over those its shares sized (`sized`: the pools as assigned; `checked`: the same pools once
// simulated); empty where no pool grew.
std::vector<ModelDemand> shares_as_simulated(const std::vector<ModelDemand>& models, const PoolAssignment& sized,
                                             const PoolAssignment& checked);

// The planner's view of each service on each allowed accelerator (tensor parallel 1).
Result<std::vector<ModelDemand>> model_demands(const Catalog& catalog, const Spec& spec, const Calibration* calibration);

// The option of a model's plan on one accelerator type a pool would run it as: tensor parallel 1,
// its GPU costing least per request/s it carries (a batched replica over an unbatched one at the
// same price per GPU); within 0.1%, on the smallest node (a pool is billed in whole nodes).
// nullptr where the plan has none. `pricing`: only options at that pricing.
const PlanOption* pool_option(const ServicePlan& plan, std::optional<Pricing> pricing = std::nullopt);

}  // namespace gw
