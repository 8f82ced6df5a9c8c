#include "plan/plan_json.h"

#include "plan/batch_report.h"

#include <cmath>

#include "report/json_document.h"

namespace gw {

namespace {

using nlohmann::json;

json option_json(const PlanOption& o, const ServicePlan& p, bool llm) {
  json j = {{"accelerator", o.config.accelerator->name},
            {"tensor_parallel", o.config.tensor_parallel},
            {"pipeline_parallel", o.config.pipeline_parallel},
            {"batching", std::string(batching_name(o.config.batching))},
            {"max_batch", o.config.max_batch},
            {"replicas", o.replicas},
            {"cloud", o.offering->cloud},
            {"region", o.offering->region},
            {"instance_type", o.offering->instance_type},
            {"cpu_architecture", std::string(cpu_architecture(*o.offering))},
            {"instances", o.instances},
            {"pricing", std::string(pricing_name(o.pricing))},
            {"gpus", o.instances * o.offering->accelerator_count},
            {"utilization", o.level.utilization},
            {"operating_batch", o.level.batch},
            {"usd_per_hour", o.usd_per_hour},
            {"usd_per_month", o.usd_per_month()},
            {"usd_per_1k_inferences", usd_per_1k_inferences(o, p)}};
  json nodes = json::array();
  for (const NodeGroup& g : o.nodes)
    nodes.push_back({{"cloud", g.offering->cloud}, {"region", g.offering->region}, {"zone", g.zone.empty() ? g.offering->zone : g.zone},
                     {"instance_type", g.offering->instance_type}, {"pricing", std::string(pricing_name(g.pricing))},
                     {"instances", g.instances}, {"usd_per_hour", g.offering->usd_per_hour(g.pricing).value_or(0) * g.instances}});
  j["nodes"] = nodes;
  j["min_nodes"] = o.min_nodes;
  // Disaggregated: the option's own layout is the prefill pool's; this is the decode pool's.
  if (o.decode) {
    const DecodePool& d = *o.decode;
    j["disaggregated"] = {{"prefill_gpus", o.config.tensor_parallel * o.replicas},
                          {"decode_gpus", d.config.tensor_parallel * d.replicas},
                          {"ratio", o.layout()},
                          {"decode_tensor_parallel", d.config.tensor_parallel},
                          {"decode_replicas", d.replicas},
                          {"link", d.link},
                          {"link_gbps_per_gpu", d.link_gbps_per_gpu},
                          {"kv_transfer_s", d.kv_transfer_s},
                          {"kv_transfer", d.kv_pulled_between_steps ? "between_steps" : "overlapped"},
                          {"decode_pull_share", d.pull_share()},
                          {"prefill_bound_by", d.prefill_binding},
                          {"decode_bound_by", d.decode_binding}};
  }
  // The latencies are the simulation's where one ran (what the plan was verified on); the
  // analytical screen's own figures stay under "screen" and say where the screen is rough.
  json screen = {{"latency_p50_s", o.level.latency_p50_s}, {"latency_p99_s", o.level.latency_p99_s}};
  if (llm) {
    screen["ttft_p99_s"] = o.level.ttft_p99_s;
    screen["tpot_p99_s"] = o.level.tpot_p99_s;
    j["usd_per_million_tokens"] = usd_per_million_tokens(o, p);
  }
  j["screen"] = screen;
  j["latencies_from"] = o.simulated ? "simulation" : "screen";
  j["latency_p50_s"] = o.simulated ? o.simulated->latency_p50_s : o.level.latency_p50_s;
  j["latency_p99_s"] = o.simulated ? o.simulated->latency_p99_s : o.level.latency_p99_s;
  if (llm) {
    j["ttft_p99_s"] = o.simulated ? o.simulated->ttft_p99_s : o.level.ttft_p99_s;
    j["tpot_p99_s"] = o.simulated ? o.simulated->tpot_p99_s : o.level.tpot_p99_s;
  }
  if (o.simulated) {
    json s = {{"meets_slo", o.simulated->meets}, {"requests", o.simulated->requests},
              {"latency_p99_s", o.simulated->latency_p99_s}, {"slo_attainment", o.simulated->slo_attainment}};
    if (llm) {
      s["ttft_p99_s"] = o.simulated->ttft_p99_s;
      s["tpot_p99_s"] = o.simulated->tpot_p99_s;
    }
    if (o.simulated->duty_cycle > 0) s["duty_cycle"] = o.simulated->duty_cycle;
    if (o.simulated->prefill_duty_cycle > 0) s["prefill_duty_cycle"] = o.simulated->prefill_duty_cycle;
    if (!o.simulated->meets) s["missed"] = o.simulated->miss;
    if (o.simulated->reclaimed) {
      const SimulatedCheck& c = *o.simulated;
      s["reclaim"] = {{"replicas_lost", c.reclaim_replicas}, {"at_s", c.reclaim_at_s}, {"replacement_s", c.replacement_s},
                      {"notice_s", c.notice_s}, {"rerouted_requests", c.rerouted}};
      if (c.drained_s >= 0) s["reclaim"]["drained_s"] = c.drained_s;
    }
    j["simulated"] = s;
  }
  return j;
}

json service_json(const ServicePlan& p, const ServiceSpec& s, const Spec& spec) {
  bool llm = spec.models.at(s.model_key).arch.kind == ModelKind::decoder;
  json pareto = json::array();
  for (const auto& o : p.pareto) pareto.push_back(option_json(o, p, llm));
  json j = {{"name", p.service},
            {"model", s.model_key},
            {"feasible", p.feasible},
            {"average_rps", p.average_rps},
            {"peak_rps", p.peak_rps},
            {"mean_input_tokens", p.mean_input_tokens},
            {"mean_output_tokens", p.mean_output_tokens},
            {"candidates_evaluated", p.candidates_evaluated},
            {"best", p.best ? option_json(*p.best, p, llm) : json(nullptr)},
            {"pareto", pareto},
            {"no_batching", p.no_batching ? option_json(*p.no_batching, p, llm) : json(nullptr)},
            {"assumptions", p.assumptions},
            {"dropped_after_simulation", p.dropped}};
  if (!p.feasible) j["binding_constraint"] = p.binding;
  if (!p.quota_choice.empty()) j["quota_choice"] = p.quota_choice;
  if (p.disaggregated)
    j["disaggregation"] = {{"best", option_json(*p.disaggregated, p, llm)},
                           {"chosen", p.best && p.best->disaggregated()},
                           {"verdict", p.disaggregation_verdict}};
  if (p.best && p.no_batching) j["batching_saves_usd_per_month"] = p.no_batching->usd_per_month() - p.best->usd_per_month();
  if (!s.traffic.trace_path.empty()) j["trace"] = s.traffic.trace_path;
  return j;
}

json candidate_json(const TrainingCandidate& c) {
  const auto& e = c.estimate;
  return json{{"accelerator", c.offering->accelerator}, {"count", c.devices}, {"cloud", c.offering->cloud},
              {"region", c.offering->region}, {"zone", c.offering->zone}, {"instance_type", c.offering->instance_type},
              {"instances", c.instances}, {"pricing", std::string(pricing_name(c.pricing))},
              {"time_s", c.expected_time_s}, {"gpu_hours", c.expected_time_s / 3600 * c.devices}, {"usd", c.usd},
              {"mfu", e.mfu}, {"tokens_per_s", e.tokens_per_s}, {"checkpoint_interval_s", c.checkpoint_interval_s},
              {"bound", e.bound},
              {"layout", {{"tensor_parallel", e.layout.tensor_parallel}, {"pipeline_parallel", e.layout.pipeline_parallel},
                          {"data_parallel", e.layout.data_parallel}, {"zero_stage", e.layout.zero_stage},
                          {"recompute", std::string(recompute_name(e.layout.recompute))}}},
              {"warnings", e.warnings}};
}

json training_json(const TrainingPlan& tp, const TrainingSpec& t) {
  json pareto = json::array();
  for (const auto& c : tp.pareto) pareto.push_back(candidate_json(c));
  json j = {{"name", t.name}, {"model", t.model_key}, {"feasible", tp.feasible}, {"candidates_evaluated", tp.candidates},
            {"best", tp.best ? candidate_json(*tp.best) : json(nullptr)}, {"pareto", pareto},
            {"runs_per_month", t.runs_per_month},
            {"deadline_days", t.deadline_days ? json(*t.deadline_days) : json(nullptr)}};
  if (!tp.feasible) j["binding_constraint"] = tp.binding;
  if (tp.best && t.runs_per_month > 0) j["usd_per_month"] = tp.best->usd * t.runs_per_month;
  return j;
}

json quotas_json(const std::vector<QuotaNeed>& quotas) {
  json list = json::array();
  for (const auto& q : quotas)
    list.push_back({{"cloud", q.cloud}, {"region", q.region}, {"family", q.family}, {"unit", q.unit}, {"needed", q.needed},
                    {"have", q.have ? json(*q.have) : json(nullptr)}, {"short_by", q.short_of_quota() ? json(q.needed - *q.have) : json(0)},
                    {"by", q.by}, {"lead_time", q.lead_time}});
  return list;
}

json unit_costs_json(const PlanResult& result) {
  json list = json::array();
  for (const auto& u : result.unit_costs)
    list.push_back({{"name", u.name}, {"kind", u.kind}, {"usd_per_month", u.usd_per_month},
                    {"share", result.unit_costs_usd_per_month > 0 ? u.usd_per_month / result.unit_costs_usd_per_month : 0},
                    {"unit", u.unit}, {"usd_per_unit", std::isfinite(u.usd_per_unit) ? json(u.usd_per_unit) : json(nullptr)}});
  return list;
}

}  // namespace

double usd_per_1k_inferences(const PlanOption& o, const ServicePlan& p) {
  return p.average_rps > 0 ? o.usd_per_hour / (p.average_rps * 3600.0) * 1000.0 : NAN;
}

double usd_per_million_tokens(const PlanOption& o, const ServicePlan& p) {
  double tokens_per_s = p.average_rps * (p.mean_input_tokens + p.mean_output_tokens);
  return tokens_per_s > 0 ? o.usd_per_hour / (tokens_per_s * 3600.0) * 1e6 : NAN;
}

nlohmann::json to_json(const PlanResult& result) {
  const Spec& spec = result.spec;
  json services = json::array();
  for (size_t i = 0; i < result.services.size(); ++i) services.push_back(service_json(result.services[i], spec.services[i], spec));
  json training = json::array();
  for (size_t i = 0; i < result.training.size(); ++i) training.push_back(training_json(result.training[i], spec.training[i]));
  json batch_jobs = json::array();
  for (size_t i = 0; i < result.batch_jobs.size(); ++i)
    batch_jobs.push_back(batch_job_json(result.batch_jobs[i], spec.batch_jobs[i], spec.models.at(spec.batch_jobs[i].model_key)));
  const auto& budget = spec.constraints.budget_usd_per_month;
  return json_document("plan", {{"spec", spec.path},
                                {"services", services},
                                {"batch_jobs", batch_jobs},
                                {"training", training},
                                {"total_usd_per_month", result.total_usd_per_month},
                                {"one_off_training_usd", result.one_off_training_usd},
                                {"one_off_batch_usd", result.one_off_batch_usd},
                                {"budget_usd_per_month", budget ? json(*budget) : json(nullptr)},
                                {"within_budget", !result.over_budget},
                                {"not_planned", spec.not_planned},
                                {"quota_needed", quotas_json(result.quotas)},
                                {"cost_per_unit", unit_costs_json(result)}});
}

}  // namespace gw
