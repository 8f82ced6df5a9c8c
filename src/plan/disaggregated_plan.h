// Disaggregated prefill and decode as plans: for every accelerator a prefill pool and a decode
// pool, each with its own tensor-parallel size and each sized for its part of the SLO at peak
// (prefill: the prompt tokens and TTFT; decode: the KV cache and TPOT), every prompt's KV sent
// over the offering's fabric from one to the other; both pools on whole nodes of one offering.
// What DistServe and Splitwise do, screened here and verified by the simulator like any plan.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "perf/request_lengths.h"
#include "plan/inference.h"
#include "plan/screen_engine.h"
#include "plan/verify.h"
#include "spec/spec.h"

namespace gw {

struct DisaggregatedSearch {
  const Catalog& catalog;
  const Spec& spec;
  const ModelSpec& model;
  const ServiceSpec& service;  // prompts as the replicas hold them (screen_service)
  const ScreenEngine& engine;
  const RequestLengths& lengths;
  const PlannerOptions& options;
  double peak_rps = 0;
  double max_utilization = 1;
  // The service's mean prompt and answer, summed once: the search screens thousands of pool
  // pairs, and a trace's sample holds every request.
  double mean_input_tokens = service.input_tokens.mean();
  double mean_output_tokens = service.output_tokens.mean();
};

// The link between the pools on an offering: the spec's deployment.disaggregation when given,
// else the offering's fabric (EFA, InfiniBand, RoCE at its network rate over its GPUs, 400 Gb/s
// per GPU when the catalog has no rate), else TCP at the node's network rate.
struct KvLink {
  std::string name;
  double gbps_per_gpu = 0;
  // The decode replicas pull each request's KV between their steps, no step meanwhile
  // (disaggregation.kv_transfer: between_steps), each pull with one call to the engine's worker.
  bool pulled_between_steps = false;
  double pull_call_s = 0;
};
KvLink kv_link_for(const Offering& offering, const ServiceSpec& service);

// One pool's replica layout with what the screen needs of it, worked out once.
struct PoolLayout {
  Configuration config;
  PerfSetup setup;
  double free_bytes = 0;                // for the KV cache, per device
  double kv_bytes_per_token = 0;        // per device, a draft's included
  double model_kv_bytes_per_token = 0;  // per device, the model's alone (what goes over the link)
};
PoolLayout pool_layout(const DisaggregatedSearch& in, const Configuration& config);

// A prefill pool and a decode pool at a rate; detail (when given) gets each pool's load and
// latency and the KV transfer. decode_replicas 0: the prefill pool alone (TTFT, its load and its
// link's).
ServiceLevel disaggregated_level(const DisaggregatedSearch& in, const PoolLayout& prefill, int prefill_replicas,
                                 const PoolLayout& decode, int decode_replicas, const KvLink& link, double rate_rps,
                                 DecodePool* detail = nullptr);

// Every disaggregated layout that meets the SLO at peak, at the fewest replicas per pool, on
// every offering and pricing the constraints allow (not spot: a reclaimed node takes a pool's
// share of every request). evaluated counts the layouts screened.
std::vector<PlanOption> search_disaggregated(const DisaggregatedSearch& in, long long& evaluated);

// Rents whole nodes of the option's offering for each pool, on at least min_nodes nodes each.
void place_disaggregated(PlanOption& option, int prefill_replicas, int decode_replicas);

// After verification: the plan's cheapest disaggregated layout simulated (when it was not) and
// the verdict against the cheapest aggregated one, with what binds each.
void judge_disaggregation(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, ServicePlan& plan,
                          const PlannerOptions& planner, const VerifyOptions* verify);

}  // namespace gw
