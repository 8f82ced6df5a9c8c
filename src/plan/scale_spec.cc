#include "plan/scale_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "core/money.h"
#include "plan/scaling_plan.h"
#include "plan/spec_names.h"
#include "report/json_document.h"
#include "report/progress.h"

namespace gw {

namespace {

using nlohmann::json;

// Replicas ready under each policy against the replicas the demand needs (arrivals over the
// interval / a replica's capacity at the utilization limit), one panel per policy, over the
// traffic's span (a backlog a failing policy drains later is left out), at most 600 points each.
Chart replicas_against_demand(const ScalingReport& report, double max_utilization) {
  json values = json::array();
  double per_replica = std::max(1e-12, report.capacity_rps_per_replica * max_utilization);
  for (const auto& p : report.policies) {
    size_t in_span = 0;
    while (in_span < p.series.size() && p.series[in_span].time_s <= report.duration_s) ++in_span;
    size_t stride = std::max<size_t>(1, (in_span + 599) / 600);
    for (size_t i = 0; i < in_span; i += stride) {
      const auto& s = p.series[i];
      values.push_back({{"policy", p.name}, {"hours", s.time_s / 3600}, {"replicas", s.ready}, {"series", "replicas ready"}});
      values.push_back({{"policy", p.name}, {"hours", s.time_s / 3600}, {"replicas", s.arrival_rps / per_replica}, {"series", "demand (replicas needed)"}});
    }
  }
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"data", {{"values", values}}},
               {"facet", {{"row", {{"field", "policy"}, {"type", "nominal"}, {"title", nullptr}, {"sort", nullptr}}}}},
               {"spec", {{"width", 640},
                         {"height", 90},
                         {"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"tooltip", true}, {"strokeWidth", 1.2}}},
                         {"encoding", {{"x", {{"field", "hours"}, {"type", "quantitative"}, {"title", "hours"}}},
                                       {"y", {{"field", "replicas"}, {"type", "quantitative"}, {"title", "replicas"}}},
                                       {"color", {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}}}}}}},
               {"resolve", {{"scale", {{"y", "shared"}}}}}};
  return {"Replicas against demand, " + report.service, spec};
}

Table policy_table(const ScalingReport& report) {
  Table t;
  t.columns = {"policy", "target", "mean replicas", "peak", "GPU-hours", "cost", "per month", "SLO met", "p99 latency s",
               "timed out", "cold starts", ""};
  t.align = {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right,
             Align::right, Align::right, Align::right, Align::left};
  for (size_t i = 0; i < report.policies.size(); ++i) {
    const auto& p = report.policies[i];
    const bool percent = p.name == "cpu" || p.name == "gpu-duty-cycle";
    std::string target = p.name == "static-peak" ? "-" : percent ? fmt::format("{:.0f}%", p.target) : format_number(p.target, 2);
    std::string mean = format_number(p.mean_ready, 1), peak = std::to_string(p.peak_ready);
    if (p.pools.size() == 2) {
      // Disaggregated: prefill + decode.
      if (p.name == "pool-signals") target = fmt::format("{:.0f}% / {}", p.pools[0].target, format_number(p.pools[1].target, 2));
      else if (p.name != "static-peak" && !percent) target = format_number(p.pools[0].target, 2) + " / " + format_number(p.pools[1].target, 2);
      mean = format_number(p.pools[0].mean_ready, 1) + " + " + format_number(p.pools[1].mean_ready, 1);
      peak = fmt::format("{} + {}", p.pools[0].peak_ready, p.pools[1].peak_ready);
    }
    t.add_row({p.name, target, mean, peak, format_number(p.gpu_hours, 1),
               format_usd(p.usd), format_usd(p.usd_per_month), fmt::format("{:.2f}%", p.slo_attainment * 100),
               format_number(p.latency_p99_s, 3), std::to_string(p.timed_out), std::to_string(p.cold_starts),
               static_cast<int>(i) == report.recommended ? "recommended" : p.meets_slo ? "" : "misses SLO"});
  }
  return t;
}

