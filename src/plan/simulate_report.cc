#include "plan/simulate_report.h"

#include <fmt/format.h>

#include "core/money.h"
#include "report/json_document.h"
#include "report/table.h"

namespace gw {

namespace {

using nlohmann::json;

json summary_json(const LogHistogram& h) {
  return {{"mean", h.mean()}, {"p50", h.quantile(0.5)}, {"p90", h.quantile(0.9)}, {"p99", h.quantile(0.99)},
          {"p999", h.quantile(0.999)}, {"max", h.max()}, {"count", h.count()}};
}

std::string verdict_text(const SimResult& r) {
  std::string end = fmt::format("{} requests in the system at the last arrival, drained {:.0f} s later", r.backlog_at_last_arrival,
                                r.drain_s);
  if (r.overloaded && r.timed_out_share > 0.01 && r.backlog_growth <= 0.05)
    return fmt::format("OVERLOADED: clients gave up on {:.1f}% of the arrivals over the last quarter of the arrivals, which "
                       "holds the queue at the timeout's length; {} (this deployment does not keep up with this traffic)",
                       r.timed_out_share * 100, end);
  if (r.overloaded && r.backlog_growth > 0.05)
    return fmt::format("OVERLOADED: requests in the system grew by {:.0f}% of arrivals over the last quarter of the arrivals; {} "
                       "(this deployment does not keep up with this traffic)",
                       r.backlog_growth * 100, end);
  if (r.overloaded)
    return fmt::format("OVERLOADED earlier in the run and never caught up: {} (this deployment does not keep up with this traffic)", end);
  if (r.too_short)
    return fmt::format("undetermined: the run is too short to judge (requests in the system changed by {:+.1f}% of arrivals over "
                       "the last quarter of the arrivals, which begins under three times the mean time in service, while the "
                       "replicas are still filling); {}; run longer (--duration, --requests)",
                       r.backlog_growth * 100, end);
  return fmt::format("stable: requests in the system changed by {:+.1f}% of arrivals over the last quarter of the arrivals; {}",
                     r.backlog_growth * 100, end);
}

// Latency CDFs from the simulator's histograms (end to end, and TTFT/TPOT for LLMs): 1% steps,
// finer in the tail where SLOs live.
Chart latency_cdf(const SimResult& r, bool llm) {
  json values = json::array();
  std::vector<double> qs;
  for (int i = 1; i < 100; ++i) qs.push_back(i / 100.0);
  for (double q : {0.995, 0.999}) qs.push_back(q);
  auto add = [&](const char* metric, const LogHistogram& h) {
    if (h.count() == 0) return;
    for (double q : qs) values.push_back({{"metric", metric}, {"latency_s", h.quantile(q)}, {"fraction", q}});
  };
  add("latency", r.latency);
  if (llm) {
    add("ttft", r.ttft);
    add("tpot", r.tpot);
  }
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"width", 560},
               {"height", 280},
               {"data", {{"values", values}}},
               {"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"tooltip", true}}},
               {"encoding", {{"x", {{"field", "latency_s"}, {"type", "quantitative"}, {"title", "seconds"}, {"scale", {{"type", "log"}}}}},
                             {"y", {{"field", "fraction"}, {"type", "quantitative"}, {"title", "fraction of requests"}, {"axis", {{"format", "%"}}}}},
                             {"color", {{"field", "metric"}, {"type", "nominal"}, {"title", nullptr}}}}}};
  return {"Latency CDF", spec};
}

// Requests waiting and in flight over the run.
Chart queue_over_time(const SimResult& r) {
  json values = json::array();
  for (const auto& t : r.timeseries) {
    values.push_back({{"time_s", t.time_s}, {"count", t.queue_depth}, {"what", "waiting"}});
    values.push_back({{"time_s", t.time_s}, {"count", t.in_flight}, {"what", "in flight"}});
  }
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"width", 560},
               {"height", 220},
               {"data", {{"values", values}}},
               {"mark", {{"type", "line"}, {"tooltip", true}}},
               {"encoding", {{"x", {{"field", "time_s"}, {"type", "quantitative"}, {"title", "seconds"}}},
                             {"y", {{"field", "count"}, {"type", "quantitative"}, {"title", "requests"}}},
                             {"color", {{"field", "what"}, {"type", "nominal"}, {"title", nullptr}}}}}};
  return {"Requests waiting and in flight", spec};
}

