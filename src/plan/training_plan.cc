#include "plan/training_plan.h"

#include "plan/inference.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace gw {

TrainingHardware hardware_of(const Offering& offering, const Accelerator& accelerator, int devices) {
  TrainingHardware hw;
  hw.accelerator = &accelerator;
  hw.count = devices;
  hw.devices_per_node = offering.accelerator_count;
  hw.node_network_gbps = offering.network_gbps.value_or(100);
  hw.fabric = offering.fabric;
  return hw;
}

double node_preemptions_per_hour(const SpotSettings& spot) {
  if (!spot.trace) return spot.preemptions_per_hour;
  long long up = 0, losses = 0;
  for (size_t i = 0; i < spot.trace->available.size(); ++i) {
    up += spot.trace->available[i];
    if (i > 0 && spot.trace->available[i - 1] && !spot.trace->available[i]) ++losses;
  }
  return up > 0 ? losses / (up * spot.trace->gap_s / 3600.0) : spot.preemptions_per_hour;
}

void price_candidate(TrainingCandidate& c, const SpotSettings& spot) {
  const TrainingEstimate& e = c.estimate;
  const int nodes = std::max(1, c.instances);
  // Each node writes its shard of the checkpoint in parallel.
  double bandwidth = spot.storage_gbps / 8 * 1e9 * nodes;
  c.checkpoint_s = e.checkpoint_bytes / bandwidth;
  // A restart gets capacity back, starts every node's processes (rendezvous and NCCL setup grow
  // with the node count) and reloads the checkpoint at the same bandwidth.
  c.restart_s = spot.provisioning_s + spot.start_s_per_doubling * std::log2(static_cast<double>(nodes) + 1) + c.checkpoint_s;
  bool spot_priced = c.pricing == Pricing::spot;
  // A synchronous job stops when any of its nodes is preempted: nodes x the rate of one.
  c.preemptions_per_hour = spot_priced ? node_preemptions_per_hour(spot) * nodes : 0;
  double mtbf = c.preemptions_per_hour > 0 ? 3600.0 / c.preemptions_per_hour : 1e12;
  c.daly_interval_s = spot_priced ? daly_interval_s(c.checkpoint_s, mtbf) : 0;
  c.checkpoint_interval_s = spot.interval_s ? *spot.interval_s : spot_priced ? c.daly_interval_s : 3600.0;
  c.checkpoint_interval_s = std::max(c.checkpoint_interval_s, 60.0);
  if (spot_priced) {
    c.expected_time_s = expected_wall_time_s(e.time_s, c.checkpoint_interval_s, c.checkpoint_s, c.restart_s, mtbf);
  } else {
    c.expected_time_s = e.time_s * (1 + c.checkpoint_s / c.checkpoint_interval_s);
  }
  c.usd = c.usd_per_hour * c.expected_time_s / 3600.0;
  double communication = e.tp_comm_s + e.pp_comm_s + e.dp_exposed_s;
  if (e.step_time_s > 0 && communication / e.step_time_s > 0.05)
    c.estimate.warnings.push_back(fmt::format("communication takes {:.0f}% of each step: about ${:.0f} of this run",
                                              communication / e.step_time_s * 100, c.usd * communication / e.step_time_s));
}

