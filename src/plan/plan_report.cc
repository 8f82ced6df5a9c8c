#include "plan/plan_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "core/numbers.h"
#include "core/text.h"
#include "plan/batch_report.h"
#include "plan/plan_json.h"
#include "plan/training_table.h"
#include "report/style.h"

namespace gw {

namespace {

// The cost-latency frontier: each option's monthly cost against its p99 latency (TTFT for LLMs),
// the chosen plan marked.
Chart pareto_chart(const ServicePlan& p, bool llm) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& o : p.pareto)
    values.push_back({{"option", fmt::format("{} x{} {} {} ({})", o.config.accelerator->name, o.replicas, parallel_layout(o.config),
                                              batching_name(o.config.batching), pricing_name(o.pricing))},
                      {"usd_per_month", o.usd_per_month()},
                      {"latency_s", llm ? o.level.ttft_p99_s : o.level.latency_p99_s},
                      {"plan", p.best && o.usd_per_hour == p.best->usd_per_hour && o.config.accelerator == p.best->config.accelerator
                                   ? "chosen plan" : "alternatives"}});
  std::string y = llm ? "TTFT p99 (s)" : "latency p99 (s)";
  nlohmann::json spec = {
      {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
      {"width", 560},
      {"height", 300},
      {"data", {{"values", values}}},
      {"layer", nlohmann::json::array({
                    {{"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"color", "#9aa4b5"}}},
                     {"encoding", {{"x", {{"field", "usd_per_month"}, {"type", "quantitative"}, {"title", "USD per month"}}},
                                   {"y", {{"field", "latency_s"}, {"type", "quantitative"}, {"title", y}}}}}},
                    {{"mark", {{"type", "point"}, {"filled", true}, {"size", 90}, {"tooltip", {{"content", "data"}}}}},
                     {"encoding", {{"x", {{"field", "usd_per_month"}, {"type", "quantitative"}}},
                                   {"y", {{"field", "latency_s"}, {"type", "quantitative"}}},
                                   {"color", {{"field", "plan"}, {"type", "nominal"}, {"title", nullptr},
                                              {"scale", {{"domain", {"alternatives", "chosen plan"}}, {"range", {"#2458a6", "#c2410c"}}}}}}}}},
                })}};
  return {"Cost against latency: the frontier of candidate plans", spec};
}

// The training time-cost frontier: days against dollars per run.
Chart training_chart(const TrainingPlan& tp) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& c : tp.pareto)
    values.push_back({{"option", fmt::format("{} x{} {} ({})", c.offering->accelerator, c.devices, c.offering->instance_type, pricing_name(c.pricing))},
                      {"days", c.expected_time_s / 86400},
                      {"usd", c.usd}});
  nlohmann::json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
                         {"width", 560},
                         {"height", 300},
                         {"data", {{"values", values}}},
                         {"mark", {{"type", "point"}, {"filled", true}, {"size", 90}, {"tooltip", {{"content", "data"}}}}},
                         {"encoding", {{"x", {{"field", "usd"}, {"type", "quantitative"}, {"title", "USD per run"}}},
                                       {"y", {{"field", "days"}, {"type", "quantitative"}, {"title", "days per run"}}}}}};
  return {"Time against cost per run: the frontier", spec};
}

// The plan's latency: the simulation's where it ran (the screen only prunes), else the screen's.
std::string latency_text(const PlanOption& o, bool llm) {
  auto screen = [&] {
    return llm ? fmt::format("ttft p99 {:.3f} s, tpot p99 {:.1f} ms", o.level.ttft_p99_s, o.level.tpot_p99_s * 1e3)
               : fmt::format("p99 {:.1f} ms", o.level.latency_p99_s * 1e3);
  };
  if (!o.simulated || !o.simulated->requests) return screen() + " (screen)";
  const SimulatedCheck& s = *o.simulated;
  return (llm ? fmt::format("simulated ttft p99 {:.3f} s, tpot p99 {:.1f} ms", s.ttft_p99_s, s.tpot_p99_s * 1e3)
              : fmt::format("simulated p99 {:.1f} ms", s.latency_p99_s * 1e3)) +
         " (screen: " + screen() + ")";
}


