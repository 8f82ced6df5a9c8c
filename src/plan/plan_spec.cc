#include "plan/plan_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "catalog/precision_support.h"
#include "core/formatting.h"
#include "core/parallel.h"
#include "plan/disaggregated_plan.h"
#include "plan/spec_names.h"
#include "plan/spot.h"

namespace gw {

namespace {

// The spot price a plan rests on is an AWS Local Zone's, not the region's (plan --emit-k8s pins
// those nodes).
std::string local_zone_plan_note(const Offering& o) {
  return local_zone_spot_note(o) +
         "; --emit-k8s pins the nodes to it (topology.k8s.aws/zone-id), where on-demand may cost more than the region's price";
}

double usd_per_1k(const PlanOption& o, double average_rps) {
  return average_rps > 0 ? o.usd_per_hour / (average_rps * 3600.0) * 1000.0 : NAN;
}

// A spec's training job as the search takes it: every offering x device count x pricing,
// against the deadline.
Result<TrainingPlan> plan_training_job(const Catalog& catalog, const Spec& spec, const TrainingSpec& t,
                                       const Calibration* calibration) {
  const ModelSpec& model = spec.models.at(t.model_key);
  TrainingJob job;
  job.arch = &model.arch;
  bool generic = model.arch.kind == ModelKind::generic;
  job.tokens = generic ? t.items : t.tokens;
  job.sequence_length = t.sequence_length;
  job.global_batch_tokens = generic ? 256 : t.global_batch_tokens;
  job.precision = t.precision;
  job.zero_stage = t.zero_stage;
  job.recompute = t.recompute;
  TrainingSearch search;
  search.allow_unfabric_clusters = t.allow_tcp_clusters;
  search.clouds = spec.constraints.clouds;
  search.regions = spec.constraints.regions;
  search.calibration = calibration;
  search.pricing = spec.constraints.pricing;
  search.interruptible = t.interruptible;
  if (t.interruptible && std::find(search.pricing.begin(), search.pricing.end(), Pricing::spot) == search.pricing.end())
    search.pricing.push_back(Pricing::spot);
  if (t.deadline_days) search.deadline_s = *t.deadline_days * 86400;
  search.device_counts = t.counts;
  if (t.accelerators.empty())
    for (const Accelerator* a : allowed_accelerators(catalog, spec.constraints)) search.accelerators.push_back(a);
  for (const auto& name : t.accelerators) {
    auto named = catalog.accelerator_named(name);
    if (!named.ok()) return Error{spec.path, t.line, "training." + t.name + ".accelerators", named.error().message};
    const Accelerator* a = named.value();
    if (auto why = unsupported_precision(*a, t.precision, PrecisionEngine::training))
      return Error{spec.path, t.precision_line, "training." + t.name + ".precision", fmt::format("{} ({})", *why, a->name)};
    search.accelerators.push_back(a);
  }
  SpotSettings spot;
  spot.storage_gbps = t.storage_gbps;
  if (t.checkpoint_interval_min) spot.interval_s = *t.checkpoint_interval_min * 60;
  if (t.preemptions_per_hour) {
    spot.preemptions_per_hour = *t.preemptions_per_hour;
    spot.rate_assumed = false;
  }
  std::optional<SpotAvailability> trace;
  if (!t.spot_trace.empty()) {
    auto loaded = load_spot_trace(t.spot_trace);
    if (!loaded.ok()) return loaded.error();
    trace = std::move(loaded.value());
    spot.trace = &*trace;
  }
  return plan_training(catalog, job, search, spot);
}

// Cost per unit across the spec, the largest monthly cost first (one-off runs by their cost).
void add_unit_costs(PlanResult& result) {
  for (const auto& p : result.services)
    if (p.best)
      result.unit_costs.push_back({p.service, "service", p.best->usd_per_month(), usd_per_1k(*p.best, p.average_rps), "1k inferences"});
  for (size_t i = 0; i < result.training.size(); ++i)
    if (result.training[i].best) {
      const auto& t = result.spec.training[i];
      const double run_usd = result.training[i].best->usd;
      result.unit_costs.push_back({t.name, "training", t.runs_per_month > 0 ? run_usd * t.runs_per_month : run_usd, run_usd, "run"});
    }
  for (size_t i = 0; i < result.batch_jobs.size(); ++i)
    if (const auto& b = result.batch_jobs[i].best) {
      const auto& job = result.spec.batch_jobs[i];
      result.unit_costs.push_back({job.name, "batch job", job.runs_per_month > 0 ? b->usd_per_run * job.runs_per_month : b->usd_per_run,
                                   b->usd_per_run / job.items * 1000, "1k items"});
    }
  std::sort(result.unit_costs.begin(), result.unit_costs.end(),
            [](const UnitCost& a, const UnitCost& b) { return a.usd_per_month > b.usd_per_month; });
  for (const auto& u : result.unit_costs) result.unit_costs_usd_per_month += u.usd_per_month;
}

}  // namespace

bool PlanResult::all_feasible() const {
  return std::all_of(services.begin(), services.end(), [](const ServicePlan& p) { return p.feasible; }) &&
         std::all_of(training.begin(), training.end(), [](const TrainingPlan& t) { return t.feasible; }) &&
         std::all_of(batch_jobs.begin(), batch_jobs.end(), [](const BatchJobPlan& b) { return b.feasible; });
}

bool PlanResult::short_of_quota() const {
  return std::any_of(quotas.begin(), quotas.end(), [](const QuotaNeed& q) { return q.short_of_quota(); });
}

VerifyOptions verify_options(const PlanSpecOptions& options) {
  VerifyOptions verify;
  verify.build.calibration = options.calibration;
  verify.build.usable_fraction = options.usable_fraction;
  verify.build.overhead_gib = options.overhead_gib;
  verify.requests = options.sim_requests;
  verify.seed = options.seed;
  verify.prefill_chunk_tokens = options.prefill_chunk_tokens;
  return verify;
}

// A typical request longer than the model's context cannot be served at any price: say so,
// rather than plan it to a missed SLO. (A trace's longest few may run over: engines reject or
// truncate those, and the rest is planned.)
static std::optional<Error> check_contexts(const Spec& spec) {
  for (const auto& service : spec.services) {
    const ModelArch& arch = spec.models.at(service.model_key).arch;
    if (arch.kind != ModelKind::decoder || arch.max_position_embeddings <= 0 || service.input_tokens.sample.empty()) continue;
    const double input = service.input_tokens.quantile(0.5);
    const double output = service.output_tokens.sample.empty() ? 0 : service.output_tokens.quantile(0.5);
    if (input + output > arch.max_position_embeddings)
      return Error{spec.path, service.line, "services." + service.name + ".tokens",
                   fmt::format("the median prompt ({:.0f}) and completion ({:.0f}) tokens are over the model's {}-token context "
                               "(max_position_embeddings of {})",
                               input, output, arch.max_position_embeddings, service.model_key)};
  }
  return std::nullopt;
}

namespace {

void add_uses(std::vector<QuotaUse>& uses, const PlanOption& option, const std::string& by) {
  for (const NodeGroup& g : option.nodes) uses.push_back({g.offering, g.pricing, g.instances, by});
}

const QuotaNeed* first_shortfall(const std::vector<QuotaNeed>& needs) {
  for (const auto& n : needs)
    if (n.short_of_quota()) return &n;
  return nullptr;
}

// Where the account's quotas rule out a service's cheapest option, the cheapest verified one
// within them (services in order, each against what the ones before it took), and what the
// missing quota would save.
void choose_within_quotas(const Catalog& catalog, PlanResult& result, const Spec& spec, const VerifyOptions* verify) {
  const QuotaLimits& limits = spec.constraints.quotas;
  if (limits.empty()) return;
  std::vector<QuotaUse> taken;
  for (size_t i = 0; i < result.services.size(); ++i) {
    ServicePlan& p = result.services[i];
    if (!p.best) continue;
    std::vector<QuotaUse> with = taken;
    add_uses(with, *p.best, p.service);
    const std::vector<QuotaNeed> needs = quota_needs(with, limits);
    if (const QuotaNeed* shortfall = first_shortfall(needs)) {
      // Within quota, cheapest first; with simulation, each replayed in full as the plan's best
      // is (the frontier's rows had shorter runs) until one meets the SLO.
      std::vector<const PlanOption*> within;
      for (const auto* options : {&p.pareto, &p.ranked})
        for (const PlanOption& o : *options) {
          if (verify && (!o.simulated || !o.simulated->meets)) continue;
          std::vector<QuotaUse> trial = taken;
          add_uses(trial, o, p.service);
          if (!first_shortfall(quota_needs(trial, limits))) within.push_back(&o);
        }
      std::stable_sort(within.begin(), within.end(),
                       [](const PlanOption* a, const PlanOption* b) { return a->usd_per_month() < b->usd_per_month(); });
      std::optional<PlanOption> chosen;
      for (const PlanOption* o : within) {
        PlanOption full = *o;
        if (verify && full.simulated->requests < p.best->simulated.value_or(SimulatedCheck{}).requests) {
          const ServiceSpec& service = spec.services[i];
          full.simulated.reset();
          if (!verify_option(catalog, spec.models.at(service.model_key), service, full, *verify)) continue;
        }
        chosen = full;
        break;
      }
      const PlanOption* alternative = chosen ? &*chosen : nullptr;
      if (alternative) {
        const PlanOption& cheapest = *p.best;
        p.quota_choice = fmt::format(
            "{} x {} on {} {} ({}/month) instead of the cheapest, {} x {} on {} {} ({}/month), which needs {:.0f} {} of {} in {} {} "
            "(the account has {:.0f}): {:.0f} more would save {}/month (lead time: {})",
            alternative->replicas, alternative->config.accelerator->name, alternative->offering->cloud,
            alternative->offering->instance_type, format_usd(alternative->usd_per_month()), cheapest.replicas,
            cheapest.config.accelerator->name, cheapest.offering->cloud, cheapest.offering->instance_type,
            format_usd(cheapest.usd_per_month()), shortfall->needed, shortfall->unit, shortfall->family, shortfall->cloud,
            shortfall->region, *shortfall->have, shortfall->needed - *shortfall->have,
            format_usd(alternative->usd_per_month() - cheapest.usd_per_month()), shortfall->lead_time);
        p.best = *alternative;
      }
    }
    add_uses(taken, *p.best, p.service);
  }
}

}  // namespace

Result<PlanResult> plan_spec(const Catalog& catalog, const Spec& spec, const PlanSpecOptions& options) {
  if (auto missing = require_slos(spec, "plan")) return *missing;
  if (auto too_long = check_contexts(spec)) return *too_long;
  if (auto bad_name = check_spec_names(spec, catalog, spec.path)) return *bad_name;
  PlanResult result;
  result.spec = spec;

  PlannerOptions planner;
  planner.calibration = options.calibration;
  planner.usable_fraction = options.usable_fraction;
  planner.overhead_gib = options.overhead_gib;
  planner.prefill_chunk_tokens = options.prefill_chunk_tokens;
  planner.consider_disaggregated = options.disaggregated;
  VerifyOptions verify = verify_options(options);
  // One pool: across services when there are several, else across one service's frontier.
  verify.jobs = spec.services.size() > 1 ? 1 : options.jobs;
  // Services are independent: planned (and their candidates simulated) in parallel, each in its
  // own slot, so the answer is the serial one.
  result.services.resize(spec.services.size());
  parallel_for(spec.services.size(), options.jobs, [&](size_t i) {
    const ServiceSpec& service = spec.services[i];
    result.services[i] = plan_service(catalog, spec, service, planner);
    if (!options.disaggregated && spec.models.at(service.model_key).arch.kind == ModelKind::decoder)
      result.services[i].assumptions.push_back("disaggregated prefill and decode pools not considered: the Kubernetes manifests "
                                               "describe one pool of replicas that scales on its queue");
    if (options.simulate) verify_plan(catalog, spec, service, result.services[i], verify);
    judge_disaggregation(catalog, spec, service, result.services[i], planner, options.simulate ? &verify : nullptr);
  });
  for (const ServicePlan& p : result.services)
    result.efficiency_sources.push_back(p.best ? efficiency_for(*p.best->config.accelerator, options.calibration).source : "");
  for (const auto& t : spec.training) {
    auto plan = plan_training_job(catalog, spec, t, options.calibration);
    if (!plan.ok()) return plan.error();
    result.training.push_back(std::move(plan.value()));
  }

  for (const auto& job : spec.batch_jobs)
    result.batch_jobs.push_back(plan_batch_job(catalog, spec, job, planner, options.simulate ? &verify : nullptr));

  choose_within_quotas(catalog, result, spec, options.simulate ? &verify : nullptr);
  // A spot price from an AWS Local Zone is that zone's: say so where a plan rests on one.
  for (ServicePlan& p : result.services)
    if (p.best)
      for (const NodeGroup& g : p.best->nodes)
        if (g.offering && g.pricing == Pricing::spot && !local_zone(*g.offering).empty())
          p.assumptions.push_back(local_zone_plan_note(*g.offering));
  for (BatchJobPlan& b : result.batch_jobs)
    if (b.best && b.best->pricing == Pricing::spot && !local_zone(*b.best->offering).empty())
      b.assumptions.push_back(local_zone_plan_note(*b.best->offering));
  for (const auto& p : result.services)
    if (p.best) result.total_usd_per_month += p.best->usd_per_month();
  for (size_t i = 0; i < result.training.size(); ++i) {
    const auto& tp = result.training[i];
    if (!tp.best) continue;
    result.total_usd_per_month += tp.best->usd * spec.training[i].runs_per_month;
    if (spec.training[i].runs_per_month <= 0) result.one_off_training_usd += tp.best->usd;
  }
  for (size_t i = 0; i < result.batch_jobs.size(); ++i)
    if (const auto& b = result.batch_jobs[i].best) {
      result.total_usd_per_month += result.batch_jobs[i].usd_per_month;
      if (spec.batch_jobs[i].runs_per_month <= 0) result.one_off_batch_usd += b->usd_per_run;
    }
  const auto& budget = spec.constraints.budget_usd_per_month;
  result.over_budget = budget && result.total_usd_per_month > *budget;

  std::vector<QuotaUse> uses;
  for (const auto& p : result.services)
    if (p.best) add_uses(uses, *p.best, p.service);
  for (size_t i = 0; i < result.training.size(); ++i)
    if (result.training[i].best)
      uses.push_back({result.training[i].best->offering, result.training[i].best->pricing, result.training[i].best->instances,
                      spec.training[i].name});
  for (size_t i = 0; i < result.batch_jobs.size(); ++i)
    if (const auto& b = result.batch_jobs[i].best) uses.push_back({b->offering, b->pricing, b->nodes, spec.batch_jobs[i].name});
  result.quotas = quota_needs(uses, spec.constraints.quotas);
  add_unit_costs(result);
  return result;
}

}  // namespace gw
