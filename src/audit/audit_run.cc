#include "audit/audit_run.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <map>

#include "audit/audit_document.h"
#include "core/cancel.h"
#include "core/numbers.h"
#include "core/text.h"
#include "report/json_document.h"
#include "report/progress.h"
#include "telemetry/recording_rules.h"
#include "report/style.h"
#include "report/table.h"

namespace gw {

namespace {

using nlohmann::json;

// What a partial Prometheus answer lacks, for the first line of every report.
std::string partial_line(const PrometheusStats& stats) {
  if (stats.failed_ranges.empty())
    return "PARTIAL: the server said its answer is incomplete: " + stats.warnings.substr(0, 300);
  std::string ranges;
  for (size_t i = 0; i < stats.failed_ranges.size() && i < 5; ++i) {
    auto [from, to] = stats.failed_ranges[i];  // evaluation times: each covers the hour before it
    ranges += fmt::format("{}{:%Y-%m-%d %H:%M} to {:%Y-%m-%d %H:%M}", i ? ", " : "",
                          fmt::gmtime(static_cast<std::time_t>(from - 3600)), fmt::gmtime(static_cast<std::time_t>(to)));
  }
  if (stats.failed_ranges.size() > 5) ranges += fmt::format(" and {} more", stats.failed_ranges.size() - 5);
  return fmt::format("PARTIAL: Prometheus did not answer for {} UTC; {:.1f}% of the GPU-hours asked for are missing "
                     "and the figures below undercount them",
                     ranges, stats.missing_fraction() * 100);
}

void note(const AuditInputs& in, const std::string& line) {
  if (in.note) in.note(line);
}

std::optional<Error> read_prometheus(const AuditInputs& in, TelemetryAggregator& aggregator, AuditRun& run) {
  PrometheusQueryOptions query = *in.prometheus;
  Progress progress("querying Prometheus", "chunks", 0, in.show_progress);
  query.on_progress = [&](int done, int total) {
    progress.set_total(total);
    progress.update(done);
  };
  if (auto error = audit_from_prometheus(query, aggregator, run.prometheus)) return error;
  progress.finish();
  if (in.explain) {
    std::string times;
    for (const auto& [what, seconds] : run.prometheus.seconds_by_query) times += fmt::format("{}{} {:.2f} s", times.empty() ? "" : ", ", what, seconds);
    note(in, fmt::format("gpuwise: Prometheus: {} queries; seconds per kind (summed over concurrent requests): {}", run.prometheus.queries, times));
    const PrometheusStats& p = run.prometheus;
    if (p.hours_by_five_minute_step > 0)
      note(in, fmt::format("gpuwise: fresh and idle minutes of {} hours counted in 5-minute steps (no series scraped more often "
                           "than every 4.5 minutes in the window: each sample stands for one step), {} in 1-minute steps",
                           p.hours_by_five_minute_step, p.hours_by_minute_step));
  }
  if (query.use_recording_rules) {
    const PrometheusStats& p = run.prometheus;
    if (p.hours_by_rule == 0)
      note(in, fmt::format("gpuwise: warning: no {} samples in the range: fresh and idle minutes asked by subqueries "
                           "(gpuwise audit --print-recording-rules writes the rule file)", kIdleRuleName));
    else if (in.explain)
      note(in, fmt::format("gpuwise: recording rule {}: fresh and idle minutes of {} hours; {} hours by subqueries (before the rule, "
                           "or the hour it started in)", kIdleRuleName, p.hours_by_rule, p.hours_by_subquery));
  }
  if (run.prometheus.partial) note(in, "gpuwise: warning: partial data from Prometheus: " + run.prometheus.warnings);
  if (run.prometheus.malformed > 0)
    note(in, fmt::format("gpuwise: warning: {} malformed series or points from Prometheus skipped", run.prometheus.malformed));
  return std::nullopt;
}

std::optional<Error> read_files(const AuditInputs& in, TelemetryAggregator& aggregator, AuditRun& run) {
  ReadStats& stats = run.stats;
  std::vector<std::pair<std::string, ReadOptions>> read_files;
  for (const auto& entry : in.files) {
    auto [file, metric] = file_and_metric(entry);
    ReadOptions per_file = in.read;
    if (!metric.empty()) per_file.long_csv.fixed_metric = metric;
    Progress progress("reading " + file, "samples", 0, in.show_progress);
    long long read_before = stats.samples;
    struct Interrupted {};
    auto on_sample = [&](const TelemetrySample& s) {
      aggregator.add(s);
      if ((aggregator.samples() & 0xFFFF) == 0) {
        if (cancel_requested()) throw Interrupted{};  // the caller gave up; the reader has nothing to undo
        if ((aggregator.samples() & 0xFFFFF) == 0) progress.update(static_cast<double>(stats.samples - read_before));
      }
    };
    try {
      if (auto error = read_telemetry(file, per_file, on_sample, stats)) return error;
    } catch (const Interrupted&) {
      return Error{file, 0, "", "interrupted"};
    }
    progress.finish();
    read_files.emplace_back(file, per_file);
    for (const auto& warning : stats.warnings) note(in, "gpuwise: warning: " + warning);
    stats.warnings.clear();
  }
  // Rows out of time order (a CSV sorted by value, shuffled, or reversed): those series are read again.
  auto reordered = restore_time_order(aggregator, read_files);
  if (!reordered.ok()) return reordered.error();
  if (reordered.value() > 0)
    note(in, fmt::format("gpuwise: note: {} series had rows out of time order; their times were read again in order", reordered.value()));
  return std::nullopt;
}

}  // namespace

Result<ReadOptions> audit_read_options(const AuditReadText& text) {
  ReadOptions read;
  auto format = parse_telemetry_format(text.telemetry_format);
  if (!format) return Error{"", 0, "--telemetry-format", "one of auto, nvidia-smi, dmon, dcgm, prometheus-json, long-csv"};
  read.format = *format;
  auto unit = parse_timestamp_unit(text.timestamp_unit);
  if (!unit) return Error{"", 0, "--timestamp-unit", "'" + text.timestamp_unit + "' is not one of auto, s, ms"};
  read.timestamp_unit = *unit;
  read.host = text.host;
  read.long_csv.fixed_metric = text.metric;
  read.long_csv.label_columns = split_lists({text.label_columns});
  for (const auto& pair : split(text.columns, ',')) {
    if (gw::trim(pair).empty()) continue;
    auto kv = split(pair, '=');
    if (kv.size() != 2)
      return Error{"", 0, "--columns", "give role=column pairs, e.g. timestamp=timestamp_anon,series=container_ip"};
    std::string role(gw::trim(kv[0])), column(gw::trim(kv[1]));
    if (role == "timestamp") read.long_csv.timestamp = column;
    else if (role == "series") read.long_csv.series = column;
    else if (role == "value") read.long_csv.value = column;
    else if (role == "metric") read.long_csv.metric = column;
    else return Error{"", 0, "--columns", "unknown role '" + role + "' (timestamp, series, metric, value)"};
  }
  return read;
}

std::pair<std::string, std::string> file_and_metric(const std::string& entry) {
  size_t at = entry.rfind('@');
  if (at != std::string::npos && at > 0 && entry.find('/', at) == std::string::npos) return {entry.substr(0, at), entry.substr(at + 1)};
  return {entry, ""};
}

Result<AuditRun> audit_telemetry(const Catalog& catalog, const AuditInputs& in) {
  TelemetryAggregator aggregator;
  AuditRun run;
  run.files = in.files.size();
  if (in.prometheus)
    if (auto error = read_prometheus(in, aggregator, run)) return *error;
  if (auto error = read_files(in, aggregator, run)) return *error;
  auto result = run_audit(aggregator, catalog, in.options);
  if (!result.ok()) {
    Error e = result.error();
    if (e.file.empty() && !in.files.empty() && e.field.empty()) e.file = in.files.front();
    // Say what was read and skipped: "no samples" alone does not tell what to fix.
    std::string skipped;
    for (const auto& [reason, n] : run.stats.skipped) skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", n, reason);
    e.message += fmt::format(" ({} lines read; {} samples; skipped: {})", run.stats.lines, run.stats.samples,
                             skipped.empty() ? "none" : skipped);
    return e;
  }
  run.report = std::move(result.value());
  for (const auto& [reason, n] : run.stats.skipped) run.skipped_rows += n;
  return run;
}

nlohmann::json to_json(const AuditRun& run) {
  const AuditReport& r = run.report;
  json partial_ranges = json::array();
  for (const auto& [from, to] : run.prometheus.failed_ranges) partial_ranges.push_back({{"from_s", from - 3600}, {"to_s", to}});
  // Each series' object built member by member and moved into place: a nested initializer list
  // copies every member once more (a tenth of a 2,860-series audit's time).
  json series = json::array();
  series.get_ref<json::array_t&>().reserve(r.series.size());
  auto optional = [](const auto& value) { return value ? json(*value) : json(nullptr); };
  for (const auto& s : r.series) {
    json labels = json::object();
    for (const auto& [k, v] : s.labels) labels[k] = v;
    json o = json::object();
    o["id"] = s.id;
    o["labels"] = std::move(labels);
    o["accelerator"] = s.accelerator;
    o["mean_util_pct"] = s.util_measured ? json(s.mean_util_pct) : json(nullptr);
    o["billed_share"] = s.billed_share;
    o["idle_fraction"] = s.idle_fraction;
    o["peak_memory_bytes"] = s.peak_memory_bytes;
    o["p95_memory_bytes"] = s.p95_memory_bytes;
    o["coverage_hours"] = s.coverage_hours;
    o["gaps"] = s.gaps;
    o["gap_hours"] = s.gap_hours;
    o["out_of_range_samples"] = s.out_of_range_samples;
    o["usd_per_month"] = s.usd_per_month;
    o["price_source"] = s.price_source;
    o["usd_per_1k_inferences"] = optional(s.usd_per_1k_inferences);
    o["mean_sm_active"] = optional(s.mean_sm_active);
    o["mean_power_w"] = optional(s.mean_power_w);
    o["host_cpu_util_pct"] = optional(s.host_cpu_util_pct);
    o["host_iowait_pct"] = optional(s.host_iowait_pct);
    o["host_cpus"] = optional(s.host_cpus);
    o["hour_of_week_util_pct"] = s.hour_of_week_util_pct;
    series.push_back(std::move(o));
  }
  json findings = json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"kind", f.kind}, {"scope", f.scope}, {"evidence", f.evidence},
                        {"waste_usd_per_month", f.waste_usd_per_month}, {"recommendation", f.recommendation},
                        {"confidence", f.confidence}});
  json attribution = json::array();
  for (const auto& a : r.attribution)
    attribution.push_back({{"group", a.group}, {"usd_per_month", a.usd_per_month}, {"gpus", a.gpus},
                           {"mean_util_pct", a.mean_util_pct}});
  json skipped_json = json::object();
  for (const auto& [reason, n] : run.stats.skipped) skipped_json[reason] = n;
  return json_document("audit", {{"summary", {{"recoverable_usd_per_month", r.recoverable_usd_per_month},
                                  {"fleet_usd_per_month", r.fleet_usd_per_month},
                                  {"mean_util_pct", r.mean_util_pct},
                                  {"idle_sample_fraction", r.idle_sample_fraction},
                                  {"gpus", r.gpus},
                                  {"samples", run.stats.samples},
                                  {"skipped_rows", run.skipped_rows},
                                  {"top20_cost_share", r.top20_cost_share},
                                  {"usd_per_1k_inferences", r.usd_per_1k_inferences ? json(*r.usd_per_1k_inferences) : json(nullptr)},
                                  {"prometheus_queries", run.prometheus.queries},
                                  {"partial", run.prometheus.partial},
                                  {"partial_missing_fraction", run.prometheus.missing_fraction()},
                                  {"partial_ranges", std::move(partial_ranges)},
                                  {"prometheus_retries", run.prometheus.retries},
                                  {"prometheus_splits", run.prometheus.splits},
                                  {"prometheus_failed_chunks", run.prometheus.failed_chunks},
                                  {"prometheus_malformed", run.prometheus.malformed},
                                  {"underused_gpus", r.underused_gpus},
                                  {"underused_fit_on", r.underused_fit_on}}},
                     {"series", std::move(series)},
                     {"findings", std::move(findings)},
                     {"attribution", std::move(attribution)},
                     {"skipped", std::move(skipped_json)},
                     {"assumptions", r.assumptions}});
}

