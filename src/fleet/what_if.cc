#include "fleet/what_if.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "model/presets.h"
#include "plan/inference.h"
#include "plan/verify.h"

namespace gw {

namespace {

struct Sized {
  bool feasible = false;
  std::string binding;
  int gpus = 0;
  double latency_p99_s = 0;
};

// The fewest GPUs of the accelerator that serve the service at its SLO (plan + simulation).
Sized size_service(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, const Calibration* calibration, uint64_t seed) {
  PlannerOptions planner;
  planner.calibration = calibration;
  ServicePlan plan = plan_service(catalog, spec, service, planner);
  VerifyOptions verify;
  verify.build.calibration = calibration;
  verify.seed = seed;
  verify_plan(catalog, spec, service, plan, verify);
  Sized s;
  s.feasible = plan.feasible && plan.best;
  s.binding = plan.binding;
  if (s.feasible) {
    s.gpus = plan.best->gpus();
    s.latency_p99_s = plan.best->simulated ? plan.best->simulated->latency_p99_s : plan.best->level.latency_p99_s;
  }
  return s;
}

void scale_traffic(ServiceSpec& service, double factor) {
  service.traffic.average_rps *= factor;
  service.traffic.peak_rps *= factor;
  service.arrivals.time_scale *= factor;  // traces: gaps divide by it
  if (service.traffic.rates)
    for (auto& p : service.traffic.rates->points) p.rps *= factor;
  if (service.traffic.rates) service.traffic.rates->mean_rps *= factor, service.traffic.rates->peak_rps *= factor;
  service.arrivals.mmpp_high_rps *= factor;
  service.arrivals.mmpp_low_rps *= factor;
}

// A model key usable in the working spec: an existing key, or a preset added under its name.
std::string model_key(Spec& spec, const std::string& name) {
  if (spec.models.count(name)) return name;
  ModelSpec model;
  model.key = name;
  model.arch = load_preset(name).value();
  spec.models[name] = model;
  return name;
}

}  // namespace

Result<WhatIfReport> plan_what_if(const Catalog& catalog, const Spec& spec_in, const WhatIfSpec& w, const Calibration* calibration,
                                  uint64_t seed) {
  const Accelerator* accelerator = catalog.find_accelerator(w.accelerator);
  if (!accelerator) return Error{spec_in.path, w.line, "fleet.what_if.current.accelerator", "unknown accelerator '" + w.accelerator + "'"};
  Spec spec = spec_in;
  spec.constraints.accelerators_include = {accelerator->name};
  spec.constraints.accelerators_exclude.clear();
  auto found = std::find_if(spec.services.begin(), spec.services.end(), [&](const ServiceSpec& s) { return s.name == w.service; });
  if (found == spec.services.end()) return Error{spec_in.path, w.line, "fleet.what_if.service", "no service '" + w.service + "'"};
  ServiceSpec service = *found;
  service.deployment.reset();

  WhatIfReport report;
  report.service = w.service;
  report.accelerator = accelerator->name;
  report.current_gpus = w.gpus;
  report.current_usd_per_month = w.usd_per_month;
  report.usd_per_gpu_month = w.usd_per_month / w.gpus;
  double previous_usd = w.usd_per_month;

  // The cascade's small model, when a step adds one, is sized alongside.
  std::optional<ServiceSpec> small;
  auto add_step = [&](const std::string& name, const std::string& change, double weeks) {
    WhatIfStepResult step;
    step.name = name;
    step.change = change;
    step.weeks = weeks;
    Sized big = size_service(catalog, spec, service, calibration, seed);
    step.feasible = big.feasible;
    step.binding = big.binding;
    step.gpus = big.gpus;
    step.latency_p99_s = big.latency_p99_s;
    if (small && step.feasible) {
      Sized s = size_service(catalog, spec, *small, calibration, seed);
      step.feasible = s.feasible;
      if (!s.feasible) step.binding = "the cascade's small model: " + s.binding;
      step.gpus += s.gpus;
    }
    if (step.feasible) {
      step.usd_per_month = step.gpus * report.usd_per_gpu_month;
      step.saving_usd_per_month = previous_usd - step.usd_per_month;
      double weekly = step.saving_usd_per_month * 12 / 52;
      if (weekly > 0) step.payback_weeks = weeks * w.engineering_usd_per_week / weekly;
      previous_usd = step.usd_per_month;
    }
    report.steps.push_back(step);
  };

  add_step("right-size", fmt::format("the fewest {} that meet the SLO as the service runs today", accelerator->name), 0);
  for (const auto& st : w.steps) {
    std::string change;
    if (!st.batching.empty()) {
      service.batching = st.batching == "none" ? Batching::none : st.batching == "dynamic" ? Batching::dynamic : Batching::continuous;
      bool llm = spec.models.at(service.model_key).arch.kind == ModelKind::decoder;
      if (llm && service.batching == Batching::dynamic) service.batching = Batching::continuous;
      if (!llm && service.batching == Batching::continuous) service.batching = Batching::dynamic;
      change = fmt::format("{} batching", batching_name(service.batching));
    } else if (st.precision) {
      spec.models[service.model_key].precision = *st.precision;
      if (small) spec.models[small->model_key].precision = *st.precision;
      change = fmt::format("weights in {} (step times from the step-time model)", precision_name(*st.precision));
    } else if (st.cache_hit_rate) {
      scale_traffic(service, 1 - *st.cache_hit_rate);
      if (small) scale_traffic(*small, 1 - *st.cache_hit_rate);
      change = fmt::format("a response cache answering {:.0f}% of requests", *st.cache_hit_rate * 100);
    } else if (!st.small_model.empty()) {
      // Every request meets the small model first; the rest escalate to the service's model.
      small = service;
      small->name = service.name + "-small";
      small->model_key = model_key(spec, st.small_model);
      scale_traffic(service, 1 - st.small_share);
      change = fmt::format("a cascade: {} settles {:.0f}% of requests, the rest escalate", st.small_model, st.small_share * 100);
    } else if (!st.distill_to.empty()) {
      service.model_key = model_key(spec, st.distill_to);
      change = "distilled into " + st.distill_to;
    }
    add_step(st.name, change, st.weeks);
  }
  for (const auto& s : report.steps) {
    report.total_weeks += s.weeks;
    if (s.feasible) report.total_saving_usd_per_month = w.usd_per_month - s.usd_per_month;
  }
  double weekly = report.total_saving_usd_per_month * 12 / 52;
  if (weekly > 0) report.total_payback_weeks = report.total_weeks * w.engineering_usd_per_week / weekly;

  auto& a = report.assumptions;
  a.push_back(fmt::format("today: {} x {} at ${:.0f}/month: ${:.2f} per GPU-month, the price every step pays", w.gpus, accelerator->name,
                          w.usd_per_month, report.usd_per_gpu_month));
  a.push_back("each step re-plans the service on the same accelerator at its SLO (queueing screen, then the simulator) with every "
              "step before it applied");
  a.push_back(fmt::format("payback: weeks of work x ${:.0f} per week / the step's saving per week (a month is 52/12 weeks)",
                          w.engineering_usd_per_week));
  a.push_back("quality effects (accuracy after quantization, distillation, a cascade's escalations) are the user's to check; "
              "gpuwise prices compute only");
  return report;
}

}  // namespace gw