// Writes text and document together: each section's paragraphs are the lines written since the
// section began.
class PlanReportBuilder {
 public:
  PlanReportBuilder(const PlanResult& result, const PlanReportOptions& options) : r_(result), options_(options) {
    const Spec& spec = r_.spec;
    doc_.kind = "plan";
    doc_.title = "Plan: " + (spec.name.empty() ? spec.path : spec.name);
  }

  PlanReport build() {
    if (options_.markdown) out_ += "# Plan: " + (r_.spec.name.empty() ? r_.spec.path : r_.spec.name) + "\n\n";
    for (size_t i = 0; i < r_.services.size(); ++i) add_service(i);
    for (size_t i = 0; i < r_.batch_jobs.size(); ++i) add_batch_job(i);
    for (size_t i = 0; i < r_.training.size(); ++i) add_training(i);
    add_summary();
    return {std::move(out_), std::move(doc_)};
  }

 private:
  std::vector<std::string> paragraphs_since(size_t from) const {
    std::vector<std::string> lines;
    for (auto& line : split(out_.substr(from), '\n'))
      if (!gw::trim(line).empty()) lines.emplace_back(gw::trim(line));
    return lines;
  }

  void add_service(size_t i) {
    const bool markdown = options_.markdown, colour = options_.colour;
    const auto& p = r_.services[i];
    const auto& s = r_.spec.services[i];
    const ModelSpec& m = r_.spec.models.at(s.model_key);
    bool llm = m.arch.kind == ModelKind::decoder;
    std::string heading = fmt::format("{} ({} {}): {:.3g} requests/s average, {:.3g} at peak{}", p.service, m.arch.name,
                                      m.weight_format == WeightFormat::plain ? precision_name(m.precision) : weight_format_name(m.weight_format),
                                      p.average_rps, p.peak_rps,
                                      llm ? fmt::format("; {:.0f} input / {:.0f} output tokens on average",
                                                        p.mean_input_tokens, p.mean_output_tokens)
                                          : "");
    out_ += markdown ? "## " + heading + "\n\n" : heading + "\n";
    size_t section_start = out_.size();
    Section section;
    section.heading = heading;
    if (!p.best) {
      out_ += "  " + paint("no plan: " + p.binding, Style::bad, colour) + "\n\n";
      section.paragraphs = paragraphs_since(section_start);
      doc_.sections.push_back(section);
      return;
    }
    const PlanOption& b = *p.best;
    const std::string layout =
        b.decode ? fmt::format("disaggregated: {} prefill replica{} of {}x {} and {} decode of {}x {} ({} GPUs, prefill:decode), "
                               "continuous batching, max {}, KV over {} at {:.0f} Gb/s per GPU",
                               b.replicas, b.replicas == 1 ? "" : "s", b.config.tensor_parallel, b.config.accelerator->name,
                               b.decode->replicas, b.decode->config.tensor_parallel, b.config.accelerator->name, b.layout(),
                               b.config.max_batch, b.decode->link, b.decode->link_gbps_per_gpu)
                 : fmt::format("{} replica{} of {}x {} ({}{}, {} batching{})", b.replicas, b.replicas == 1 ? "" : "s",
                               b.config.devices(), b.config.accelerator->name, parallel_layout(b.config),
                               b.config.pipeline_parallel > 1 ? fmt::format(": {} nodes each", b.config.pipeline_parallel) : "",
                               batching_name(b.config.batching),
                               b.config.batching == Batching::none ? "" : fmt::format(", max {}", b.config.max_batch));
    out_ += "  " + paint("best:", Style::good, colour) + fmt::format(" {}, {}, {}; {:.0f}% of capacity at peak\n", describe_nodes(b),
                                                                      layout, latency_text(b, llm), b.level.utilization * 100);
    add_simulated(b, s, llm);
    for (const auto& dropped : p.dropped) out_ += "  dropped after simulation: " + dropped + "\n";
    if (!p.quota_choice.empty()) out_ += "  within quota: " + p.quota_choice + "\n";
    std::vector<std::string> arm_hosts;  // every node group's (a spot plan's floor too)
    for (const NodeGroup& g : b.nodes)
      if (cpu_architecture(*g.offering) == "arm64" &&
          std::find(arm_hosts.begin(), arm_hosts.end(), g.offering->instance_type) == arm_hosts.end())
        arm_hosts.push_back(g.offering->instance_type);
    if (!arm_hosts.empty())
      out_ += fmt::format("  host CPU: arm64 ({}): the serving image must be built for linux/arm64 (constraints.cpu_architectures: "
                          "[x86_64] keeps to x86 hosts)\n", join_list(arm_hosts));
    out_ += fmt::format("  cost: {}/hour, {}/month, {} per 1k inferences{}\n", format_usd(b.usd_per_hour),
                        format_usd(b.usd_per_month()), format_usd(usd_per_1k_inferences(b, p)),
                        llm ? fmt::format(", {} per 1M tokens", format_usd(usd_per_million_tokens(b, p))) : "");
    if (!p.disaggregation_verdict.empty()) out_ += "  disaggregation: " + p.disaggregation_verdict + "\n";
    if (p.no_batching) {
      double saving = p.no_batching->usd_per_month() - b.usd_per_month();
      out_ += fmt::format("  without batching: {} replicas on {} x {} ({}), {}/month; batching saves {}/month ({:.0f}%)\n",
                          p.no_batching->replicas, p.no_batching->instances, p.no_batching->offering->instance_type,
                          p.no_batching->config.accelerator->name, format_usd(p.no_batching->usd_per_month()),
                          format_usd(saving), p.no_batching->usd_per_month() > 0 ? saving / p.no_batching->usd_per_month() * 100 : 0);
    }
    section.paragraphs = paragraphs_since(section_start);
    Table table = frontier_table(p, llm);
    out_ += markdown ? "\nCost-latency frontier:\n\n" + render_markdown(table) : "  cost-latency frontier:\n" + render_text(table);
    section.charts.push_back(pareto_chart(p, llm));
    section.tables.push_back(table);
    doc_.sections.push_back(section);
    if (options_.explain) {
      out_ += "  assumptions:\n";
      for (const auto& a : p.assumptions) out_ += "    - " + a + "\n";
      out_ += "    - efficiency: " + r_.efficiency_sources[i] + "\n";
      out_ += fmt::format("    - {} candidate evaluations\n", p.candidates_evaluated);
    }
    out_ += "\n";
  }