std::string verdict(const ScalingReport& report) {
  if (report.recommended < 0) return "No policy meets the SLO over this traffic: raise max_replicas or the targets' headroom.";
  const auto& best = report.policies[static_cast<size_t>(report.recommended)];
  std::string text = fmt::format("Recommended: {} at {}/month", best.name, format_usd(best.usd_per_month));
  for (const auto& p : report.policies)
    if (p.name == "static-peak" && p.name != best.name && p.usd > 0)
      text += fmt::format(", {:.0f}% less than static peak provisioning ({}/month, {} fewer GPU-hours over the span)",
                          100 * (1 - best.usd / p.usd), format_usd(p.usd_per_month), format_number(p.gpu_hours - best.gpu_hours, 1));
  text += ".";
  if (best.weekend_usd) {
    // Against the most expensive weekend among the other policies (left running).
    const PolicyOutcome* worst = nullptr;
    for (const auto& p : report.policies)
      if (p.weekend_usd && p.name != best.name && (!worst || *p.weekend_usd > *worst->weekend_usd)) worst = &p;
    if (worst && *worst->weekend_usd > *best.weekend_usd)
      text += fmt::format(" Weekend (Saturday and Sunday): {} under {}, against {} under {}: {} saved per weekend, {} a month.",
                          format_usd(*best.weekend_usd), best.name, format_usd(*worst->weekend_usd), worst->name,
                          format_usd(*worst->weekend_usd - *best.weekend_usd),
                          format_usd((*worst->weekend_usd - *best.weekend_usd) * kHoursPerMonth / 168));
  }
  return text;
}

std::string layout_name(const PlanOption& plan) {
  if (plan.decode)
    return fmt::format("{} x{} prefill + x{} decode pools", plan.config.accelerator->name, plan.config.tensor_parallel,
                       plan.decode->config.tensor_parallel);
  if (plan.config.pipeline_parallel > 1)
    return fmt::format("{} x{} ({})", plan.config.accelerator->name, plan.config.devices(), parallel_layout(plan.config));
  return fmt::format("{} x{}", plan.config.accelerator->name, plan.config.tensor_parallel);
}

json shape_json(const ScalingReport& r) {
  const PlanOption& plan = r.plan;
  json policies = json::array();
  for (const auto& p : r.policies) {
    json series = json::array();
    for (const auto& s : p.series) {
      series.push_back({{"time_s", s.time_s}, {"ready", s.ready}, {"starting", s.starting}, {"desired", s.desired},
                        {"billed", s.billed}, {"arrival_rps", s.arrival_rps}, {"waiting", s.waiting}, {"busy_fraction", s.busy_fraction}});
      if (!s.pool_ready.empty()) series.back()["pool_ready"] = s.pool_ready;
    }
    policies.push_back({{"name", p.name}, {"signal", p.signal}, {"target", p.target}, {"min_replicas", p.min_replicas},
                        {"max_replicas", p.max_replicas}, {"gpu_hours", p.gpu_hours}, {"replica_hours", p.replica_hours},
                        {"usd", p.usd}, {"usd_per_month", p.usd_per_month},
                        {"weekend_usd", p.weekend_usd ? json(*p.weekend_usd) : json(nullptr)}, {"slo_attainment", p.slo_attainment},
                        {"meets_slo", p.meets_slo}, {"cold_starts", p.cold_starts}, {"held_requests", p.held_requests},
                        {"timed_out", p.timed_out},
                        {"requests", p.requests}, {"scale_events", p.scale_events}, {"latency_p99_s", p.latency_p99_s},
                        {"mean_replicas", p.mean_ready}, {"peak_replicas", p.peak_ready},
                        {"fast_forwarded_s", p.fast_forwarded_s}, {"series", series}});
    if (!p.schedule.empty()) policies.back()["schedule"] = {{"replicas_by_hour", p.schedule}, {"lead_s", p.schedule_lead_s}};
    if (!p.pools.empty()) {
      json pools = json::array();
      for (const auto& pool : p.pools) {
        pools.push_back({{"role", pool.role}, {"target", pool.target}, {"min_replicas", pool.min_replicas},
                         {"max_replicas", pool.max_replicas}, {"mean_replicas", pool.mean_ready}, {"peak_replicas", pool.peak_ready},
                         {"replica_hours", pool.replica_hours}, {"usd", pool.usd}});
        if (!pool.schedule.empty()) pools.back()["replicas_by_hour"] = pool.schedule;
      }
      policies.back()["pools"] = pools;
    }
  }
  json replica_pools = json::array();
  for (const auto& pool : r.pools)
    replica_pools.push_back({{"role", pool.role}, {"tensor_parallel", pool.tensor_parallel}, {"gpus_per_replica", pool.gpus_per_replica},
                             {"usd_per_replica_hour", pool.usd_per_replica_hour}, {"peak_replicas", pool.peak_replicas}});
  json shape = {{"replica", {{"accelerator", plan.config.accelerator->name}, {"tensor_parallel", plan.config.tensor_parallel},
                       {"pipeline_parallel", std::max(1, plan.config.pipeline_parallel)}, {"batching", batching_name(plan.config.batching)}, {"max_batch", plan.config.max_batch},
                       {"cloud", plan.offering->cloud}, {"instance_type", plan.offering->instance_type},
                       {"pricing", pricing_name(plan.pricing)}, {"usd_per_replica_hour", r.usd_per_replica_hour},
                       {"capacity_rps", r.capacity_rps_per_replica}, {"peak_replicas", plan.replicas}}},
          {"policies", policies},
          {"recommended", r.recommended >= 0 ? json(r.policies[static_cast<size_t>(r.recommended)].name) : json(nullptr)},
          {"assumptions", r.assumptions}};
  if (!replica_pools.empty()) shape["replica"]["pools"] = replica_pools;
  return shape;
}