json replica_json(const ReplicaStats& s) {
  json sizes = json::object();
  for (size_t b = 0; b < s.batch_sizes.size(); ++b)
    if (s.batch_sizes[b] > 0) sizes[std::to_string(b)] = s.batch_sizes[b];
  json replica = {{"name", s.name}, {"requests", s.requests}, {"steps", s.steps},
                  {"busy_fraction", s.busy_fraction}, {"preemptions", s.preemptions},
                  {"mean_batch", s.mean_batch}, {"batch_size_distribution", sizes}};
  if (s.kv_blocks > 0) {
    replica["kv_capacity_blocks"] = s.kv_blocks;
    replica["kv_block_tokens"] = s.block_tokens;
    replica["kv_capacity_tokens"] = s.kv_blocks / std::max(1, s.kv_groups) * s.block_tokens;  // of every layer
    if (s.kv_groups > 1) replica["kv_layer_groups"] = s.kv_groups;  // a block is one group's
    replica["mean_kv_used_fraction"] = s.mean_kv_used_fraction;
    replica["recomputed_tokens"] = s.recomputed_tokens;
    replica["swapped_tokens"] = s.swapped_tokens;
  }
  if (s.pipeline_lanes > 1) replica["stage_wait_fraction"] = s.stage_wait_fraction;
  return replica;
}

json service_json(const ServiceRun& run, uint64_t seed) {
  const SimResult& r = run.result;
  json replica_list = json::array();
  for (const auto& s : r.replicas) replica_list.push_back(replica_json(s));
  json series = json::array();
  for (const auto& t : r.timeseries)
    series.push_back({{"time_s", t.time_s}, {"queue_depth", t.queue_depth}, {"in_flight", t.in_flight},
                      {"kv_used_fraction", t.kv_used_fraction}});
  json j = {{"name", run.name},
            {"deployment", deployment_text(run.deployment)},
            {"deployment_from", run.origin},
            {"arrivals", run.arrivals},
            {"rate_rps", run.rate_rps},
            {"seed", seed},
            {"requests", r.requests},
            {"admitted", r.admitted},
            {"stopped_at_request_limit", r.stopped_at_request_limit},
            {"rejected", r.rejected},
            {"timed_out", r.timed_out},
            {"client_timeout_s", run.client_timeout_s > 0 ? json(run.client_timeout_s) : json(nullptr)},
            {"verdict", r.overloaded ? "overloaded" : r.too_short ? "undetermined" : "stable"},
            {"backlog_growth", r.backlog_growth},
            {"backlog_at_last_arrival", r.backlog_at_last_arrival},
            {"drain_s", r.drain_s},
            {"recomputed_tokens", r.recomputed_tokens},
            {"swapped_tokens", r.swapped_tokens},
            {"duration_s", r.duration_s},
            {"throughput_rps", r.throughput_rps},
            {"goodput_rps", r.goodput_rps},
            {"slo_attainment", run.slo_given ? json(r.slo_attainment) : json(nullptr)},
            {"slo_met", run.slo_given ? json(run.meets) : json(nullptr)},
            {"mean_in_system", r.mean_in_system},
            {"preemptions", r.preemptions},
            {"latency_s", summary_json(r.latency)},
            {"wait_s", summary_json(r.wait)},
            {"replicas", replica_list},
            {"timeseries", series}};
  j["usd_per_hour"] = run.usd_per_hour ? json(*run.usd_per_hour) : json(nullptr);
  j["usd_per_month"] = run.usd_per_hour ? json(*run.usd_per_hour * kHoursPerMonth) : json(nullptr);
  j["usd_per_1k_inferences"] =
      run.usd_per_hour && r.throughput_rps > 0 ? json(*run.usd_per_hour / (r.throughput_rps * 3600) * 1000) : json(nullptr);
  j["priced_on"] = run.priced_on;
  if (run.llm) {
    j["ttft_s"] = summary_json(r.ttft);
    j["tpot_s"] = summary_json(r.tpot);
  }
  j["kv_transfer"] = r.kv_transfers > 0 ? json{{"transfers", r.kv_transfers},
                                                 {"bytes", r.kv_transfer_bytes},
                                                 {"wait_s", summary_json(r.kv_transfer_wait)},
                                                 {"pull_stall_s", r.kv_pull_stall_s}}
                                          : json(nullptr);
  const PrefixCacheResult& p = r.prefix_cache;
  j["prefix_cache"] = p.on ? json{{"hit_ratio_tokens", p.hit_ratio_tokens},
                                  {"hit_ratio_requests", p.hit_ratio_requests},
                                  {"saved_prefill_tokens", p.saved_prefill_tokens},
                                  {"lookups", p.lookups},
                                  {"evictions", p.evictions}}
                           : json(nullptr);
  if (run.step_error) {
    json parts = json::object();
    for (const auto& [name, share] : run.step_error->mean_contribution) parts[name] = share;
    j["step_error"] = {{"sampled_steps", run.step_error->steps}, {"mean", run.step_error->mean_error},
                       {"p99", run.step_error->p99_error}, {"dominant", run.step_error->dominant},
                       {"mean_contribution", parts}, {"unmeasured_share", run.step_error->mean_unmeasured_share}};
  }
  return j;
}