  void add_simulated(const PlanOption& b, const ServiceSpec& s, bool llm) {
    if (b.simulated)
      out_ += fmt::format("  simulated ({} requests, {}): {}; SLO attainment {:.1f}%\n", b.simulated->requests,
                          s.traffic.trace_path.empty() ? "Poisson at the peak rate" : "replaying the trace",
                          llm ? fmt::format("ttft p99 {:.3f} s, tpot p99 {:.1f} ms", b.simulated->ttft_p99_s,
                                            b.simulated->tpot_p99_s * 1e3)
                              : fmt::format("p99 {:.1f} ms", b.simulated->latency_p99_s * 1e3),
                          b.simulated->slo_attainment * 100);
    if (b.simulated && b.simulated->duty_cycle > 0)
      out_ += fmt::format("  GPUs in steps {:.0f}% of the time in simulation{} ({}: duty cycle, not load)\n", b.simulated->duty_cycle * 100,
                          b.simulated->prefill_duty_cycle > 0 ? fmt::format(", the prefill pool's {:.0f}%", b.simulated->prefill_duty_cycle * 100) : "",
                          b.config.batching == Batching::continuous ? "continuous batching steps whenever one sequence runs"
                          : b.config.batching == Batching::none     ? "one request at a time"
                                                                    : "a batch runs however few requests it holds");
    if (b.simulated && b.simulated->reclaimed) {
      const SimulatedCheck& c = *b.simulated;
      out_ += fmt::format("  reclaim simulated: one spot node ({} replica{}) taken at {:.0f} s, its replacement serving {:.0f} s later "
                          "(cold start); {} queued request{} moved to the others; the node {} ({:.0f} s notice on {})\n",
                          c.reclaim_replicas, c.reclaim_replicas == 1 ? "" : "s", c.reclaim_at_s, c.replacement_s, c.rerouted,
                          c.rerouted == 1 ? "" : "s",
                          c.drained_s >= 0 ? fmt::format("finished what it held in {:.1f} s", c.drained_s) : std::string("still held work when replaced"),
                          c.notice_s, b.offering->cloud);
    }
  }