// Across layouts: each one's static pool against its queue-depth pool, and the cheapest
// (layout, policy) that meets the SLO.
std::string across_shapes(const ScalingStudy& study) {
  std::string text = fmt::format("Across {} replica layouts:", study.shapes.size());
  for (const auto& r : study.shapes) {
    const PolicyOutcome *fixed = nullptr, *queue = nullptr;
    for (const auto& p : r.policies) {
      if (p.name == "static-peak") fixed = &p;
      if (p.name == "queue-depth") queue = &p;
    }
    text += r.plan.decode ? fmt::format(" {} ({} + {} replicas at peak)", layout_name(r.plan), r.plan.replicas, r.plan.decode->replicas)
                          : fmt::format(" {} ({} replica{} at peak)", layout_name(r.plan), r.plan.replicas, r.plan.replicas == 1 ? "" : "s");
    if (fixed && queue)
      text += fmt::format(": queue depth {} GPU-hours{} against static {}", format_number(queue->gpu_hours, 1),
                          queue->meets_slo ? "" : fmt::format(" (misses the SLO, {:.2f}%)", queue->slo_attainment * 100),
                          format_number(fixed->gpu_hours, 1));
    text += ";";
  }
  text.back() = '.';
  if (study.best_shape < 0) return text + " None meets the SLO.";
  const ScalingReport& best = study.shapes[static_cast<size_t>(study.best_shape)];
  const PolicyOutcome& p = best.policies[static_cast<size_t>(best.recommended)];
  text += fmt::format(" Cheapest that meets the SLO: {} on {}{} at {}/month", p.name, layout_name(best.plan),
                      best.plan.decode ? "" : " replicas", format_usd(p.usd_per_month));
  const ScalingReport& plan = study.shapes[static_cast<size_t>(study.plan_shape)];
  if (study.best_shape != study.plan_shape && plan.recommended >= 0) {
    const PolicyOutcome& q = plan.policies[static_cast<size_t>(plan.recommended)];
    text += fmt::format(", against {} on the plan's {}{} at {}/month ({:.0f}% less)", q.name, layout_name(plan.plan),
                        plan.plan.decode ? "" : " replicas", format_usd(q.usd_per_month), 100 * (1 - p.usd / q.usd));
  }
  return text + ".";
}

