#include "plan/batch_report.h"

#include <fmt/format.h>

#include "core/formatting.h"

namespace gw {

namespace {

using nlohmann::json;

std::string layout_words(const BatchOption& o) {
  return fmt::format("{} x {} {} {} ({}): {} replica{} of {}x {} (tp{}, {} batching, max {})", o.nodes, o.offering->cloud,
                     offering_place(*o.offering, o.pricing), o.offering->instance_type, pricing_name(o.pricing), o.replicas, o.replicas == 1 ? "" : "s",
                     o.config.tensor_parallel, o.config.accelerator->name, o.config.tensor_parallel, batching_name(o.config.batching),
                     o.config.max_batch);
}

double tokens_per_item(const BatchJobSpec& job, bool llm) {
  return llm ? job.input_tokens.mean() + job.output_tokens.mean() : 0;
}

}  // namespace

std::string batch_job_lines(const BatchJobPlan& plan, const BatchJobSpec& job, const ModelSpec& model) {
  if (!plan.best) return "  no plan: " + plan.binding + "\n";
  const BatchOption& b = *plan.best;
  const bool llm = model.arch.kind == ModelKind::decoder;
  const double items_per_s = b.items_per_s_per_replica * b.replicas * (1 - b.spot_loss_share);
  std::string out = fmt::format("  best: {}; {:.2f} h a run ({:.0f} s to start), {} items/s\n", layout_words(b), b.run_hours, b.startup_s,
                                format_number(items_per_s, items_per_s >= 100 ? 0 : 2));
  if (b.simulated)
    out += fmt::format("  simulated ({} items at the {:.3g}/s the deadline needs): {}; GPUs in steps {:.0f}% of the time\n",
                       b.simulated->requests, job.items / (job.deadline_hours * 3600 - b.startup_s),
                       b.simulated->overloaded ? "fell behind" : "kept up", b.simulated->duty_cycle * 100);
  const double tokens = tokens_per_item(job, llm);
  // Per 1M items where a thousand cost under a tenth of a cent.
  const double per_1k = b.usd_per_run / job.items * 1000;
  out += fmt::format("  cost: {} per run{}, {}{}\n", format_usd(b.usd_per_run),
                     job.runs_per_month > 0 ? fmt::format(", {}/month at {:.3g} runs", format_usd(plan.usd_per_month), job.runs_per_month)
                                            : std::string(" (one run)"),
                     per_1k < 0.001 ? format_usd(per_1k * 1000) + " per 1M items" : format_usd(per_1k) + " per 1k items",
                     tokens > 0 ? fmt::format(", {} per 1M tokens", format_usd(b.usd_per_run / (job.items * tokens) * 1e6)) : "");
  return out;
}

Table batch_frontier_table(const BatchJobPlan& plan, const BatchJobSpec& job) {
  Table t;
  t.columns = {"accelerator", "tp", "replicas", "offering", "pricing", "hours_per_run", "usd_per_run", "usd_per_1k_items"};
  t.align = {Align::left, Align::right, Align::right, Align::left, Align::left, Align::right, Align::right, Align::right};
  for (const BatchOption& o : plan.frontier)
    t.add_row({o.config.accelerator->name, std::to_string(o.config.tensor_parallel), std::to_string(o.replicas),
               fmt::format("{}x {} {} {}", o.nodes, o.offering->cloud, offering_place(*o.offering, o.pricing), o.offering->instance_type),
               std::string(pricing_name(o.pricing)), format_number(o.run_hours, 2), format_usd(o.usd_per_run),
               format_usd(o.usd_per_run / job.items * 1000)});
  return t;
}

json batch_job_json(const BatchJobPlan& plan, const BatchJobSpec& job, const ModelSpec& model) {
  const bool llm = model.arch.kind == ModelKind::decoder;
  auto option_json = [&](const BatchOption& o) {
    json j = {{"accelerator", o.config.accelerator->name},
              {"tensor_parallel", o.config.tensor_parallel},
              {"batching", batching_name(o.config.batching)},
              {"max_batch", o.config.max_batch},
              {"replicas", o.replicas},
              {"instances", o.nodes},
              {"cloud", o.offering->cloud},
              {"region", o.offering->region},
              {"instance_type", o.offering->instance_type},
              {"pricing", pricing_name(o.pricing)},
              {"items_per_s_per_replica", o.items_per_s_per_replica},
              {"startup_s", o.startup_s},
              {"spot_loss_share", o.spot_loss_share},
              {"hours_per_run", o.run_hours},
              {"usd_per_run", o.usd_per_run},
              {"usd_per_1k_items", o.usd_per_run / job.items * 1000}};
    const double tokens = tokens_per_item(job, llm);
    j["usd_per_million_tokens"] = tokens > 0 ? json(o.usd_per_run / (job.items * tokens) * 1e6) : json(nullptr);
    j["simulated"] = o.simulated ? json{{"items", o.simulated->requests}, {"kept_up", !o.simulated->overloaded},
                                        {"duty_cycle", o.simulated->duty_cycle}}
                                 : json(nullptr);
    return j;
  };
  json frontier = json::array();
  for (const auto& o : plan.frontier) frontier.push_back(option_json(o));
  return {{"name", job.name},
          {"model", job.model_key},
          {"items", job.items},
          {"deadline_hours", job.deadline_hours},
          {"schedule", job.schedule},
          {"runs_per_month", job.runs_per_month},
          {"interruptible", job.interruptible},
          {"feasible", plan.feasible},
          {"binding", plan.binding},
          {"best", plan.best ? option_json(*plan.best) : json(nullptr)},
          {"usd_per_month", plan.usd_per_month},
          {"frontier", frontier},
          {"assumptions", plan.assumptions}};
}

}  // namespace gw