  static Table frontier_table(const ServicePlan& p, bool llm) {
    Table table;
    table.columns = {"accelerator", "tp", "batching", "replicas", "offering", "pricing", llm ? "ttft_p99_s" : "p99_ms",
                     llm ? "tpot_p99_ms" : "p50_ms", "simulated_p99", "load", "usd_per_month", "usd_per_1k"};
    table.align = {Align::left, Align::right, Align::left, Align::right, Align::left, Align::left,
                   Align::right, Align::right, Align::right, Align::right, Align::right, Align::right};
    for (const auto& o : p.pareto)
      table.add_row({o.config.accelerator->name,
                     o.decode ? fmt::format("{}/{}", o.config.tensor_parallel, o.decode->config.tensor_parallel)
                     : o.config.pipeline_parallel > 1 ? fmt::format("{} (pp{})", o.config.tensor_parallel, o.config.pipeline_parallel)
                                                      : std::to_string(o.config.tensor_parallel),
                     o.decode ? "disaggregated" : std::string(batching_name(o.config.batching)),
                     o.decode ? fmt::format("{}+{}", o.replicas, o.decode->replicas) : std::to_string(o.replicas),
                     o.spot_with_floor() ? fmt::format("{}x {} {} {} (2 zones)", o.instances, o.offering->cloud, o.offering->region, o.offering->instance_type)
                                         : fmt::format("{}x {} {} {}", o.instances, o.offering->cloud, offering_place(*o.offering, o.pricing),
                                                       o.offering->instance_type),
                     o.spot_with_floor() ? std::string("spot+1 on-demand") : std::string(pricing_name(o.pricing)),
                     llm ? format_number(o.level.ttft_p99_s, 3) : format_number(o.level.latency_p99_s * 1e3, 1),
                     llm ? format_number(o.level.tpot_p99_s * 1e3, 1) : format_number(o.level.latency_p50_s * 1e3, 1),
                     !o.simulated ? std::string("-")
                     : llm ? fmt::format("{:.3f} s / {:.1f} ms", o.simulated->ttft_p99_s, o.simulated->tpot_p99_s * 1e3)
                           : fmt::format("{:.1f} ms", o.simulated->latency_p99_s * 1e3),
                     fmt::format("{:.0f}%", o.level.utilization * 100), format_usd(o.usd_per_month()),
                     format_usd(usd_per_1k_inferences(o, p))});
    return table;
  }

