// The simulator's entry point: the options checked, then one Simulation run (simulation.h).
#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "sim/simulation.h"

namespace gw {

double SpeculativeDecoding::tokens_per_step() const {
  const double k = tokens;
  if (k <= 0) return 1;
  if (acceptance >= 1) return k + 1;
  return (1 - std::pow(acceptance, k + 1)) / (1 - acceptance);
}

double quantile_with_timeouts(const LogHistogram& served, long long timed_out, double q) {
  const double n = static_cast<double>(served.count()), all = n + static_cast<double>(std::max(0LL, timed_out));
  if (all <= 0) return 0;
  const double within = q * all;  // requests at or below the quantile, all of them served
  if (within > n + 1e-9) return std::numeric_limits<double>::infinity();
  return served.quantile(timed_out > 0 ? within / n : q);
}

Result<SimResult> simulate(ArrivalProcess& arrivals, const std::vector<ReplicaConfig>& replicas,
                           const SimOptions& options) {
  if (!(options.client_timeout_s >= 0)) return Error{"", 0, "client_timeout_s", "must be 0 (none) or positive"};
  if (replicas.empty()) return Error{"", 0, "replicas", "at least one replica"};
  bool prefill = false, decode = false;
  for (const auto& r : replicas) {
    prefill = prefill || r.role == ReplicaRole::prefill;
    decode = decode || r.role == ReplicaRole::decode;
  }
  if (prefill != decode) return Error{"", 0, "deployment.replicas", "disaggregated serving needs prefill and decode replicas"};
  if (options.scaling && prefill != !options.scaling->pools.empty())
    return Error{"", 0, "scaling", prefill ? "disaggregated replicas scale as pools of their own: give ScalingOptions::pools"
                                           : "scaling pools are a disaggregated deployment's prefill and decode replicas"};
  if (options.scaling && !options.scaling->pools.empty()) {
    const auto& pools = options.scaling->pools;
    if (pools.size() != 2 || replicas.size() != 2 || replicas[0].role != ReplicaRole::prefill || replicas[1].role != ReplicaRole::decode)
      return Error{"", 0, "scaling", "scaled disaggregated pools are one prefill replica's config, then one decode replica's"};
    for (const auto& r : replicas)
      if (r.pipeline_lanes > 1) return Error{"", 0, "scaling", "scaled disaggregated pools of pipeline stages are not simulated"};
    for (const auto& pool : pools) {
      if (!pool.decide) return Error{"", 0, "scaling", "each scaled pool needs a scaler"};
      if (pool.max_replicas < 1 || pool.initial_replicas < 0 || pool.initial_replicas > pool.max_replicas)
        return Error{"", 0, "scaling", "a pool's initial replicas must lie in [0, max replicas] and max replicas be at least 1"};
    }
  }
  if (prefill && options.router == Router::shared_queue)
    return Error{"", 0, "deployment.router", "a shared queue serves classic replicas; route prefill replicas another way"};
  if (options.decode_router == Router::shared_queue || options.decode_router == Router::prefix_affinity)
    return Error{"", 0, "decode_router", "decode replicas are chosen by load: round robin, random, power of two or least loaded"};
  if (const auto& s = options.scaling) {
    if (!s->decide && s->pools.empty()) return Error{"", 0, "scaling", "an autoscaled run needs a scaler"};
    if (s->pools.empty() && (s->max_replicas < 1 || s->initial_replicas < 0 || s->initial_replicas > s->max_replicas))
      return Error{"", 0, "scaling", "initial replicas must lie in [0, max replicas] and max replicas be at least 1"};
    if (!(s->interval_s > 0) || s->start_s < 0 || s->warm_start_s < 0 || s->warm_pool < 0 || s->node_provisioning_s < 0)
      return Error{"", 0, "scaling", "interval must be positive and delays non-negative"};
    if (!options.outages.empty()) return Error{"", 0, "outages", "outages are simulated on a fixed pool, not an autoscaled one"};
  }
  for (const auto& o : options.outages) {
    if (!(o.at_s >= 0) || !(o.replacement_s >= 0)) return Error{"", 0, "outages", "outage times must be non-negative"};
    for (int i : o.replicas)
      if (i < 0 || i >= static_cast<int>(replicas.size())) return Error{"", 0, "outages", fmt::format("no replica {}", i)};
  }
  for (const auto& r : replicas) {
    if (options.router == Router::shared_queue && (r.batching == SimBatching::continuous || r.llm))
      return Error{"", 0, "router", "a shared queue serves classic replicas; LLM replicas admit from their own queue"};
    bool llm = r.batching == SimBatching::continuous || (r.llm && r.batching == SimBatching::none);
    if (llm && (!r.llm || r.kv_blocks <= 0)) return Error{"", 0, "replicas", "an LLM replica needs a step model and KV blocks"};
    if (!llm && !r.batch_time) return Error{"", 0, "replicas", "a classic replica needs a batch time"};
  }
  sim_detail::Simulation simulation(arrivals, replicas, options);
  return simulation.run();
}

}  // namespace gw
