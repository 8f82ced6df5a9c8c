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

std::vector<int> node_count_grid(int max_nodes) {
  std::vector<int> counts;
  for (int n = 1; n <= std::min(16, max_nodes); ++n) counts.push_back(n);
  for (int step = 1; 16.0 * std::pow(2.0, step / 8.0) <= max_nodes + 0.5; ++step) {
    int n = static_cast<int>(std::lround(16.0 * std::pow(2.0, step / 8.0)));
    if (n > counts.back()) counts.push_back(n);
  }
  if (!counts.empty() && counts.back() < max_nodes && max_nodes > 16) counts.push_back(max_nodes);
  return counts;
}

namespace {

// One offering's runs at a device count, priced for each allowed pricing (empty when the
// layout search finds nothing that fits).
struct CountSearch {
  const TrainingJob& job;
  const TrainingSearch& search;
  const SpotSettings& spot;
  std::map<std::string, TrainingEstimate> estimates;

  std::vector<TrainingCandidate> at(const Offering& offering, const Accelerator& accelerator, int devices) {
    std::vector<TrainingCandidate> out;
    TrainingHardware hw = hardware_of(offering, accelerator, devices);
    hw.cross_zone = search.cross_zone;
    // Offerings with the same hardware (accelerator, count, node size, network) train alike.
    std::string key = fmt::format("{}|{}|{}|{}|{}", accelerator.name, devices, hw.devices_per_node, hw.node_network_gbps, hw.fabric);
    auto cached = estimates.find(key);
    if (cached == estimates.end()) cached = estimates.emplace(key, estimate_training_run(job, hw, search.calibration)).first;
    const TrainingEstimate& estimate = cached->second;
    if (!estimate.feasible) return out;
    for (Pricing pricing : search.pricing) {
      if (pricing == Pricing::spot && !search.interruptible) continue;
      auto price = offering.usd_per_hour(pricing);
      if (!price) continue;
      TrainingCandidate c;
      c.offering = &offering;
      c.instances = std::max(1, devices / offering.accelerator_count);
      c.devices = devices;
      c.pricing = pricing;
      c.estimate = estimate;
      c.usd_per_hour = *price * c.instances;
      price_candidate(c, spot);
      out.push_back(c);
    }
    return out;
  }
};

bool meets(const TrainingCandidate& c, const TrainingSearch& search) {
  return !search.deadline_s || c.expected_time_s <= *search.deadline_s;
}

}  // namespace

TrainingPlan plan_training(const Catalog& catalog, const TrainingJob& job, const TrainingSearch& search,
                           const SpotSettings& spot) {
  TrainingPlan plan;
  CountSearch counts_search{job, search, spot, {}};
  std::vector<TrainingCandidate> all;
  double fastest = 1e300;
  std::string fastest_where;
  auto consider = [&](const TrainingCandidate& c) {
    if (c.expected_time_s < fastest) {
      fastest = c.expected_time_s;
      fastest_where = fmt::format("{} x {} on {} node(s) ({})", c.devices, c.offering->accelerator, c.instances, pricing_name(c.pricing));
    }
    if (meets(c, search)) all.push_back(c);
  };
  for (const auto& accelerator : catalog.accelerators()) {
    if (!search.accelerators.empty() &&
        std::find(search.accelerators.begin(), search.accelerators.end(), &accelerator) == search.accelerators.end())
      continue;
    Constraints where;
    where.clouds = search.clouds;
    where.regions = search.regions;
    for (const Offering* offering : allowed_offerings(catalog, where, accelerator, 1)) {
      const int per_node = offering->accelerator_count;
      // Whole instances: the devices asked for, or whole nodes up to the device limit.
      std::vector<int> devices_list;
      if (!search.device_counts.empty()) {
        for (int devices : search.device_counts)
          if (devices == per_node || (devices > per_node && devices % per_node == 0)) devices_list.push_back(devices);
      } else {
        for (int nodes : node_count_grid(std::max(1, search.max_devices / per_node))) devices_list.push_back(nodes * per_node);
      }
      // Per pricing, the node counts already tried that miss and meet the deadline.
      std::map<Pricing, std::pair<int, int>> bracket;  // last missing, first meeting (nodes)
      for (int devices : devices_list) {
        int instances = std::max(1, devices / per_node);
        ++plan.candidates;
        // Several nodes need a fabric between them (a TPU slice is one node on its ICI).
        if (instances > 1 && offering->fabric.empty() && !search.allow_unfabric_clusters) {
          ++plan.skipped_no_fabric;
          continue;
        }
        for (const TrainingCandidate& c : counts_search.at(*offering, accelerator, devices)) {
          consider(c);
          auto& [missing, meeting] = bracket.try_emplace(c.pricing, 0, 0).first->second;
          if (meeting == 0) (meets(c, search) ? meeting : missing) = instances;
        }
      }
      // The cheapest run that meets a deadline is usually the fewest nodes that do: try every
      // count between the grid's last miss and first hit (bisection: time falls with nodes).
      if (search.deadline_s && search.device_counts.empty()) {
        for (auto& [pricing, nodes] : bracket) {
          auto [low, high] = nodes;
          if (low <= 0 || high <= low + 1) continue;
          while (high - low > 1) {
            int mid = (low + high) / 2;
            ++plan.candidates;
            bool met = false;
            for (const TrainingCandidate& c : counts_search.at(*offering, accelerator, mid * per_node))
              if (c.pricing == pricing) {
                consider(c);
                met = meets(c, search);
              }
            (met ? high : low) = mid;
          }
        }
      }
    }
  }
  if (all.empty()) {
    const std::string left_out =
        plan.skipped_no_fabric > 0
            ? fmt::format("; {} multi-node candidates were left out: their instances share no EFA/InfiniBand-class fabric "
                          "(--allow-tcp-clusters to consider them)", plan.skipped_no_fabric)
            : "";
    if (fastest < 1e299 && search.deadline_s)
      plan.binding = fmt::format("deadline {:.1f} days cannot be met: the fastest candidate takes {:.1f} days ({}){}",
                                 *search.deadline_s / 86400, fastest / 86400, fastest_where, left_out);
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
  // At equal cost (within the tolerance), fewer nodes: less to fail, less to start.
  for (const auto& c : all) {
    if (c.usd > all.front().usd * (1 + kEqualCostTolerance)) break;
    if (c.instances < plan.best->instances) plan.best = c;
  }
  if (plan.best->offering != all.front().offering || plan.best->devices != all.front().devices)
    plan.choice = fmt::format("{} x {} on {} node(s) costs {:+.2f}% against the cheapest, {} x {} on {} nodes: within {:.0f}%, "
                              "fewer nodes win (less to fail)",
                              plan.best->devices, plan.best->offering->accelerator, plan.best->instances,
                              (plan.best->usd / all.front().usd - 1) * 100, all.front().devices, all.front().offering->accelerator,
                              all.front().instances, kEqualCostTolerance * 100);
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