  void add_training(size_t i) {
    const bool markdown = options_.markdown;
    const auto& tp = r_.training[i];
    const auto& t = r_.spec.training[i];
    const ModelSpec& m = r_.spec.models.at(t.model_key);
    std::string work = m.arch.kind == ModelKind::generic ? format_count(t.items) + " items" : format_count(t.tokens) + " tokens";
    std::string heading = fmt::format("training {} ({}): {}{}", t.name, m.arch.name, work,
                                      t.deadline_days ? fmt::format(", deadline {:.3g} days", *t.deadline_days) : "");
    out_ += markdown ? "## " + heading + "\n\n" : heading + "\n";
    size_t section_start = out_.size();
    Section section;
    section.heading = heading;
    if (!tp.best) {
      out_ += "  no plan: " + tp.binding + "\n\n";
      section.paragraphs = paragraphs_since(section_start);
      doc_.sections.push_back(section);
      return;
    }
    const auto& b = *tp.best;
    const auto& e = b.estimate;
    out_ += fmt::format("  best: {} x {} on {} {} {} x{} ({}): {:.1f} days, {} GPU-hours, {} per run{}\n", b.devices,
                        b.offering->accelerator, b.offering->cloud, offering_place(*b.offering, b.pricing), b.offering->instance_type, b.instances,
                        pricing_name(b.pricing), b.expected_time_s / 86400, format_number(b.expected_time_s / 3600 * b.devices, 0),
                        format_usd(b.usd),
                        t.runs_per_month > 0 ? fmt::format(" ({}/month at {:.0f} runs)", format_usd(b.usd * t.runs_per_month), t.runs_per_month) : "");
    out_ += fmt::format("  layout tp{} pp{} dp{}, ZeRO-{}, recompute {}; MFU {:.0f}%, {}-bound{}\n", e.layout.tensor_parallel,
                        e.layout.pipeline_parallel, e.layout.data_parallel, e.layout.zero_stage, recompute_name(e.layout.recompute),
                        e.mfu * 100, e.bound,
                        b.pricing == Pricing::spot
                            ? fmt::format("; checkpoint every {:.0f} min ({}), Daly's optimum {:.0f} min", b.checkpoint_interval_s / 60,
                                          std::fabs(b.checkpoint_interval_s - b.daly_interval_s) < 1 ? "Daly" : "as given",
                                          b.daly_interval_s / 60)
                            : "");
    for (const auto& w : e.warnings) out_ += "  warning: " + w + "\n";
    if (b.pricing == Pricing::spot && !local_zone(*b.offering).empty())
      out_ += "  note: " + local_zone_spot_note(*b.offering) +
              (b.instances > 1 ? "; several nodes need EFA and a cluster placement group there, which not every Local Zone offers\n" : "\n");
    section.paragraphs = paragraphs_since(section_start);
    Table table = training_frontier_table(tp.pareto);
    out_ += markdown ? "\nTime-cost frontier:\n\n" + render_markdown(table) : "  time-cost frontier:\n" + render_text(table);
    section.charts.push_back(training_chart(tp));
    section.tables.push_back(table);
    doc_.sections.push_back(section);
    out_ += "\n";
  }

  void add_batch_job(size_t i) {
    const bool markdown = options_.markdown;
    const BatchJobPlan& plan = r_.batch_jobs[i];
    const BatchJobSpec& job = r_.spec.batch_jobs[i];
    const ModelSpec& m = r_.spec.models.at(job.model_key);
    std::string heading = fmt::format("batch job {} ({} {}): {} items in {:.3g} h{}", job.name, m.arch.name,
                                      m.weight_format == WeightFormat::plain ? precision_name(m.precision) : weight_format_name(m.weight_format),
                                      format_number(job.items, 0), job.deadline_hours,
                                      job.schedule.empty() ? "" : fmt::format(", on '{}'", job.schedule));
    out_ += markdown ? "## " + heading + "\n\n" : heading + "\n";
    size_t section_start = out_.size();
    Section section;
    section.heading = heading;
    out_ += batch_job_lines(plan, job, m);
    section.paragraphs = paragraphs_since(section_start);
    if (!plan.frontier.empty()) {
      Table table = batch_frontier_table(plan, job);
      out_ += markdown ? "\nThe cheapest per accelerator:\n\n" + render_markdown(table) : "  the cheapest per accelerator:\n" + render_text(table);
      section.tables.push_back(table);
    }
    if (options_.explain) {
      out_ += "  assumptions:\n";
      for (const auto& a : plan.assumptions) out_ += "    - " + a + "\n";
    }
    doc_.sections.push_back(section);
    out_ += "\n";
  }

