// The autoscaling study across replica layouts: the one-pool plan's layout, the next cheapest
// accelerator / tensor-parallel layouts each at the fewest replicas the simulation accepts at
// peak, and disaggregated prefill and decode pools where the deployment asks for them; each
// layout's policies (scaling_plan.cc), and the cheapest layout and policy that meet the SLO.
#include <algorithm>
#include <fmt/format.h>

#include "core/text.h"
#include "plan/disaggregated_plan.h"
#include "plan/scaling_plan.h"

namespace gw {

std::string disaggregated_deployment_note(const ServiceSpec& service, const PlanOption* pools) {
  if (!service.deployment || !service.deployment->disaggregation) return "";
  std::vector<std::string> groups;
  for (const auto& g : service.deployment->groups)
    groups.push_back(fmt::format("{} {} replica(s) of {} x {}", g.count, g.role, g.tensor_parallel * std::max(1, g.pipeline_parallel),
                                 g.accelerator));
  const std::string given = groups.empty() ? "" : " (" + join_list(groups) + ")";
  if (pools)
    return fmt::format("The spec's deployment is disaggregated{}: the cheapest disaggregated layout that met the SLO at peak in "
                       "simulation ({} prefill + {} decode replicas of {}, {} GPUs) is scaled, each pool on its own signal "
                       "(`gpuwise simulate` runs the pools as given).",
                       given, pools->replicas, pools->decode->replicas, pools->config.accelerator->name, pools->layout());
  return fmt::format("The spec's deployment is disaggregated{}; no disaggregated layout met the SLO at peak in simulation, so "
                     "only one-pool layouts are scaled (`gpuwise plan` compares the two at peak; `gpuwise simulate` runs the pools "
                     "as given).",
                     given);
}

Result<ScalingStudy> study_scaling(const Catalog& catalog, const Spec& spec, const ServiceSpec& service,
                                   const ScalingPlanOptions& options) {
  const ModelSpec& model = spec.models.at(service.model_key);
  const std::string field = "services." + service.name;
  PlannerOptions planner;
  planner.calibration = options.calibration;
  ServicePlan plan = plan_service(catalog, spec, service, planner);
  VerifyOptions verify;
  verify.build.calibration = options.calibration;
  verify.seed = options.seed;
  verify_plan(catalog, spec, service, plan, verify);
  if (!plan.feasible || !plan.best) return Error{spec.path, service.line, field, "no configuration meets the SLO at peak: " + plan.binding};

  // The one-pool plan's replica, then other layouts in screened cost order, each at the fewest
  // replicas the simulation accepts at peak: a pool of small replicas can follow demand more
  // closely; then, where the spec's deployment is disaggregated or more layouts are asked for,
  // the cheapest disaggregated prefill and decode pools that meet the SLO at peak (as `plan`
  // weighs them), each pool scaled on its own signal.
  const int wanted = options.shapes > 0 ? options.shapes : service.scaling.shapes;
  std::vector<PlanOption> layouts = {*plan.best};
  for (const auto& option : plan.ranked) {
    if (static_cast<int>(layouts.size()) >= wanted) break;
    if (std::any_of(layouts.begin(), layouts.end(), [&](const PlanOption& l) { return l.config == option.config; })) continue;
    PlanOption candidate = option;
    std::optional<PlanOption> verified;
    if (verify_option(catalog, model, service, candidate, verify)) verified = candidate;
    else verified = grow_until_verified(catalog, model, service, option, verify);
    if (verified) layouts.push_back(*verified);
  }
  const PlanOption* pools = nullptr;
  ScalingStudy study;
  if (options.pools && model.arch.kind == ModelKind::decoder && service.batching != Batching::none) {
    PlannerOptions split = planner;
    split.consider_disaggregated = true;
    ServicePlan pooled = plan_service(catalog, spec, service, split);
    verify_plan(catalog, spec, service, pooled, verify);
    judge_disaggregation(catalog, spec, service, pooled, split, &verify);
    const bool planned = pooled.best && pooled.best->disaggregated();
    const bool asked = (service.deployment && service.deployment->disaggregation) || static_cast<int>(layouts.size()) < wanted;
    if ((planned || asked) && pooled.disaggregated && pooled.disaggregated->simulated && pooled.disaggregated->simulated->meets) {
      layouts.push_back(*pooled.disaggregated);
      pools = &layouts.back();
      if (planned) study.plan_shape = static_cast<int>(layouts.size()) - 1;
    }
  }
  const std::string note = disaggregated_deployment_note(service, pools);
  for (const auto& layout : layouts) {
    auto report = scale_layout(catalog, spec, service, options, layout, verify);
    if (!report.ok()) return report.error();
    if (!note.empty()) report.value().assumptions.push_back(note);
    study.shapes.push_back(std::move(report.value()));
  }
  double cheapest = 0;
  for (size_t i = 0; i < study.shapes.size(); ++i) {
    const ScalingReport& r = study.shapes[i];
    if (r.recommended < 0) continue;
    double usd = r.policies[static_cast<size_t>(r.recommended)].usd;
    if (study.best_shape < 0 || usd < cheapest - 1e-9) study.best_shape = static_cast<int>(i), cheapest = usd;
  }
  return study;
}

Result<ScalingReport> plan_scaling(const Catalog& catalog, const Spec& spec, const ServiceSpec& service,
                                   const ScalingPlanOptions& options) {
  ScalingPlanOptions one = options;
  one.shapes = 1;
  one.pools = false;
  auto study = study_scaling(catalog, spec, service, one);
  if (!study.ok()) return study.error();
  return std::move(study.value().shapes.front());
}

}  // namespace gw
