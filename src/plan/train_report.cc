#include "plan/train_report.h"

#include <fmt/format.h>

#include "core/numbers.h"
#include "core/text.h"
#include "perf/step_time.h"
#include "plan/training_table.h"
#include "report/json_document.h"

namespace gw {

namespace {

using nlohmann::json;

std::string gigabytes(double bytes) { return fmt::format("{:.3g} GB", bytes / 1e9); }

json candidate_json(const TrainingCandidate& c) {
  const auto& e = c.estimate;
  json layout = {{"tensor_parallel", e.layout.tensor_parallel}, {"pipeline_parallel", e.layout.pipeline_parallel},
                 {"data_parallel", e.layout.data_parallel}, {"zero_stage", e.layout.zero_stage},
                 {"recompute", std::string(recompute_name(e.layout.recompute))}, {"micro_batch", e.layout.micro_batch},
                 {"micro_batches", e.layout.micro_batches}};
  return {{"accelerator", c.offering->accelerator},
          {"count", c.devices},
          {"cloud", c.offering->cloud},
          {"region", c.offering->region},
          {"zone", c.offering->zone},
          {"instance_type", c.offering->instance_type},
          {"instances", c.instances},
          {"nodes", c.instances},
          {"pricing", std::string(pricing_name(c.pricing))},
          {"time_s", c.expected_time_s},
          {"time_without_interruptions_s", e.time_s},
          {"gpu_hours", c.expected_time_s / 3600.0 * c.devices},
          {"usd", c.usd},
          {"usd_per_hour", c.usd_per_hour},
          {"mfu", e.mfu},
          {"tokens_per_s", e.tokens_per_s},
          {"step_time_s", e.step_time_s},
          {"global_batch_tokens", e.global_batch_tokens},
          {"checkpoint_interval_s", c.checkpoint_interval_s},
          {"checkpoint_write_s", c.checkpoint_s},
          {"restart_s", c.restart_s},
          {"bound", e.bound},
          {"step", {{"compute_s", e.compute_s}, {"tensor_parallel_s", e.tp_comm_s}, {"context_parallel_s", e.cp_comm_s}, {"pipeline_sends_s", e.pp_comm_s},
                    {"bubble_s", e.bubble_s}, {"data_parallel_s", e.dp_comm_s}, {"data_parallel_exposed_s", e.dp_exposed_s},
                    {"optimizer_s", e.optimizer_s}, {"data_parallel_bytes_per_rank", e.dp_rank_bytes},
                    {"data_parallel_bytes_per_node", e.dp_node_bytes}, {"node_network_bytes_per_s", e.network_bytes_per_s}}},
          {"preemptions_per_hour", c.preemptions_per_hour},
          {"runner_up", e.runner_up},
          {"layout", layout},
          {"memory_bytes_per_device", e.memory_bytes_per_device},
          {"warnings", e.warnings}};
}

json policies_json(const TrainResult& r) {
  json policies = json::array();
  if (!r.spot) return policies;
  for (const SpotOutcome& o : r.spot->outcomes)
    policies.push_back({{"policy", std::string(spot_policy_name(o.policy))}, {"instance_type", r.spot->base.offering->instance_type},
                        {"nodes", r.spot->base.instances}, {"mean_time_s", o.mean_time_s},
                        {"p90_time_s", o.p90_time_s}, {"mean_usd", o.mean_usd}, {"p90_usd", o.p90_usd},
                        {"mean_preemptions", o.mean_preemptions}, {"deadline_met_fraction", o.deadline_met_fraction},
                        {"on_demand_share", o.on_demand_share}});
  return policies;
}

std::string spot_text(const TrainResult& r) {
  const TrainingCandidate& best = *r.plan.best;
  if (!r.spot)
    return fmt::format("No spot price for {} in {}{}: no spot comparison.\n", best.offering->instance_type,
                       best.offering->region, r.options.offering.empty() ? " nor for any run that meets the constraints" : "");
  const SpotComparison& s = *r.spot;
  std::string lines;
  for (const SpotOutcome& o : s.outcomes)
    lines += fmt::format("  {:<20} mean {:>7.1f} h (p90 {:>7.1f} h), {:>10} (p90 {:>10}), {:>5.1f} preemptions{}\n",
                         spot_policy_name(o.policy), o.mean_time_s / 3600, o.p90_time_s / 3600, format_usd(o.mean_usd),
                         format_usd(o.p90_usd), o.mean_preemptions,
                         r.deadline_s ? fmt::format(", deadline met {:.0f}%", o.deadline_met_fraction * 100) : "");
  std::string rate_text =
      s.replay ? "replaying " + r.options.spot_trace
               : fmt::format("{:.3g} per hour for the job ({} node{} x {:.3g}{})", s.on_spot.preemptions_per_hour,
                             s.base.instances, s.base.instances == 1 ? "" : "s", s.node_preemptions_per_hour,
                             r.trace_given ? ", the trace's rate per node"
                                           : r.rate_assumed ? " per node, assumed; --preemption-rate or --spot-trace" : " per node");
  return fmt::format("Spot on {} x {}{} with checkpoints every {:.0f} min (Daly; a write takes {:.0f} s, a restart {:.0f} s), "
                     "{} runs, preemptions: {}:\n",
                     s.base.instances, s.base.offering->instance_type, s.base_note, s.on_spot.checkpoint_interval_s / 60,
                     s.on_spot.checkpoint_s, s.on_spot.restart_s, r.options.runs, rate_text) +
         lines;
}

std::string summary_text(const TrainResult& r) {
  const TrainingCandidate& best = *r.plan.best;
  const auto& e = best.estimate;
  std::string out = fmt::format("{}: {} tokens on {} x {} ({} {} {}, {} node{} of {}, {}{})\n", r.arch.name,
                                format_count(r.options.tokens), best.devices, best.offering->accelerator, best.offering->cloud,
                                offering_place(*best.offering, best.pricing), best.offering->instance_type, best.instances,
                                best.instances == 1 ? "" : "s", best.offering->accelerator_count, pricing_name(best.pricing),
                                best.offering->fabric.empty() ? "" : ", " + best.offering->fabric);
  out += fmt::format("  layout tp{} pp{} dp{}, ZeRO-{}, recompute {}, micro-batch {}; {:.0f} GiB per device\n",
                     e.layout.tensor_parallel, e.layout.pipeline_parallel, e.layout.data_parallel, e.layout.zero_stage,
                     recompute_name(e.layout.recompute), e.layout.micro_batch, e.memory_bytes_per_device / (1u << 30));
  std::string mfu_note;
  if (r.options.precision == Precision::fp8) {
    const Accelerator* a = r.accelerator;
    double ratio = a ? compute_peak_tflops(*a, Precision::fp8) / compute_peak_tflops(*a, Precision::bf16) : 2.0;
    mfu_note = fmt::format(" of the bf16 peak ({:.0f}% of FP8 peak)", e.mfu / ratio * 100);
  }
  out += fmt::format("  {} tokens/s, MFU {:.0f}%{}, {}-bound; step {:.2f} s (compute {:.2f}, tp {:.2f}, pp sends {:.2f}, "
                     "bubble {:.2f}, exposed dp {:.2f} of {:.2f}, optimizer {:.2f})\n",
                     format_number(e.tokens_per_s, 0), e.mfu * 100, mfu_note, e.bound, e.step_time_s, e.compute_s, e.tp_comm_s,
                     e.pp_comm_s, e.bubble_s, e.dp_exposed_s, e.dp_comm_s, e.optimizer_s);
  out += fmt::format("  time {:.1f} days ({:.0f} h), {} GPU-hours, {} per run{}\n", best.expected_time_s / 86400,
                     best.expected_time_s / 3600, format_number(best.expected_time_s / 3600 * best.devices, 0),
                     format_usd(best.usd),
                     r.deadline_s ? fmt::format("; deadline {:.0f} days {}", r.options.deadline_days, r.plan.feasible ? "met" : "MISSED") : "");
  for (const auto& w : e.warnings) out += "  warning: " + w + "\n";
  if (r.plan.pareto.size() > 1) {
    Table table = training_frontier_table(r.plan.pareto);
    out += "Time-cost frontier:\n" + render_text(table);
  }
  return out;
}

std::string assumptions_text(const TrainResult& r) {
  const TrainingCandidate& best = *r.plan.best;
  const auto& e = best.estimate;
  const Accelerator* accelerator = r.accelerator;
  std::string out = "Assumptions:\n";
  out += "  - work per token: 6 x parameters FLOPs (forward and backward) plus attention; MFU counts no recomputation\n";
  if (accelerator) {
    auto peak = accelerator->peak(r.options.precision);
    out += fmt::format("  - {} {} dense peak {} TFLOP/s, {:.0f} GiB, interconnect {} {}: {} ({})\n", accelerator->name,
                       precision_name(r.options.precision), peak ? format_number(*peak, 0) : "-", accelerator->memory_gib,
                       accelerator->interconnect,
                       accelerator->interconnect_gb_per_s ? format_number(*accelerator->interconnect_gb_per_s, 0) + " GB/s" : "",
                       accelerator->source, accelerator->as_of);
    out += fmt::format("  - large training GEMMs reach {:.0f}% of that peak at this width{}\n", r.gemm_efficiency.value_or(0) * 100,
                       r.calibrated ? " (calibrated)" : " (Megatron-LM's measurements; bench/training_measurements.csv)");
  }
  const double sequence = static_cast<double>(r.options.sequence_length);
  out += fmt::format("  - global batch: {} tokens per step ({:.0f} sequences of {}){}\n", format_number(e.global_batch_tokens, 0),
                     e.global_batch_tokens / sequence, r.options.sequence_length,
                     r.options.global_batch_tokens > 0
                         ? (e.global_batch_tokens < r.options.global_batch_tokens - 0.5
                                ? fmt::format(", {:.1f}% under the {} asked for: the data-parallel ranks x micro-batch divide it",
                                              (1 - e.global_batch_tokens / r.options.global_batch_tokens) * 100,
                                              format_number(r.options.global_batch_tokens, 0))
                                : ", as asked")
                         : fmt::format(", the critical batch for this run's compute ({}); --global-batch-tokens to set it",
                                       kCriticalBatchSource));
  if (!r.plan.choice.empty()) out += "  - choice: " + r.plan.choice + "\n";
  if (best.pricing == Pricing::spot && !local_zone(*best.offering).empty())
    out += "  - " + local_zone_spot_note(*best.offering) +
           (best.instances > 1 ? "; a run over several nodes needs EFA and a cluster placement group there, which not every "
                                 "Local Zone offers: check before launching\n"
                               : "\n");
  out += "  - step = compute + tensor-parallel collectives + pipeline sends + pipeline bubble + exposed data-parallel traffic "
         "+ optimizer step\n";
  out += fmt::format("  - data parallel: {} per rank per step (ZeRO-{}{}){}\n", gigabytes(e.dp_rank_bytes), e.layout.zero_stage,
                     e.layout.zero_stage >= 3 ? fmt::format(", gathered and reduced in each of {} micro-batches", e.layout.micro_batches) : "",
                     e.dp_node_bytes > 0
                         ? fmt::format("; {} through each node's NICs (every tensor- and pipeline-parallel shard of the node "
                                       "runs its own ring) at {}/s usable ({:.0f}% of {:.0f} Gbps{}{}): {:.2f} s, {:.2f} s of "
                                       "it not hidden behind the backward pass",
                                       gigabytes(e.dp_node_bytes), gigabytes(e.network_bytes_per_s),
                                       e.network_bytes_per_s * 8 / 1e9 / best.offering->network_gbps.value_or(100) * 100,
                                       best.offering->network_gbps.value_or(100),
                                       best.offering->fabric.empty() ? " TCP" : " " + best.offering->fabric,
                                       best.offering->network_gbps ? "" : ", network unknown: 100 Gbps assumed",
                                       e.dp_comm_s, e.dp_exposed_s)
                         : " inside one node over NVLink");
  out += "  - NVLink collectives: latency + bytes at the bus bandwidth NCCL reaches, fitted to measured all-reduce times "
         "(A100: 50 us, 55% of the link; H100: 30 us, 78%; Vidur 7d47513 profiles)\n";
  if (!e.runner_up.empty()) out += "  - runner-up layout: " + e.runner_up + "\n";
  if (best.instances > 1)
    out += fmt::format("  - spot: a synchronous job stops when any of its {} nodes is preempted (nodes x the per-node rate); "
                       "a restart adds {:.0f} s of job start per doubling of nodes (assumed)\n",
                       best.instances, r.start_s_per_doubling);
  if (r.plan.skipped_no_fabric > 0)
    out += fmt::format("  - {} multi-node candidates skipped: their instances share no EFA/InfiniBand-class fabric "
                       "(--allow-tcp-clusters to include them)\n", r.plan.skipped_no_fabric);
  out += "  - spot: preemptions as a Poisson process (or the replayed trace); checkpoints every interval (Young/Daly's "
         "optimum by default), each preemption loses the work since the last one plus the restart\n";
  out += fmt::format("  - price: {} ({})\n", best.offering->source, best.offering->as_of);
  return out;
}

Document train_document(const TrainResult& r, const std::string& text) {
  const TrainingCandidate& best = *r.plan.best;
  Document doc;
  doc.kind = "train";
  doc.title = fmt::format("Training {} on {} tokens", r.arch.name, format_count(r.options.tokens));
  doc.facts = {{"best", fmt::format("{} x {} ({})", best.devices, best.offering->accelerator, pricing_name(best.pricing))},
               {"time per run", fmt::format("{:.1f} days", best.expected_time_s / 86400)},
               {"cost per run", format_usd(best.usd)},
               {"MFU", fmt::format("{:.0f}%", best.estimate.mfu * 100)}};
  Section section;
  section.heading = "The run";
  for (auto& line : split(text, '\n'))
    if (!gw::trim(line).empty() && line.find("  - ") != 0 && line != "Assumptions:") section.paragraphs.emplace_back(gw::trim(line));
  json completion = json::array();  // each Monte Carlo run's hours, by policy
  if (r.spot)
    for (const SpotOutcome& o : r.spot->outcomes)
      for (double t : o.times_s) completion.push_back({{"policy", std::string(spot_policy_name(o.policy))}, {"hours", t / 3600}});
  if (!completion.empty())
    section.charts.push_back({"Completion time of each simulated run, by spot policy",
                              {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
                               {"width", 560},
                               {"height", 90},
                               {"data", {{"values", completion}}},
                               {"mark", {{"type", "bar"}, {"tooltip", true}}},
                               {"encoding", {{"x", {{"field", "hours"}, {"type", "quantitative"}, {"bin", {{"maxbins", 40}}}, {"title", "hours"}}},
                                             {"y", {{"aggregate", "count"}, {"type", "quantitative"}, {"title", "runs"}}},
                                             {"row", {{"field", "policy"}, {"type", "nominal"}, {"title", nullptr}}}}},
                               {"resolve", {{"scale", {{"y", "independent"}}}}}}});
  section.tables.push_back(training_frontier_table(r.plan.pareto));
  doc.sections.push_back(section);
  return doc;
}

}  // namespace

nlohmann::json to_json(const TrainResult& r) {
  const TrainingPlan& plan = r.plan;
  json document = candidate_json(*plan.best);
  json pareto = json::array();
  for (const auto& c : plan.pareto) pareto.push_back(candidate_json(c));
  document["model"] = r.arch.name;
  document["tokens"] = r.options.tokens;
  document["deadline_s"] = r.deadline_s ? json(*r.deadline_s) : json(nullptr);
  document["meets_deadline"] = plan.feasible;
  document["pareto"] = pareto;
  document["spot_policies"] = policies_json(r);
  document["candidates_evaluated"] = plan.candidates;
  document["candidates_skipped_no_fabric"] = plan.skipped_no_fabric;
  document["choice"] = plan.choice;
  return json_document("train", document);
}

TrainReport train_report(const TrainResult& result, bool explain) {
  TrainReport report;
  report.text = summary_text(result) + spot_text(result);
  if (explain) report.text += assumptions_text(result);
  report.document = train_document(result, report.text);
  return report;
}

}  // namespace gw