  void add_summary() {
    const Spec& spec = r_.spec;
    const auto& budget = spec.constraints.budget_usd_per_month;
    if (r_.unit_costs.size() > 1) {
      out_ += "Cost per unit, the largest first:";
      for (const auto& u : r_.unit_costs)
        out_ += fmt::format(" {} {} per {} ({:.0f}% of the spec's cost{});", u.name, format_usd(u.usd_per_unit), u.unit,
                            r_.unit_costs_usd_per_month > 0 ? 100 * u.usd_per_month / r_.unit_costs_usd_per_month : 0,
                            u.kind != "service" ? ", counting runs per month or one run" : "");
      out_.back() = '\n';
    }
    out_ += fmt::format("Total: {}/month", format_usd(r_.total_usd_per_month));
    if (r_.one_off_training_usd > 0) out_ += fmt::format(", plus {} for one-off training runs", format_usd(r_.one_off_training_usd));
    if (r_.one_off_batch_usd > 0) out_ += fmt::format(", plus {} for one-off batch runs", format_usd(r_.one_off_batch_usd));
    if (budget) out_ += fmt::format(" (budget {}/month{})", format_usd(*budget), r_.over_budget ? ": EXCEEDED" : "");
    out_ += "\n";
    for (const auto& skipped : spec.not_planned) out_ += "Not planned by this version: " + skipped + "\n";
    if (!r_.quotas.empty()) {
      Table q;
      q.columns = {"cloud", "region", "quota family", "needed", "have", "for"};
      q.align = {Align::left, Align::left, Align::left, Align::right, Align::right, Align::left};
      for (const auto& n : r_.quotas)
        q.add_row({n.cloud, n.region, n.family, fmt::format("{:.0f} {}", n.needed, n.unit),
                   n.have ? fmt::format("{:.0f}{}", *n.have, n.short_of_quota() ? " (short)" : "") : "not given",
                   fmt::format("{}", fmt::join(n.by, ", "))});
      out_ += (options_.markdown ? "\nQuotas the plan needs:\n\n" + render_markdown(q) : "Quotas the plan needs:\n" + render_text(q));
    }
    doc_.facts.emplace_back("total per month", format_usd(r_.total_usd_per_month));
    if (r_.one_off_training_usd > 0) doc_.facts.emplace_back("one-off training", format_usd(r_.one_off_training_usd));
    if (budget) doc_.facts.emplace_back("budget per month", format_usd(*budget) + (r_.over_budget ? " (exceeded)" : ""));
    for (const auto& p : r_.services) doc_.assumptions.insert(doc_.assumptions.end(), p.assumptions.begin(), p.assumptions.end());
    for (const auto& b : r_.batch_jobs) doc_.assumptions.insert(doc_.assumptions.end(), b.assumptions.begin(), b.assumptions.end());
    for (const auto& skipped : spec.not_planned) doc_.assumptions.push_back("not planned by this version: " + skipped);
  }

  const PlanResult& r_;
  const PlanReportOptions& options_;
  std::string out_;
  Document doc_;
};

}  // namespace

PlanReport plan_report(const PlanResult& result, const PlanReportOptions& options) {
  return PlanReportBuilder(result, options).build();
}

std::vector<std::string> plan_warnings(const PlanResult& result, bool quotas_only) {
  std::vector<std::string> lines;
  if (!quotas_only) {
    for (const auto& p : result.services)
      if (!p.feasible) lines.push_back("gpuwise: service '" + p.service + "' cannot be planned: " + p.binding);
    for (size_t i = 0; i < result.batch_jobs.size(); ++i)
      if (!result.batch_jobs[i].feasible)
        lines.push_back("gpuwise: batch job '" + result.spec.batch_jobs[i].name + "' cannot be planned: " + result.batch_jobs[i].binding);
    for (size_t i = 0; i < result.training.size(); ++i)
      if (!result.training[i].feasible)
        lines.push_back("gpuwise: training job '" + result.spec.training[i].name + "' cannot be planned: " + result.training[i].binding);
  }
  for (const auto& q : result.quotas)
    if (q.short_of_quota())
      lines.push_back(fmt::format("gpuwise: the plan needs {:.0f} {} of {} in {} {} ({}); the account has {:.0f}: request an increase "
                                  "(lead time: {})",
                                  q.needed, q.unit, q.family, q.cloud, q.region, fmt::join(q.by, ", "), *q.have, q.lead_time));
  if (!quotas_only && result.over_budget)
    lines.push_back(fmt::format("gpuwise: the plan costs {}/month, over the budget of {}/month", format_usd(result.total_usd_per_month),
                                format_usd(*result.spec.constraints.budget_usd_per_month)));
  return lines;
}