// One layout's table, verdict and chart.
void add_layout(ScaleOutput& out, const ServiceSpec& service, const ScalingStudy& study, size_t k, bool explain,
                double max_utilization) {
  const ScalingReport& r = study.shapes[k];
  const PlanOption& plan = r.plan;
  std::string replica = fmt::format("{} ({} batching, max {}) on {} {} {}, ${:.4g}/replica-hour", layout_name(plan),
                                    batching_name(plan.config.batching), plan.config.max_batch, plan.offering->cloud,
                                    plan.offering->instance_type, pricing_name(plan.pricing), r.usd_per_replica_hour);
  if (r.pools.size() == 2)
    replica = fmt::format("{} ({} + {} at peak, {} batching) on {} {} {}, ${:.4g} and ${:.4g}/replica-hour", layout_name(plan),
                          r.pools[0].peak_replicas, r.pools[1].peak_replicas, batching_name(plan.config.batching), plan.offering->cloud,
                          plan.offering->instance_type, pricing_name(plan.pricing), r.pools[0].usd_per_replica_hour,
                          r.pools[1].usd_per_replica_hour);
  if (study.shapes.size() > 1)
    replica = (static_cast<int>(k) == study.plan_shape ? "the plan's layout, " : k == 0 ? "the one-pool plan's layout, " : "another layout, ") +
              replica;
  Table table = policy_table(r);
  std::string headline = fmt::format("{}: {}; traffic {}; {:.1f} h simulated; cold start {:.0f} s ({:.0f} s on a warm node)",
                                     service.name, replica, r.traffic, r.duration_s / 3600, r.start_s, r.warm_start_s);
  out.text += headline + "\n" + render_text(table);
  out.text += verdict(r) + "\n";
  if (explain) {
    out.text += "  assumptions:\n";
    for (const auto& a : r.assumptions) out.text += "    - " + a + "\n";
  }
  out.text += "\n";
  Section section;
  section.heading = study.shapes.size() > 1 ? service.name + ", " + layout_name(plan) + (plan.decode ? "" : " replicas") : service.name;
  section.paragraphs = {headline + ".", verdict(r)};
  section.charts.push_back(replicas_against_demand(r, max_utilization));
  section.tables.push_back(table);
  out.doc.sections.push_back(section);
  if (k == 0) out.doc.assumptions.insert(out.doc.assumptions.end(), r.assumptions.begin(), r.assumptions.end());
}

void add_service(ScaleOutput& out, const ServiceSpec& service, const ScalingStudy& study, int wanted_shapes, bool explain,
                 double max_utilization) {
  for (size_t k = 0; k < study.shapes.size(); ++k) add_layout(out, service, study, k, explain, max_utilization);
  if (static_cast<int>(study.shapes.size()) < wanted_shapes)
    out.add_paragraph(fmt::format("{} replica layouts asked for, {} found: no other accelerator / tensor-parallel layout among the "
                                  "plan's candidates meets the SLO at peak, even grown.",
                                  wanted_shapes, study.shapes.size()));
  const ScalingReport& first = study.shapes.front();
  if (study.shapes.size() == 1 && first.recommended >= 0 &&
      first.policies[static_cast<size_t>(first.recommended)].name == "static-peak")
    out.add_paragraph("No autoscaling policy saves on this layout: --shapes 4 (or scaling.shapes) compares other replica "
                      "layouts, and pools of smaller replicas can follow demand more closely.");
  if (study.shapes.size() > 1) out.add_paragraph(across_shapes(study));
  // Queue depth lost requests while replicas started: where the traffic has an hourly profile and
  // `scheduled` was not run, say that it starts them ahead.
  if (const PolicyOutcome* queue = first.policy("queue-depth");
      queue && !queue->meets_slo && queue->timed_out > 0 && !first.policy("scheduled") && first.hourly_profile)
    out.add_paragraph(fmt::format("queue-depth fell behind the ramps ({} requests timed out) with replicas that take {:.0f} s to "
                                  "start: add `scheduled` to scaling.policies to start each hour's replicas that far ahead, by "
                                  "the traffic's profile.",
                                  format_number(static_cast<double>(queue->timed_out), 0), first.start_s));
  // What the schedule asks, as `plan --emit-k8s` writes it (KEDA cron triggers).
  for (const auto& p : first.policies) {
    if (p.schedule.empty()) continue;
    std::string windows;
    auto add_windows = [&](const PolicyOutcome& one, const std::string& pool) {
      for (const auto& w : schedule_windows(one))
        windows += fmt::format("{}{}{} replicas {}", windows.empty() ? "" : "; ", w.replicas, pool, w.note);
    };
    if (p.pools.empty()) add_windows(p, "");
    for (const auto& pool : p.pools) {
      // Each pool's own schedule, from its own floor.
      PolicyOutcome one = p;
      one.schedule = pool.schedule;
      one.min_replicas = pool.min_replicas;
      add_windows(one, " " + pool.role);
    }
    const std::string floor = p.pools.size() == 2 ? fmt::format("{} prefill and {} decode", p.pools[0].min_replicas, p.pools[1].min_replicas)
                                                  : std::to_string(p.min_replicas);
    out.add_paragraph(fmt::format("{} asks, beside queue depth, for {} ({}; each hour's count {:.0f} min ahead; KEDA cron triggers, or "
                                  "CronJobs setting an HPA's minReplicas{}), and at least {} otherwise.",
                                  p.name, windows.empty() ? "no more than its floor" : windows, service.traffic.timezone,
                                  p.schedule_lead_s / 60, p.pools.empty() ? ", as `plan --emit-k8s` writes them" : ", one set per pool", floor));
  }
  // Said once: among each layout's assumptions (text with --explain, the report's list, JSON),
  // else under the table.
  const PlanOption* pools = nullptr;
  for (const ScalingReport& r : study.shapes)
    if (r.plan.decode) pools = &r.plan;
  if (const std::string note = disaggregated_deployment_note(service, pools); !note.empty() && !explain) out.text += note + "\n\n";

  json entry = shape_json(first);
  entry["name"] = service.name;
  entry["traffic"] = first.traffic;
  entry["duration_s"] = first.duration_s;
  entry["cold_start_s"] = first.start_s;
  entry["warm_start_s"] = first.warm_start_s;
  json others = json::array();
  for (size_t k = 1; k < study.shapes.size(); ++k) others.push_back(shape_json(study.shapes[k]));
  entry["other_shapes"] = others;
  entry["plan_shape"] = study.plan_shape;
  entry["recommended_shape"] = nullptr;
  if (study.best_shape >= 0) {
    const ScalingReport& best = study.shapes[static_cast<size_t>(study.best_shape)];
    const PolicyOutcome& p = best.policies[static_cast<size_t>(best.recommended)];
    entry["recommended_shape"] = {{"accelerator", best.plan.config.accelerator->name},
                                  {"tensor_parallel", best.plan.config.tensor_parallel},
                                  {"disaggregated", best.plan.disaggregated()}, {"policy", p.name},
                                  {"usd_per_month", p.usd_per_month}, {"gpu_hours", p.gpu_hours}};
  }
  out.services.push_back(entry);
}

}  // namespace

