#include "fleet/bucket_mix.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numeric>

#include "core/money.h"
#include "core/milp.h"
#include "plan/inference.h"

namespace gw {

std::string type_key(const BucketOption& o) {
  return o.pipeline_parallel > 1 ? fmt::format("{} tp{} pp{}", o.accelerator, o.tensor_parallel, o.pipeline_parallel)
                                 : fmt::format("{} tp{}", o.accelerator, o.tensor_parallel);
}

namespace {

// A replica type's price: the cheapest offering any bucket's plan found for it.
std::map<std::string, double> type_prices(const std::vector<RequestBucket>& buckets) {
  std::map<std::string, double> prices;
  for (const auto& b : buckets)
    for (const auto& o : b.options) {
      auto [it, added] = prices.emplace(type_key(o), o.usd_per_replica_hour);
      if (!added) it->second = std::min(it->second, o.usd_per_replica_hour);
    }
  return prices;
}

// Replicas and cost of a choice of option per bucket, at each type's price (type_prices).
BucketAssignment price(const std::vector<RequestBucket>& buckets, const std::map<std::string, double>& prices,
                       const std::vector<int>& choice, double max_utilization) {
  std::map<std::string, std::pair<double, double>> load;  // type: (replica load, price)
  for (size_t b = 0; b < buckets.size(); ++b) {
    const BucketOption& o = buckets[b].options[static_cast<size_t>(choice[b])];
    auto& entry = load[type_key(o)];
    entry.first += buckets[b].peak_rps / o.capacity_rps;
    entry.second = prices.at(type_key(o));
  }
  BucketAssignment a;
  a.option_of_bucket = choice;
  for (const auto& [type, entry] : load) {
    int replicas = std::max(1, static_cast<int>(std::ceil(entry.first / max_utilization - 1e-9)));
    a.replicas.emplace_back(type, replicas);
    a.usd_per_month += replicas * entry.second * kHoursPerMonth;
  }
  return a;
}

}  // namespace

BucketAssignment assign_buckets_brute_force(const std::vector<RequestBucket>& buckets, double max_utilization) {
  BucketAssignment best;
  best.usd_per_month = 1e300;
  const auto prices = type_prices(buckets);
  std::vector<int> choice(buckets.size(), 0);
  while (true) {
    BucketAssignment a = price(buckets, prices, choice, max_utilization);
    if (a.usd_per_month < best.usd_per_month - 1e-9) best = a;
    size_t i = 0;
    while (i < buckets.size() && ++choice[i] == static_cast<int>(buckets[i].options.size())) choice[i++] = 0;
    if (i == buckets.size()) break;
  }
  best.method = "brute force";
  return best;
}

BucketAssignment best_single_type(const std::vector<RequestBucket>& buckets, double max_utilization) {
  BucketAssignment best;
  best.usd_per_month = 1e300;
  best.method = "best single type";
  if (buckets.empty()) return best;
  const auto prices = type_prices(buckets);
  for (size_t first = 0; first < buckets.front().options.size(); ++first) {
    std::string key = type_key(buckets.front().options[first]);
    std::vector<int> choice;
    for (const auto& b : buckets) {
      auto it = std::find_if(b.options.begin(), b.options.end(), [&](const BucketOption& o) { return type_key(o) == key; });
      if (it == b.options.end()) break;
      choice.push_back(static_cast<int>(it - b.options.begin()));
    }
    if (choice.size() != buckets.size()) continue;
    BucketAssignment a = price(buckets, prices, choice, max_utilization);
    if (a.usd_per_month < best.usd_per_month - 1e-9) best = a, best.method = "best single type";
  }
  return best;
}

Result<BucketAssignment> assign_buckets_exact(const std::vector<RequestBucket>& buckets, double max_utilization) {
  if (buckets.empty()) return Error{"", 0, "fleet.bucket_mix", "no buckets"};
  for (const auto& b : buckets)
    if (b.options.empty())
      return Error{"", 0, "fleet.bucket_mix", fmt::format("prompts of {:.0f}-{:.0f} tokens meet the SLO on no allowed accelerator",
                                                          b.input_from, b.input_to)};
  std::map<std::string, double> type_price = type_prices(buckets);
  std::vector<std::string> types;
  for (const auto& [t, usd] : type_price) types.push_back(t);
  Milp milp;
  std::vector<std::vector<int>> u(buckets.size());
  for (size_t b = 0; b < buckets.size(); ++b)
    for (size_t o = 0; o < buckets[b].options.size(); ++o) u[b].push_back(milp.add_binary());
  std::map<std::string, int> replicas;
  for (const auto& t : types) replicas[t] = milp.add_integer(type_price[t] * kHoursPerMonth);
  for (size_t b = 0; b < buckets.size(); ++b) {  // every bucket on exactly one option
    Milp::Terms one;
    for (int col : u[b]) one.emplace_back(col, 1.0);
    milp.add_exactly(one, 1);
  }
  for (const auto& t : types) {
    Milp::Terms load;
    for (size_t b = 0; b < buckets.size(); ++b)
      for (size_t o = 0; o < buckets[b].options.size(); ++o)
        if (type_key(buckets[b].options[o]) == t) {
          load.emplace_back(u[b][o], buckets[b].peak_rps / buckets[b].options[o].capacity_rps);
          milp.add_at_most({{u[b][o], 1.0}, {replicas[t], -1.0}}, 0);  // a type in use has a replica
        }
    load.emplace_back(replicas[t], -max_utilization);
    milp.add_at_most(load, 0);
  }
  std::string why;
  if (!milp.solve(&why)) return Error{"", 0, "fleet.bucket_mix", "the mix optimizer found no assignment (" + why + ")"};
  std::vector<int> choice(buckets.size(), 0);
  for (size_t b = 0; b < buckets.size(); ++b)
    for (size_t o = 0; o < u[b].size(); ++o)
      if (milp.chosen(u[b][o])) choice[b] = static_cast<int>(o);
  BucketAssignment a = price(buckets, type_price, choice, max_utilization);
  a.method = "MILP (GLPK)";
  return a;
}

Result<std::vector<RequestBucket>> request_buckets(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, int count,
                                                   const Calibration* calibration) {
  const ModelSpec& model = spec.models.at(service.model_key);
  if (model.arch.kind != ModelKind::decoder) return Error{spec.path, service.line, "fleet.bucket_mix.service", "buckets by prompt length apply to LLM services"};
  // Pairs of (input, output): the trace's own pairs when there is one.
  std::vector<std::pair<double, double>> pairs = trace_request_pairs(service);
  if (pairs.empty()) {
    double output = service.output_tokens.mean();
    for (double in : service.input_tokens.sample) pairs.emplace_back(in, output);
  }
  if (pairs.size() < static_cast<size_t>(count)) return Error{spec.path, service.line, "fleet.bucket_mix", "too few token samples for the buckets"};
  std::sort(pairs.begin(), pairs.end());
  std::vector<RequestBucket> out;
  PlannerOptions planner;
  planner.calibration = calibration;
  for (int b = 0; b < count; ++b) {
    size_t from = pairs.size() * static_cast<size_t>(b) / static_cast<size_t>(count);
    size_t to = pairs.size() * static_cast<size_t>(b + 1) / static_cast<size_t>(count);
    RequestBucket bucket;
    bucket.input_from = pairs[from].first;
    bucket.input_to = pairs[to - 1].first;
    bucket.share = static_cast<double>(to - from) / static_cast<double>(pairs.size());
    bucket.peak_rps = service.traffic.peak_rps * bucket.share;
    ServiceSpec part = service;
    part.deployment.reset();
    part.traffic.trace.reset();
    part.traffic.trace_path.clear();
    part.traffic.rates.reset();
    part.traffic.profile.clear();
    part.arrivals = ArrivalShape{};
    part.traffic.peak_rps = part.traffic.average_rps = bucket.peak_rps;
    part.input_tokens.sample.clear();
    part.output_tokens.sample.clear();
    for (size_t i = from; i < to; ++i) {
      part.input_tokens.sample.push_back(pairs[i].first);
      part.output_tokens.sample.push_back(pairs[i].second);
      bucket.mean_input += pairs[i].first;
      bucket.mean_output += pairs[i].second;
    }
    bucket.mean_input /= static_cast<double>(to - from);
    bucket.mean_output /= static_cast<double>(to - from);
    std::sort(part.output_tokens.sample.begin(), part.output_tokens.sample.end());
    for (const Accelerator* a : allowed_accelerators(catalog, spec.constraints)) {
      Spec one = spec;
      one.constraints.accelerators_include = {a->name};
      ServicePlan plan = plan_service(catalog, one, part, planner);
      if (!plan.feasible || !plan.best || plan.best->level.capacity_rps <= 0) continue;
      const PlanOption& best = *plan.best;
      bucket.options.push_back(
          {a->name, best.config.tensor_parallel, best.usd_per_hour / best.replicas, best.level.capacity_rps, best.config.pipeline_parallel});
    }
    out.push_back(bucket);
  }
  return out;
}

}  // namespace gw