Table plan_summary_table(const PlanResult& r) {
  Table t;
  t.columns = {"kind", "name", "model", "accelerator", "tp", "replicas", "instances", "cloud", "region", "zone", "instance_type",
               "pricing", "usd_per_hour", "usd_per_month", "usd_per_run", "usd_per_1k", "per", "meets", "note"};
  auto number = [](double v) { return fmt::format("{:.6g}", v); };
  auto model_of = [&](const std::string& key) { return r.spec.models.at(key).arch.name; };
  // A workload without a plan: its name and model, and why.
  auto no_plan = [&](const char* kind, const std::string& name, const std::string& model, const std::string& why) {
    std::vector<std::string> row(t.columns.size());
    row[0] = kind, row[1] = name, row[2] = model_of(model), row[row.size() - 2] = "false", row.back() = why;
    t.add_row(std::move(row));
  };
  // A spot price from a Local Zone is that zone's; other prices are the region's.
  auto spot_zone = [](const Offering& o, Pricing pricing) { return pricing == Pricing::spot ? local_zone(o) : std::string(); };
  for (size_t i = 0; i < r.services.size(); ++i) {
    const ServicePlan& p = r.services[i];
    const ServiceSpec& s = r.spec.services[i];
    if (!p.best) {
      no_plan("service", s.name, s.model_key, p.binding);
      continue;
    }
    const PlanOption& o = *p.best;
    const bool meets = o.simulated ? o.simulated->meets : p.feasible;
    t.add_row({"service", s.name, model_of(s.model_key), o.config.accelerator->name, std::to_string(o.config.tensor_parallel),
               o.decode ? fmt::format("{}+{}", o.replicas, o.decode->replicas) : std::to_string(o.replicas), std::to_string(o.instances),
               o.offering->cloud, o.offering->region, spot_zone(*o.offering, o.pricing), o.offering->instance_type,
               o.spot_with_floor() ? "spot+on-demand floor" : std::string(pricing_name(o.pricing)), number(o.usd_per_hour),
               number(o.usd_per_month()), "", number(usd_per_1k_inferences(o, p)), "1k inferences", meets ? "true" : "false",
               o.disaggregated() ? "disaggregated prefill+decode" : ""});
  }
  for (size_t i = 0; i < r.training.size(); ++i) {
    const TrainingPlan& p = r.training[i];
    const TrainingSpec& j = r.spec.training[i];
    if (!p.best) {
      no_plan("training", j.name, j.model_key, p.binding);
      continue;
    }
    const TrainingCandidate& c = *p.best;
    t.add_row({"training", j.name, model_of(j.model_key), c.offering->accelerator, "", std::to_string(c.devices), std::to_string(c.instances),
               c.offering->cloud, c.offering->region, spot_zone(*c.offering, c.pricing), c.offering->instance_type, std::string(pricing_name(c.pricing)),
               number(c.usd_per_hour), number(c.usd * j.runs_per_month), number(c.usd), "", "run", "true",
               fmt::format("{:.3g} h a run", c.expected_time_s / 3600)});
  }
  for (size_t i = 0; i < r.batch_jobs.size(); ++i) {
    const BatchJobPlan& p = r.batch_jobs[i];
    const BatchJobSpec& j = r.spec.batch_jobs[i];
    if (!p.best) {
      no_plan("batch_job", j.name, j.model_key, p.binding);
      continue;
    }
    const BatchOption& b = *p.best;
    t.add_row({"batch_job", j.name, model_of(j.model_key), b.config.accelerator->name, std::to_string(b.config.tensor_parallel),
               std::to_string(b.replicas), std::to_string(b.nodes), b.offering->cloud, b.offering->region,
               spot_zone(*b.offering, b.pricing), b.offering->instance_type, std::string(pricing_name(b.pricing)), number(*b.offering->usd_per_hour(b.pricing) * b.nodes),
               number(p.usd_per_month), number(b.usd_per_run), number(b.usd_per_run / j.items * 1000), "1k items",
               b.simulated && b.simulated->overloaded ? "false" : "true", fmt::format("{:.3g} h a run", b.run_hours)});
  }
  return t;
}

}  // namespace gw