TrainingPlan plan_training(const Catalog& catalog, const TrainingJob& job, const TrainingSearch& search,
                           const SpotSettings& spot) {
  TrainingPlan plan;
  std::vector<int> counts = search.device_counts;
  if (counts.empty())
    for (int n = 1; n <= 4096; n *= 2) counts.push_back(n);
  std::vector<TrainingCandidate> all;
  std::map<std::string, TrainingEstimate> estimates;
  double fastest = 1e300;
  std::string fastest_where;
  for (const auto& accelerator : catalog.accelerators()) {
    if (!search.accelerators.empty() &&
        std::find(search.accelerators.begin(), search.accelerators.end(), &accelerator) == search.accelerators.end())
      continue;
    Constraints where;
    where.clouds = search.clouds;
    where.regions = search.regions;
    for (const Offering* offering : allowed_offerings(catalog, where, accelerator, 1)) {
      for (int devices : counts) {
        // Whole instances: multi-node jobs use full nodes.
        if (devices > offering->accelerator_count && devices % offering->accelerator_count != 0) continue;
        if (devices < offering->accelerator_count && devices != offering->accelerator_count) continue;
        int instances = std::max(1, devices / offering->accelerator_count);
        ++plan.candidates;
        // Several nodes need a fabric between them (a TPU slice is one node on its ICI).
        if (instances > 1 && offering->fabric.empty() && !search.allow_unfabric_clusters) {
          ++plan.skipped_no_fabric;
          continue;
        }
        // Offerings with the same hardware (accelerator, count, node size, network) train alike.
        TrainingHardware hw = hardware_of(*offering, accelerator, devices);
        hw.cross_zone = search.cross_zone;
        std::string key = fmt::format("{}|{}|{}|{}|{}", accelerator.name, devices, hw.devices_per_node, hw.node_network_gbps, hw.fabric);
        auto cached = estimates.find(key);
        if (cached == estimates.end())
          cached = estimates.emplace(key, estimate_training_run(job, hw, search.calibration)).first;
        const TrainingEstimate& estimate = cached->second;
        if (!estimate.feasible) continue;
        for (Pricing pricing : search.pricing) {
          if (pricing == Pricing::spot && !search.interruptible) continue;
          auto price = offering->usd_per_hour(pricing);
          if (!price) continue;
          TrainingCandidate c;
          c.offering = offering;
          c.instances = instances;
          c.devices = devices;
          c.pricing = pricing;
          c.estimate = estimate;
          c.usd_per_hour = *price * instances;
          price_candidate(c, spot);
          if (c.expected_time_s < fastest) {
            fastest = c.expected_time_s;
            fastest_where = fmt::format("{} x {} ({})", devices, accelerator.name, pricing_name(pricing));
          }
          if (search.deadline_s && c.expected_time_s > *search.deadline_s) continue;
          all.push_back(c);
        }
      }
    }
  }
  if (all.empty()) {
    if (fastest < 1e299 && search.deadline_s)
      plan.binding = fmt::format("deadline {:.1f} days cannot be met: the fastest candidate takes {:.1f} days ({})",
                                 *search.deadline_s / 86400, fastest / 86400, fastest_where);
    else if (plan.skipped_no_fabric > 0)
      plan.binding = fmt::format("{} multi-node candidates were left out: their instances share no EFA/InfiniBand-class "
                                 "fabric (--allow-tcp-clusters to consider them); none of the rest fits the model in memory",
                                 plan.skipped_no_fabric);
    else
      plan.binding = "no offering in the allowed clouds and regions fits the model in memory";
    return plan;
  }
  std::sort(all.begin(), all.end(), [](const TrainingCandidate& a, const TrainingCandidate& b) {
    if (a.usd != b.usd) return a.usd < b.usd;
    if (a.expected_time_s != b.expected_time_s) return a.expected_time_s < b.expected_time_s;
    return a.offering->key() < b.offering->key();
  });
  plan.feasible = true;
  plan.best = all.front();
  double best_time = 1e300;
  for (const auto& c : all) {
    if (c.expected_time_s < best_time * 0.98) {
      best_time = c.expected_time_s;
      plan.pareto.push_back(c);
      if (plan.pareto.size() >= 8) break;
    }
  }
  // When a job names a few accelerators, show each one's cheapest run, dominated or not: the
  // comparison is the question ("is moving from a T4 to an A100 worth it?").
  if (!search.accelerators.empty() && search.accelerators.size() <= 4) {
    for (const Accelerator* a : search.accelerators) {
      bool shown = std::any_of(plan.pareto.begin(), plan.pareto.end(),
                               [&](const TrainingCandidate& c) { return c.offering->accelerator == a->name; });
      if (shown) continue;
      auto it = std::find_if(all.begin(), all.end(), [&](const TrainingCandidate& c) { return c.offering->accelerator == a->name; });
      if (it != all.end()) plan.pareto.push_back(*it);
    }
  }
  return plan;
}

}  // namespace gw