void add_service(const SimulateResult& result, const ServiceRun& run, bool explain, SimulateReport& report) {
  const SimResult& r = run.result;
  std::string& text = report.text;
  const std::string slo_text =
      run.slo_given ? fmt::format("goodput {:.3g}/s, SLO attainment {:.2f}%{}", r.goodput_rps, r.slo_attainment * 100,
                                  run.meets ? "" : " (misses)")
                    : std::string("no SLO given");
  // What was simulated, said: a cut trace or a synthetic count is never silent.
  std::string scope = r.stopped_at_request_limit
                          ? fmt::format(", stopped after {} arrivals ({}),", r.admitted,
                                        result.requests_given ? "--requests" : "a synthetic process has no end; --requests sets the count")
                          : (run.arrivals == "trace" ? ", the whole trace," : "");
  std::vector<std::string> lines = {
      fmt::format("{} requests{} ({} arrivals at {:.3g}/s, seed {}), {:.1f} s simulated: throughput {:.3g}/s, {}{}",
                  r.requests, scope, run.arrivals, run.rate_rps, result.seed, r.duration_s, r.throughput_rps, slo_text,
                  r.rejected ? fmt::format(", {} rejected (longer than the KV cache can ever hold)", r.rejected) : "")
          + (r.timed_out ? fmt::format(", {} timed out (not started within the clients' {:.4g} s; latencies below are of the "
                                       "requests served)", r.timed_out, run.client_timeout_s)
                         : ""),
      verdict_text(r)};
  if (!run.engine.empty()) {
    lines.push_back("engine: " + run.engine);
    if (r.preemptions > 0)
      lines.push_back(fmt::format("{} preemptions: {} KV tokens recomputed, {} swapped to host", r.preemptions,
                                  r.recomputed_tokens, r.swapped_tokens));
    if (r.kv_transfers > 0)
      lines.push_back(fmt::format("disaggregated: {} prompts' KV sent to decode replicas ({:.3g} GB), {:.1f} ms from prefill end to "
                                  "the decode replica on average, p99 {:.1f} ms",
                                  r.kv_transfers, r.kv_transfer_bytes / 1e9, r.kv_transfer_wait.mean() * 1e3,
                                  r.kv_transfer_wait.quantile(0.99) * 1e3) +
                      (r.kv_pull_stall_s > 0 ? fmt::format("; decode replicas stopped {:.1f} s to pull it", r.kv_pull_stall_s) : ""));
    if (const PrefixCacheResult& p = r.prefix_cache; p.on)
      lines.push_back(fmt::format("prefix cache: {:.1f}% of prompt tokens found cached ({:.1f}% of admissions hit), "
                                  "{:.4g} prefill tokens not computed, {} cache entries evicted (blocks, or runs of them)",
                                  p.hit_ratio_tokens * 100, p.hit_ratio_requests * 100, p.saved_prefill_tokens, p.evictions));
  }
  text += fmt::format("{}: {} ({})\n", run.name, deployment_text(run.deployment), run.origin);
  for (const auto& l : lines) text += "  " + l + "\n";
  Table table;
  table.columns = {"metric", "mean", "p50", "p90", "p99", "p99.9"};
  table.align = {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right};
  auto row = [&](const char* name, const LogHistogram& h, double scale, int decimals) {
    table.add_row({name, format_number(h.mean() * scale, decimals), format_number(h.quantile(0.5) * scale, decimals),
                   format_number(h.quantile(0.9) * scale, decimals), format_number(h.quantile(0.99) * scale, decimals),
                   format_number(h.quantile(0.999) * scale, decimals)});
  };
  row("latency_ms", r.latency, 1e3, 1);
  row("wait_ms", r.wait, 1e3, 1);
  if (run.llm) {
    row("ttft_ms", r.ttft, 1e3, 1);
    row("tpot_ms", r.tpot, 1e3, 2);
  }
  text += render_text(table);
  Section section;
  section.heading = fmt::format("{}: {} ({})", run.name, deployment_text(run.deployment), run.origin);
  for (const auto& l : lines) section.paragraphs.push_back(l + ".");
  section.charts.push_back(latency_cdf(r, run.llm));
  section.charts.push_back(queue_over_time(r));
  section.tables.push_back(table);
  Table replicas_table;
  replicas_table.columns = {"replica", "requests", "busy (time in steps)", "steps", "mean batch", "KV used (mean)", "preemptions"};
  replicas_table.align = {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right};
  for (const auto& s : r.replicas) {
    // Busy is GPU time in steps (what nvidia-smi's utilization reads); a continuous batcher
    // with one sequence decoding is "busy", so the mean batch and KV use say how full it is.
    std::string kv = s.kv_blocks > 0 ? fmt::format("{:.0f}%", s.mean_kv_used_fraction * 100) : "-";
    text += fmt::format("  replica {}: {} requests, {:.0f}% of the time in steps{}, {} steps of {:.1f} on average{}{}\n", s.name,
                        s.requests, s.busy_fraction * 100,
                        s.pipeline_lanes > 1 && s.busy_s > 0
                            ? fmt::format(" ({:.0f}% of it waiting for a stage another lane held)", 100 * s.stage_wait_fraction)
                            : "",
                        s.steps, s.mean_batch, s.kv_blocks > 0 ? ", KV cache " + kv + " used on average" : "",
                        s.preemptions ? fmt::format(", {} preemptions", s.preemptions) : "");
    replicas_table.add_row({s.name, format_number(static_cast<double>(s.requests), 0), fmt::format("{:.0f}%", s.busy_fraction * 100),
                            format_number(static_cast<double>(s.steps), 0), fmt::format("{:.1f}", s.mean_batch), kv,
                            std::to_string(s.preemptions)});
  }
  section.tables.push_back(replicas_table);
  if (explain) {
    text += "  assumptions:\n";
    for (const auto& a : run.assumptions) text += "    - " + a + "\n";
  }
  report.document.assumptions.insert(report.document.assumptions.end(), run.assumptions.begin(), run.assumptions.end());
  report.document.sections.push_back(section);
  text += "\n";
}

}  // namespace

nlohmann::json to_json(const SimulateResult& result) {
  json services = json::array();
  for (const auto& run : result.services) services.push_back(service_json(run, result.seed));
  return json_document("simulate", {{"spec", result.spec_path}, {"services", services}});
}

SimulateReport simulate_report(const SimulateResult& result, bool explain) {
  SimulateReport report;
  report.document.kind = "simulate";
  report.document.title = "Simulation: " + result.spec_path;
  for (const auto& run : result.services) add_service(result, run, explain, report);
  return report;
}

}  // namespace gw