Document audit_run_document(const AuditRun& run, const std::string& group_by, int top) {
  Document document = audit_document(run.report, group_by, top);
  if (run.prometheus.partial) {
    document.title = "PARTIAL DATA: " + document.title;
    document.facts.insert(document.facts.begin(), {"data", partial_line(run.prometheus)});
  }
  document.sections.front().paragraphs.push_back(
      fmt::format("{} samples read from {} file{}, {} rows skipped.", format_number(static_cast<double>(run.stats.samples), 0),
                  run.files, run.files == 1 ? "" : "s", run.skipped_rows));
  for (const auto& [reason, n] : run.stats.skipped) document.sections.front().paragraphs.push_back(fmt::format("Skipped {}: {}.", n, reason));
  return document;
}

std::string audit_text(const AuditRun& run, const std::string& group_by, int top, bool colour, bool explain) {
  const AuditReport& r = run.report;
  std::string out = run.prometheus.partial ? paint(partial_line(run.prometheus), Style::bold, colour) + "\n" : "";
  out += paint(fmt::format("{}/month recoverable of {}/month across {} GPUs (mean duty cycle {:.1f}%, {:.0f}% of samples idle)",
                                format_usd(r.recoverable_usd_per_month), format_usd(r.fleet_usd_per_month), r.gpus,
                                r.mean_util_pct, r.idle_sample_fraction * 100), Style::bold, colour) + "\n";
  if (r.underused_gpus > 0)
    out += fmt::format("The work of the {} under-used GPUs fits on {} at 70% busy\n", r.underused_gpus, r.underused_fit_on);
  if (r.usd_per_1k_inferences)
    out += fmt::format("{} per 1k inferences across the GPUs with request rates\n", format_usd(*r.usd_per_1k_inferences));
  out += fmt::format("{} samples read from {} file{}, {} rows skipped\n", format_number(static_cast<double>(run.stats.samples), 0),
                     run.files, run.files == 1 ? "" : "s", run.skipped_rows);
  for (const auto& [reason, n] : run.stats.skipped) out += fmt::format("  skipped {}: {}\n", n, reason);
  std::map<std::string, std::pair<int, double>> kinds;
  for (const auto& f : r.findings) {
    kinds[f.kind].first++;
    kinds[f.kind].second += f.waste_usd_per_month;
  }
  out += "\nFindings:\n";
  for (const auto& [kind, v] : kinds) out += fmt::format("  {:<18} {:>5} series, {}/month\n", kind, v.first, format_usd(v.second));
  Table table = findings_table(r, top);
  out += "\n" + paint("Largest moves first:", Style::bold, colour) + "\n" + render_text(table);
  if (!r.attribution.empty()) {
    Table groups = attribution_table(r, group_by);
    out += fmt::format("\nCost by {} (the top 20% hold {:.0f}% of the cost):\n", group_by, r.top20_cost_share * 100) +
           render_text(groups);
  }
  if (explain) {
    out += "\nAssumptions:\n";
    for (const auto& a : r.assumptions) out += "  - " + a + "\n";
  }
  return out;
}

std::string audit_recording_rules() { return recording_rules_yaml(); }

}  // namespace gw
