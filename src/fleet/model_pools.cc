#include "fleet/model_pools.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <memory>

#include "core/money.h"
#include "core/milp.h"
#include "model/memory.h"
#include "plan/cold_start.h"
#include "plan/inference.h"

namespace gw {

namespace {

bool same_offer(const PoolCandidate& a, const PoolCandidate& b) {
  return a.accelerator_name == b.accelerator_name && a.instance_type == b.instance_type && a.pricing == b.pricing;
}

double at_hour(const PoolCandidate& c, int hour) { return c.hourly_gpus.empty() ? c.peak_gpus : c.hourly_gpus[static_cast<size_t>(hour)]; }

int gpus_for(double peak_gpus, double max_utilization) {
  return std::max(1, static_cast<int>(std::ceil(peak_gpus / max_utilization - 1e-9)));
}

// GPUs rounded up to whole nodes: a cloud bills a node of 2 GPUs whole, not the 1 a pool uses.
int whole_nodes(int gpus, int gpus_per_node) { return (gpus + gpus_per_node - 1) / gpus_per_node * gpus_per_node; }

// The cheapest type for a set of models sharing one pool, or nullopt when none hosts them all.
std::optional<ModelPool> best_pool(const std::vector<ModelDemand>& models, const std::vector<int>& members, double max_utilization) {
  std::optional<ModelPool> best;
  for (const auto& first : models[static_cast<size_t>(members.front())].candidates) {
    double vram = 0;
    std::vector<double> load(24, 0);
    bool all = true;
    for (int m : members) {
      const auto& c = models[static_cast<size_t>(m)].candidates;
      auto it = std::find_if(c.begin(), c.end(), [&](const PoolCandidate& x) { return same_offer(x, first); });
      if (it == c.end()) {
        all = false;
        break;
      }
      for (int h = 0; h < 24; ++h) load[static_cast<size_t>(h)] += at_hour(*it, h);
      vram += it->vram_gib;
    }
    double peak = *std::max_element(load.begin(), load.end());
    if (!all || vram > first.usable_vram_gib + 1e-9) continue;
    int floor = 1;
    for (int m : members) floor = std::max(floor, models[static_cast<size_t>(m)].min_replicas);
    ModelPool pool;
    pool.accelerator = first.accelerator_name;
    pool.offer = first.offer();
    pool.models = members;
    pool.gpus_per_node = std::max(1, first.gpus_per_node);
    pool.gpus = whole_nodes(std::max(floor, gpus_for(peak, max_utilization)), pool.gpus_per_node);
    pool.usd_per_month = pool.gpus * first.usd_per_gpu_hour * kHoursPerMonth;
    pool.vram_gib = vram;
    pool.peak_gpus = peak;
    if (!best || pool.usd_per_month < best->usd_per_month - 1e-9) best = pool;
  }
  return best;
}

}  // namespace

std::string PoolCandidate::offer() const {
  return fmt::format("{} on {} ({})", accelerator_name, instance_type, pricing_name(pricing));
}

const PoolCandidate* candidate_in(const ModelDemand& model, const ModelPool& pool) {
  for (const PoolCandidate& c : model.candidates)
    if (c.offer() == pool.offer) return &c;
  return nullptr;
}

double pool_peak_gpus(const std::vector<ModelDemand>& models, const ModelPool& pool) {
  std::vector<double> load(24, 0);
  for (int m : pool.models)
    if (const PoolCandidate* c = candidate_in(models[static_cast<size_t>(m)], pool))
      for (int h = 0; h < 24; ++h) load[static_cast<size_t>(h)] += at_hour(*c, h);
  return *std::max_element(load.begin(), load.end());
}

std::vector<ModelDemand> shares_as_simulated(const std::vector<ModelDemand>& models, const PoolAssignment& sized,
                                             const PoolAssignment& checked) {
  std::vector<ModelDemand> scaled = models;
  bool grown = false;
  for (size_t p = 0; p < sized.pools.size() && p < checked.pools.size(); ++p) {
    const ModelPool &before = sized.pools[p], &after = checked.pools[p];
    if (after.gpus <= before.gpus || before.gpus <= 0) continue;
    grown = true;
    const double factor = static_cast<double>(after.gpus) / before.gpus;
    for (int m : before.models)
      for (PoolCandidate& c : scaled[static_cast<size_t>(m)].candidates)
        if (c.offer() == before.offer) {
          c.peak_gpus *= factor;
          c.average_gpus *= factor;
          for (double& g : c.hourly_gpus) g *= factor;
        }
  }
  if (!grown) scaled.clear();
  return scaled;
}

PoolAssignment one_pool_per_model(const std::vector<ModelDemand>& models, double max_utilization) {
  PoolAssignment a;
  a.method = "one pool per model";
  for (size_t m = 0; m < models.size(); ++m) {
    auto pool = best_pool(models, {static_cast<int>(m)}, max_utilization);
    if (!pool) continue;
    a.usd_per_month += pool->usd_per_month;
    a.pools.push_back(*pool);
  }
  return a;
}

PoolAssignment assign_pools_brute_force(const std::vector<ModelDemand>& models, double max_utilization) {
  PoolAssignment best;
  best.usd_per_month = 1e300;
  best.method = "brute force";
  const size_t n = models.size();
  if (n == 0) return best;
  // Set partitions as restricted growth strings: block[i] <= 1 + max(block[0..i-1]).
  std::vector<int> block(n, 0);
  while (true) {
    int blocks = *std::max_element(block.begin(), block.end()) + 1;
    PoolAssignment candidate;
    candidate.method = best.method;
    bool feasible = true;
    for (int b = 0; b < blocks && feasible; ++b) {
      std::vector<int> members;
      for (size_t i = 0; i < n; ++i)
        if (block[i] == b) members.push_back(static_cast<int>(i));
      auto pool = best_pool(models, members, max_utilization);
      if (!pool) feasible = false;
      else candidate.usd_per_month += pool->usd_per_month, candidate.pools.push_back(*pool);
    }
    if (feasible && candidate.usd_per_month < best.usd_per_month - 1e-9) best = candidate;
    // Next restricted growth string.
    size_t i = n;
    while (i-- > 1) {
      int limit = *std::max_element(block.begin(), block.begin() + static_cast<long>(i)) + 1;
      if (block[i] < limit) {
        ++block[i];
        std::fill(block.begin() + static_cast<long>(i) + 1, block.end(), 0);
        break;
      }
    }
    if (i == 0) break;
  }
  return best;
}

Result<PoolAssignment> assign_pools_exact(const std::vector<ModelDemand>& models, double max_utilization) {
  const int n = static_cast<int>(models.size());
  if (n == 0) return Error{"", 0, "services", "no models to place"};
  for (const auto& m : models)
    if (m.candidates.empty())
      return Error{"", 0, "services." + m.service, "fits on no allowed accelerator at its SLO (on one GPU), so it cannot join a pool"};
  // A pool's type is an offer: the accelerator on one instance type at one pricing.
  std::vector<std::string> types;
  std::map<std::string, const PoolCandidate*> type_info;
  for (const auto& m : models)
    for (const auto& c : m.candidates)
      if (!type_info.count(c.offer())) types.push_back(c.offer()), type_info[c.offer()] = &c;
  const int t = static_cast<int>(types.size());

  Milp milp;
  // Columns: u[s][p][a] (model s in pool p of type a; p <= s breaks the pools' symmetry), then
  // n[p][a], the pool's nodes of the type's instance (node_gpus each, billed whole).
  std::map<std::tuple<int, int, int>, int> u;
  std::vector<std::vector<int>> gpus(static_cast<size_t>(n), std::vector<int>(static_cast<size_t>(t), 0));
  auto node_gpus = [&](int a) { return std::max(1, type_info[types[static_cast<size_t>(a)]]->gpus_per_node); };
  auto candidate = [&](int s, int a) -> const PoolCandidate* {
    for (const auto& c : models[static_cast<size_t>(s)].candidates)
      if (c.offer() == types[static_cast<size_t>(a)]) return &c;
    return nullptr;
  };
  for (int s = 0; s < n; ++s)
    for (int p = 0; p <= s; ++p)
      for (int a = 0; a < t; ++a)
        if (candidate(s, a)) u[{s, p, a}] = milp.add_binary();
  for (int p = 0; p < n; ++p)
    for (int a = 0; a < t; ++a)
      gpus[static_cast<size_t>(p)][static_cast<size_t>(a)] =
          milp.add_integer(type_info[types[static_cast<size_t>(a)]]->usd_per_gpu_hour * node_gpus(a) * kHoursPerMonth);
  for (int s = 0; s < n; ++s) {  // every model in exactly one pool
    Milp::Terms terms;
    for (int p = 0; p <= s; ++p)
      for (int a = 0; a < t; ++a)
        if (u.count({s, p, a})) terms.emplace_back(u[{s, p, a}], 1.0);
    milp.add_exactly(terms, 1);
  }
  for (int p = 0; p < n; ++p)
    for (int a = 0; a < t; ++a) {
      Milp::Terms memory;
      bool shaped = false;
      for (int s = p; s < n; ++s)
        if (u.count({s, p, a})) {
          memory.emplace_back(u[{s, p, a}], candidate(s, a)->vram_gib);
          shaped = shaped || !candidate(s, a)->hourly_gpus.empty();
        }
      if (memory.empty()) continue;
      const int pool_gpus = gpus[static_cast<size_t>(p)][static_cast<size_t>(a)];
      // The pool's GPUs carry its models' load at the limit in every hour of the day.
      for (int h = 0; h < (shaped ? 24 : 1); ++h) {
        Milp::Terms compute;
        for (int s = p; s < n; ++s)
          if (u.count({s, p, a})) compute.emplace_back(u[{s, p, a}], at_hour(*candidate(s, a), h));
        compute.emplace_back(pool_gpus, -max_utilization * node_gpus(a));
        milp.add_at_most(compute, 0);
      }
      milp.add_at_most(memory, type_info[types[static_cast<size_t>(a)]]->usable_vram_gib);  // a copy of each fits
      // A pool in use has at least one GPU (a model's share can round to zero otherwise), and as
      // many as each of its models' min_replicas (replicas on that many GPUs, as plan enforces).
      for (int s = p; s < n; ++s)
        if (u.count({s, p, a}))
          milp.add_at_most({{u[{s, p, a}], std::max(1.0, static_cast<double>(models[static_cast<size_t>(s)].min_replicas))},
                            {pool_gpus, -static_cast<double>(node_gpus(a))}},
                           0);
    }
  std::string why;
  if (!milp.solve(&why)) return Error{"", 0, "services", "the pool optimizer found no assignment (" + why + ")"};
  PoolAssignment result;
  result.method = "MILP (GLPK)";
  for (int p = 0; p < n; ++p)
    for (int a = 0; a < t; ++a) {
      std::vector<int> members;
      for (int s = p; s < n; ++s)
        if (u.count({s, p, a}) && milp.chosen(u[{s, p, a}])) members.push_back(s);
      if (members.empty()) continue;
      ModelPool pool;
      pool.accelerator = type_info[types[static_cast<size_t>(a)]]->accelerator_name;
      pool.offer = types[static_cast<size_t>(a)];
      pool.models = members;
      pool.gpus_per_node = node_gpus(a);
      pool.gpus = static_cast<int>(std::lround(milp.value(gpus[static_cast<size_t>(p)][static_cast<size_t>(a)]))) * pool.gpus_per_node;
      pool.usd_per_month = pool.gpus * type_info[pool.offer]->usd_per_gpu_hour * kHoursPerMonth;
      std::vector<double> load(24, 0);
      for (int s : members) {
        pool.vram_gib += candidate(s, a)->vram_gib;
        for (int h = 0; h < 24; ++h) load[static_cast<size_t>(h)] += at_hour(*candidate(s, a), h);
      }
      pool.peak_gpus = *std::max_element(load.begin(), load.end());
      result.usd_per_month += pool.usd_per_month;
      result.pools.push_back(pool);
    }
  return result;
}

std::pair<bool, std::string> scale_to_zero_advice(const ServiceSpec& service, double cold_start_s) {
  const double keep_alive_s = service.scaling.keep_alive_s;
  const auto& profile = service.traffic.profile;
  double pauses_per_week = 0, cold_share = 0;
  if (!profile.empty()) {
    // A pause: a run of hours with no traffic (a profile factor of zero), ending in a cold start.
    double weekly_factor = 0;
    const double repeat = 168.0 / static_cast<double>(profile.size());
    for (size_t h = 0; h < profile.size(); ++h) {
      weekly_factor += profile[h] * repeat;
      if (profile[h] <= 0 && profile[(h + 1) % profile.size()] > 0) pauses_per_week += repeat;
    }
    const double requests_per_week = service.traffic.average_rps * 3600 * 168;
    cold_share = requests_per_week > 0 && weekly_factor > 0 ? pauses_per_week / requests_per_week : 0;
  } else {
    // Poisson arrivals at the average rate: a gap longer than the keep-alive comes with
    // probability exp(-rate x keep-alive) after each request; the next request starts cold.
    const double rate = service.traffic.average_rps;
    cold_share = std::exp(-rate * keep_alive_s);
    pauses_per_week = rate * 3600 * 168 * cold_share;
  }
  double tightest = 1e9;
  for (const auto& v : {service.slo.latency_p99_s, service.slo.latency_p50_s, service.slo.ttft_p99_s, service.slo.e2e_p99_s})
    if (v) tightest = std::min(tightest, *v);
  if (pauses_per_week < 1)
    return {false, fmt::format("keep warm: at {:.3g} requests/s traffic never pauses for the {:.0f} s keep-alive, so scaling to zero "
                               "saves nothing", service.traffic.average_rps, keep_alive_s)};
  if (cold_start_s > tightest && cold_share > 0.01)
    return {false, fmt::format("keep warm: a {:.0f} s cold start would meet {:.1f}% of requests, over the 1% its {:.3g} s p99 SLO allows",
                               cold_start_s, cold_share * 100, tightest)};
  return {true, fmt::format("scale to zero: traffic pauses ~{:.0f} times a week; a {:.0f} s cold start meets {:.2f}% of requests{}",
                            pauses_per_week, cold_start_s, cold_share * 100,
                            cold_start_s <= tightest ? " (within its SLO)" : ", within the 1% its p99 SLO allows")};
}

Result<std::vector<ModelDemand>> model_demands(const Catalog& catalog, const Spec& spec, const Calibration* calibration) {
  std::vector<ModelDemand> out;
  PlannerOptions planner;
  planner.calibration = calibration;
  for (const auto& service : spec.services) {
    ModelDemand d;
    d.service = service.name;
    d.average_rps = service.traffic.average_rps;
    const Slo& slo = service.slo;
    double tightest = 1e9;
    for (const auto& v : {slo.latency_p99_s, slo.latency_p50_s, slo.ttft_p99_s, slo.e2e_p99_s})
      if (v) tightest = std::min(tightest, *v);
    d.latency_tolerant = tightest >= 1.0;
    d.min_replicas = service.min_replicas;
    const ModelSpec& model = spec.models.at(service.model_key);
    std::tie(d.scale_to_zero_fits, d.scale_to_zero_why) = scale_to_zero_advice(service, cold_start(model, service.scaling).start_s);
    for (const Accelerator* a : allowed_accelerators(catalog, spec.constraints)) {
      Spec one = spec;
      one.constraints.accelerators_include = {a->name};
      ServicePlan plan = plan_service(catalog, one, service, planner);
      // The option a pool runs it as; where that is spot (an interruptible service), its best
      // on demand too, the offer it could share with services that may not run on spot.
      std::vector<const PlanOption*> options = {pool_option(plan)};
      ServicePlan on_demand_plan;
      const auto& pricings = spec.constraints.pricing;
      if (options.front() && options.front()->pricing != Pricing::on_demand &&
          std::find(pricings.begin(), pricings.end(), Pricing::on_demand) != pricings.end()) {
        Spec on_demand = one;
        on_demand.constraints.pricing = {Pricing::on_demand};
        on_demand_plan = plan_service(catalog, on_demand, service, planner);
        options.push_back(pool_option(on_demand_plan));
      }
      for (const PlanOption* best : options) {
        if (!best || best->level.capacity_rps <= 0) continue;
        PoolCandidate c;
        c.accelerator = a;
        c.accelerator_name = a->name;
        c.usd_per_gpu_hour = best->usd_per_hour / best->replicas;
        c.instance_type = best->offering->instance_type;
        c.gpus_per_node = std::max(1, best->offering->accelerator_count);
        c.pricing = best->pricing;
        c.cpu_architecture = std::string(cpu_architecture(*best->offering));
        c.peak_gpus = service.traffic.peak_rps / best->level.capacity_rps;
        c.average_gpus = service.traffic.average_rps / best->level.capacity_rps;
        // A daily or weekly profile gives the day's shape: each hour at its busiest day's factor,
        // scaled so the busiest hour is the service's peak.
        const auto& profile = service.traffic.profile;
        if (!profile.empty()) {
          std::vector<double> factor(24, 0);
          for (size_t i = 0; i < profile.size(); ++i) factor[i % 24] = std::max(factor[i % 24], profile[i]);
          double top = *std::max_element(factor.begin(), factor.end());
          if (top > 0)
            for (double f : factor) c.hourly_gpus.push_back(c.peak_gpus * f / top);
        }
        InferenceMemoryOptions memory;
        memory.weight_precision = model.precision;
        memory.weight_format = model.weight_format;
        memory.batch = std::max<long long>(1, static_cast<long long>(std::ceil(best->level.batch)));
        memory.context = std::max<long long>(1, static_cast<long long>(service.input_tokens.mean() + service.output_tokens.mean()));
        c.vram_gib = estimate_inference(model.arch, memory).total_bytes_per_device / (1024.0 * 1024 * 1024);
        c.usable_vram_gib = a->reported_gib() * planner.usable_fraction;
        d.candidates.push_back(c);
      }
    }
    out.push_back(d);
  }
  return out;
}

const PlanOption* pool_option(const ServicePlan& plan, std::optional<Pricing> pricing) {
  auto better = [&](const PlanOption& o, const PlanOption* than) {
    if (o.config.tensor_parallel != 1 || o.level.capacity_rps <= 0 || o.replicas <= 0 || !o.offering) return false;
    if (pricing && o.pricing != *pricing) return false;
    if (!than) return true;
    const double mine = o.usd_per_hour / o.replicas / o.level.capacity_rps;
    const double theirs = than->usd_per_hour / than->replicas / than->level.capacity_rps;
    if (mine < theirs * 0.999) return true;
    return mine <= theirs * 1.001 && o.offering->accelerator_count < than->offering->accelerator_count;
  };
  const PlanOption* best = nullptr;
  for (const auto& o : plan.ranked)
    if (better(o, best)) best = &o;
  if (plan.best && better(*plan.best, best)) best = &*plan.best;
  return best;
}

}  // namespace gw
