#include "plan/train_run.h"

#include "catalog/precision_support.h"
#include "catalog/region_names.h"

#include <fmt/format.h>

#include <algorithm>

namespace gw {

namespace {

std::optional<Error> check_options(const TrainOptions& o) {
  if (!(o.tokens >= 1)) return option_error("--tokens", "give the number of training tokens (at least 1)");
  if (o.deadline_days < 0) return option_error("--deadline-days", "a deadline must be in the future (a positive number of days)");
  if (o.preemptions_per_hour > 3600) return option_error("--preemption-rate", "more than one preemption per second is not a spot market");
  if (o.precision != Precision::bf16 && o.precision != Precision::fp16 && o.precision != Precision::fp32 && o.precision != Precision::fp8)
    return option_error("--precision", "training precision must be bf16, fp16, fp32 or fp8");
  return std::nullopt;
}

// One named instance type: the cheapest region that has it.
Result<TrainingPlan> plan_offering(const Catalog& catalog, const ModelArch& arch, const TrainOptions& o, const TrainingJob& job,
                                   const TrainingSearch& search, const SpotSettings& spot) {
  const Offering* chosen = nullptr;
  for (const auto& offering : catalog.offerings())
    if (offering.instance_type == o.offering && offering.usd_per_hour(o.pricing) &&
        (!chosen || *offering.usd_per_hour(o.pricing) < *chosen->usd_per_hour(o.pricing)))
      chosen = &offering;
  if (!chosen) return option_error("--offering", "no offering '" + o.offering + "' with a " + std::string(pricing_name(o.pricing)) + " price");
  const Accelerator* a = catalog.find_accelerator(chosen->accelerator);
  if (auto why = unsupported_precision(*a, o.precision, PrecisionEngine::training))
    return option_error("--precision", fmt::format("{} ({}): {}", o.offering, a->name, *why));
  int devices = o.count > 0 ? o.count : chosen->accelerator_count;
  TrainingCandidate c;
  c.offering = chosen;
  c.devices = devices;
  c.instances = std::max(1, (devices + chosen->accelerator_count - 1) / chosen->accelerator_count);
  c.pricing = o.pricing;
  c.usd_per_hour = *chosen->usd_per_hour(o.pricing) * c.instances;
  TrainingHardware hw = hardware_of(*chosen, *a, devices);
  hw.cross_zone = o.cross_zone;
  c.estimate = estimate_training_run(job, hw, search.calibration);
  TrainingPlan plan;
  if (!c.estimate.feasible) {
    plan.binding = fmt::format("{} does not fit on {} x {}: {}", arch.name, devices, a->name, c.estimate.reason);
    return plan;
  }
  price_candidate(c, spot);
  plan.feasible = !search.deadline_s || c.expected_time_s <= *search.deadline_s;
  if (!plan.feasible)
    plan.binding = fmt::format("deadline {:.1f} days cannot be met: this run takes {:.1f} days", o.deadline_days, c.expected_time_s / 86400);
  plan.best = c;
  plan.pareto = {c};
  return plan;
}

// Spot: Monte Carlo of completion time and cost for each policy, on the chosen hardware, or on
// the best offering that has a spot price when the chosen one has none.
std::optional<SpotComparison> compare_spot(const Catalog& catalog, const TrainOptions& o, const TrainingJob& job,
                                           const TrainingSearch& search, const SpotSettings& spot, const TrainingCandidate& best) {
  SpotComparison s;
  if (best.offering->usd_per_hour(Pricing::spot)) {
    s.base = best;
  } else if (o.offering.empty()) {
    TrainingSearch spot_search = search;
    spot_search.pricing = {Pricing::spot};
    TrainingPlan spot_plan = plan_training(catalog, job, spot_search, spot);
    if (!spot_plan.best) return std::nullopt;
    s.base = *spot_plan.best;
    s.base_note = fmt::format(" (no spot price for {}: the cheapest run with one)", best.offering->instance_type);
  } else {
    return std::nullopt;
  }
  auto spot_price = s.base.offering->usd_per_hour(Pricing::spot);
  auto on_demand_price = s.base.offering->usd_per_hour(Pricing::on_demand);
  s.on_spot = s.base;
  s.on_spot.pricing = Pricing::spot;
  price_candidate(s.on_spot, spot);
  SpotRunInputs in;
  in.work_s = s.base.estimate.time_s;
  in.checkpoint_s = s.on_spot.checkpoint_s;
  in.restart_s = s.on_spot.restart_s;
  in.interval_s = s.on_spot.checkpoint_interval_s;
  // A trace is one node's capacity: replayed as is for one node; for several, its rate x nodes.
  s.replay = spot.trace && s.base.instances == 1;
  s.node_preemptions_per_hour = node_preemptions_per_hour(spot);
  in.preemptions_per_hour = s.on_spot.preemptions_per_hour;
  in.trace = s.replay ? spot.trace : nullptr;
  in.spot_usd_per_hour = *spot_price * s.base.instances;
  in.on_demand_usd_per_hour = on_demand_price ? *on_demand_price * s.base.instances : 0;
  in.deadline_s = search.deadline_s;
  for (SpotPolicy policy : {SpotPolicy::on_demand_only, SpotPolicy::spot_only, SpotPolicy::deadline_aware}) {
    if (policy == SpotPolicy::deadline_aware && !in.deadline_s) continue;
    if (policy != SpotPolicy::spot_only && !on_demand_price) continue;
    // On-demand capacity is not preempted: it checkpoints at its own (hourly) interval.
    SpotRunInputs policy_in = in;
    if (policy == SpotPolicy::on_demand_only) {
      TrainingCandidate on_demand = s.base;
      on_demand.pricing = Pricing::on_demand;
      price_candidate(on_demand, spot);
      policy_in.interval_s = on_demand.checkpoint_interval_s;
    }
    s.outcomes.push_back(simulate_spot(policy_in, policy, o.runs, o.seed));
  }
  return s;
}

}  // namespace

std::optional<Error> apply_train_choices(const TrainChoiceText& text, TrainOptions& options) {
  auto precision = parse_precision(text.precision);
  if (!precision) return Error{"", 0, "--precision", "training precision must be bf16, fp16, fp32 or fp8"};
  options.precision = *precision;
  options.recompute.reset();
  if (!text.recompute.empty()) {
    options.recompute = parse_recompute(text.recompute);
    if (!options.recompute)
      return Error{"", 0, "--recompute", "'" + text.recompute + "' is not one of none, selective, full"};
  }
  auto pricing = parse_pricing(text.pricing);
  if (!pricing)
    return Error{"", 0, "--pricing", "'" + text.pricing + "' is not one of on-demand, spot, reserved-1y, reserved-3y"};
  options.pricing = *pricing;
  return std::nullopt;
}

Result<TrainResult> train_run(const Catalog& catalog, const ModelArch& arch, const TrainOptions& o) {
  if (auto bad = check_options(o)) return *bad;
  std::optional<SpotAvailability> trace;
  if (!o.spot_trace.empty()) {
    auto loaded = load_spot_trace(o.spot_trace);
    if (!loaded.ok()) return loaded.error();
    trace = loaded.value();
  }
  TrainingJob job;
  job.arch = &arch;
  job.tokens = o.tokens;
  job.sequence_length = o.sequence_length;
  job.global_batch_tokens = o.global_batch_tokens;
  job.precision = o.precision;
  if (o.zero >= 0) job.zero_stage = o.zero;
  job.recompute = o.recompute;
  SpotSettings spot;
  if (o.preemptions_per_hour >= 0) {
    spot.preemptions_per_hour = o.preemptions_per_hour;
    spot.rate_assumed = false;
  }
  spot.trace = trace ? &*trace : nullptr;
  spot.storage_gbps = o.storage_gbps;
  spot.provisioning_s = o.provisioning_s;
  if (o.interval_min > 0) spot.interval_s = o.interval_min * 60;

  for (const auto& cloud : o.clouds)
    if (auto why = cloud_name_problem(catalog, cloud)) return option_error("--cloud", *why);
  for (const auto& region : o.regions)
    if (auto why = region_prefix_problem(catalog, region, o.clouds)) return option_error("--region", *why);
  TrainingSearch search;
  search.clouds = o.clouds;
  search.regions = o.regions;
  search.calibration = o.calibration;
  search.interruptible = true;
  search.allow_unfabric_clusters = o.allow_tcp_clusters;
  search.cross_zone = o.cross_zone;
  search.pricing = {o.pricing};
  if (o.deadline_days > 0) search.deadline_s = o.deadline_days * 86400;
  if (!o.accelerator.empty()) {
    auto named = catalog.accelerator_named(o.accelerator);
    if (!named.ok()) return option_error("--accelerator", named.error().message);
    const Accelerator* a = named.value();
    search.accelerators = {a};
    if (auto why = unsupported_precision(*a, o.precision, PrecisionEngine::training))
      return option_error("--precision", fmt::format("{} ({})", *why, a->name));
  }
  if (o.count > 0) search.device_counts = {o.count};

  TrainResult result;
  result.arch = arch;
  result.options = o;
  result.options.calibration = nullptr;
  result.calibrated = o.calibration != nullptr;
  result.deadline_s = search.deadline_s;
  result.rate_assumed = spot.rate_assumed;
  result.trace_given = spot.trace != nullptr;
  result.start_s_per_doubling = spot.start_s_per_doubling;
  if (!o.offering.empty()) {
    auto plan = plan_offering(catalog, arch, o, job, search, spot);
    if (!plan.ok()) return plan.error();
    result.plan = std::move(plan.value());
  } else {
    result.plan = plan_training(catalog, job, search, spot);
  }
  if (!result.plan.best) return result;
  const TrainingCandidate& best = *result.plan.best;
  result.spot = compare_spot(catalog, o, job, search, spot, best);
  result.accelerator = catalog.find_accelerator(best.offering->accelerator);
  if (result.accelerator) result.gemm_efficiency = training_compute_efficiency(*result.accelerator, o.calibration, arch.hidden_size);
  return result;
}

}  // namespace gw