Result<ScaleOutput> scale_spec(const Catalog& catalog, const Spec& spec, const ScaleSpecOptions& o) {
  if (auto missing = require_slos(spec, "scale")) return *missing;
  if (auto bad_name = check_spec_names(spec, catalog, spec.path)) return *bad_name;
  if (spec.services.empty()) return Error{spec.path, 0, "services", "no services to scale"};
  ScalingPlanOptions options;
  options.calibration = o.calibration;
  options.seed = o.seed;
  options.duration_s = o.hours * 3600;
  options.shapes = o.shapes;
  options.jobs = o.jobs;
  options.exact = o.exact;
  options.fast_forward = o.fast_forward;
  ScaleOutput out;
  out.doc.kind = "scale";
  out.doc.title = "Autoscaling: " + spec.path;
  out.spec_path = spec.path;
  out.seed = o.seed;
  for (const auto& service : spec.services) {
    // One bar per service: the requests admitted so far, summed over the policies that the
    // threads simulate at once.
    std::unique_ptr<Progress> progress;
    std::mutex progress_mutex;
    std::map<std::string, long long> admitted_by_policy;
    options.on_progress = [&](const std::string& policy, long long admitted) {
      if (!o.show_progress) return;
      std::lock_guard<std::mutex> lock(progress_mutex);
      if (!progress) progress = std::make_unique<Progress>("scaling " + service.name + " (all policies)", "requests", 0, true);
      admitted_by_policy[policy] = admitted;
      long long total = 0;
      for (const auto& [name, count] : admitted_by_policy) total += count;
      progress->update(static_cast<double>(total));
    };
    auto result = study_scaling(catalog, spec, service, options);
    if (progress) progress->finish();
    if (!result.ok()) return result.error();
    out.all_meet = out.all_meet && result.value().best_shape >= 0;
    add_service(out, service, result.value(), o.shapes > 0 ? o.shapes : service.scaling.shapes, o.explain,
                spec.constraints.max_utilization);
  }
  return out;
}

nlohmann::json to_json(const ScaleOutput& out) {
  return json_document("scale", {{"spec", out.spec_path}, {"seed", out.seed}, {"services", out.services}});
}

}  // namespace gw
