// gpuwise audit FILE...: read GPU telemetry, find waste, attach dollars, recommend moves.
#include <CLI/CLI.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>

#include "audit/audit.h"
#include "audit/audit_document.h"
#include "report/progress.h"
#include "report/style.h"
#include "cli/context.h"
#include "telemetry/prometheus_client.h"
#include "core/numbers.h"
#include "core/text.h"

namespace gw {

namespace {

using nlohmann::json;

struct AuditArgs {
  std::vector<std::string> files;
  std::string telemetry_format = "auto", timestamp_unit = "auto", host, columns, metric, accelerator, group_by;
  std::string prometheus, range = "14d", selector, label_columns, offering;
  double usd_per_gpu_hour = 0;
  double min_coverage_hours = 30;
  bool allow_partial = false;
  int top = 20;
  PrometheusQueryOptions query;  // timeouts, retries and size limits of the push-down
};

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

int run_audit_command(CommandContext& context, const AuditArgs& args) {
  ReadOptions read;
  auto format = parse_telemetry_format(args.telemetry_format);
  if (!format) fail("--telemetry-format", "one of auto, nvidia-smi, dmon, dcgm, prometheus-json, long-csv");
  read.format = *format;
  auto unit = parse_timestamp_unit(args.timestamp_unit);
  if (!unit) fail("--timestamp-unit", "'" + args.timestamp_unit + "' is not one of auto, s, ms");
  read.timestamp_unit = *unit;
  read.host = args.host;
  read.long_csv.fixed_metric = args.metric;
  read.long_csv.label_columns = split_lists({args.label_columns});
  for (const auto& pair : split(args.columns, ',')) {
    if (gw::trim(pair).empty()) continue;
    auto kv = split(pair, '=');
    if (kv.size() != 2) fail("--columns", "give role=column pairs, e.g. timestamp=timestamp_anon,series=container_ip");
    std::string role(gw::trim(kv[0])), column(gw::trim(kv[1]));
    if (role == "timestamp") read.long_csv.timestamp = column;
    else if (role == "series") read.long_csv.series = column;
    else if (role == "value") read.long_csv.value = column;
    else if (role == "metric") read.long_csv.metric = column;
    else fail("--columns", "unknown role '" + role + "' (timestamp, series, metric, value)");
  }
  TelemetryAggregator aggregator;
  ReadStats stats;
  if (args.files.empty() && args.prometheus.empty()) fail("FILES", "give telemetry files or --prometheus URL");
  PrometheusStats prometheus_stats;
  if (!args.prometheus.empty()) {
    PrometheusQueryOptions query = args.query;
    query.url = args.prometheus;
    auto range = parse_duration_s(args.range);
    if (!range) fail("--range", "'" + args.range + "' is not a duration like 14d, 36h or 90m");
    query.range_s = *range;
    query.selector = args.selector;
    Progress progress("querying Prometheus", "chunks", 0, context.progress_enabled());
    query.on_progress = [&](int done, int total) {
      progress.set_total(total);
      progress.update(done);
    };
    if (auto error = audit_from_prometheus(query, aggregator, prometheus_stats)) throw InputError{*error};
    progress.finish();
    if (prometheus_stats.partial) context.note("gpuwise: warning: partial data from Prometheus: " + prometheus_stats.warnings);
    if (prometheus_stats.malformed > 0)
      context.note(fmt::format("gpuwise: warning: {} malformed series or points from Prometheus skipped", prometheus_stats.malformed));
  }
  std::vector<std::pair<std::string, ReadOptions>> read_files;
  for (const auto& entry : args.files) {
    // FILE@metric: the metric a long CSV without a metric column holds (one per file).
    std::string file = entry;
    ReadOptions per_file = read;
    size_t at = entry.rfind('@');
    if (at != std::string::npos && at > 0 && entry.find('/', at) == std::string::npos) {
      file = entry.substr(0, at);
      per_file.long_csv.fixed_metric = entry.substr(at + 1);
    }
    context.add_input(file);
    Progress progress("reading " + file, "samples", 0, context.progress_enabled());
    long long read_before = stats.samples;
    auto on_sample = [&](const TelemetrySample& s) {
      aggregator.add(s);
      if ((aggregator.samples() & 0xFFFFF) == 0) progress.update(static_cast<double>(stats.samples - read_before));
    };
    if (auto error = read_telemetry(file, per_file, on_sample, stats)) throw InputError{*error};
    progress.finish();
    read_files.emplace_back(file, per_file);
    for (const auto& warning : stats.warnings) context.note("gpuwise: warning: " + warning);
    stats.warnings.clear();
  }
  // Rows out of time order (a CSV sorted by value, shuffled, or reversed): those series are read again.
  auto reordered = restore_time_order(aggregator, read_files);
  if (!reordered.ok()) throw InputError{reordered.error()};
  if (reordered.value() > 0)
    context.note(fmt::format("gpuwise: note: {} series had rows out of time order; their times were read again in order",
                             reordered.value()));
  AuditOptions options;
  options.min_coverage_hours = args.min_coverage_hours;
  if (args.usd_per_gpu_hour > 0) options.usd_per_gpu_hour = args.usd_per_gpu_hour;
  options.accelerator = args.accelerator;
  options.offering = args.offering;
  options.group_by = args.group_by;
  auto result = run_audit(aggregator, context.catalog(), options);
  if (!result.ok()) {
    Error e = result.error();
    if (e.file.empty() && !args.files.empty() && e.field.empty()) e.file = args.files.front();
    // Say what was read and skipped: "no samples" alone does not tell what to fix.
    std::string skipped;
    for (const auto& [reason, n] : stats.skipped) skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", n, reason);
    e.message += fmt::format(" ({} lines read; {} samples; skipped: {})", stats.lines, stats.samples,
                             skipped.empty() ? "none" : skipped);
    throw InputError{e};
  }
  const AuditReport& r = result.value();
  long long skipped = 0;
  for (const auto& [reason, n] : stats.skipped) skipped += n;

  // A partial answer is said first and exits 4, so no script takes it for the whole fleet.
  const int exit_code = prometheus_stats.partial && !args.allow_partial ? 4 : 0;
  if (context.options.format == "json") {
    json partial_ranges = json::array();
    for (const auto& [from, to] : prometheus_stats.failed_ranges) partial_ranges.push_back({{"from_s", from - 3600}, {"to_s", to}});
    json series = json::array();
    for (const auto& s : r.series) {
      json labels = json::object();
      for (const auto& [k, v] : s.labels) labels[k] = v;
      series.push_back({{"id", s.id}, {"labels", labels}, {"accelerator", s.accelerator}, {"mean_util_pct", s.mean_util_pct},
                        {"idle_fraction", s.idle_fraction}, {"peak_memory_bytes", s.peak_memory_bytes},
                        {"p95_memory_bytes", s.p95_memory_bytes}, {"coverage_hours", s.coverage_hours},
                        {"gaps", s.gaps}, {"gap_hours", s.gap_hours}, {"out_of_range_samples", s.out_of_range_samples},
                        {"usd_per_month", s.usd_per_month}, {"price_source", s.price_source},
                        {"usd_per_1k_inferences", s.usd_per_1k_inferences ? json(*s.usd_per_1k_inferences) : json(nullptr)},
                        {"mean_sm_active", s.mean_sm_active ? json(*s.mean_sm_active) : json(nullptr)},
                        {"mean_power_w", s.mean_power_w ? json(*s.mean_power_w) : json(nullptr)},
                        {"host_cpu_util_pct", s.host_cpu_util_pct ? json(*s.host_cpu_util_pct) : json(nullptr)},
                        {"host_iowait_pct", s.host_iowait_pct ? json(*s.host_iowait_pct) : json(nullptr)},
                        {"host_cpus", s.host_cpus ? json(*s.host_cpus) : json(nullptr)},
                        {"hour_of_week_util_pct", s.hour_of_week_util_pct}});
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
    for (const auto& [reason, n] : stats.skipped) skipped_json[reason] = n;
    context.emit_json({{"summary", {{"recoverable_usd_per_month", r.recoverable_usd_per_month},
                                    {"fleet_usd_per_month", r.fleet_usd_per_month},
                                    {"mean_util_pct", r.mean_util_pct},
                                    {"idle_sample_fraction", r.idle_sample_fraction},
                                    {"gpus", r.gpus},
                                    {"samples", stats.samples},
                                    {"skipped_rows", skipped},
                                    {"top20_cost_share", r.top20_cost_share},
                                    {"usd_per_1k_inferences", r.usd_per_1k_inferences ? json(*r.usd_per_1k_inferences) : json(nullptr)},
                                    {"prometheus_queries", prometheus_stats.queries},
                                    {"partial", prometheus_stats.partial},
                                    {"partial_missing_fraction", prometheus_stats.missing_fraction()},
                                    {"partial_ranges", partial_ranges},
                                    {"prometheus_retries", prometheus_stats.retries},
                                    {"prometheus_splits", prometheus_stats.splits},
                                    {"prometheus_failed_chunks", prometheus_stats.failed_chunks},
                                    {"prometheus_malformed", prometheus_stats.malformed},
                                    {"underused_gpus", r.underused_gpus},
                                    {"underused_fit_on", r.underused_fit_on}}},
                       {"series", series},
                       {"findings", findings},
                       {"attribution", attribution},
                       {"skipped", skipped_json},
                       {"assumptions", r.assumptions}},
                      "audit");
    return exit_code;
  }
  if (context.options.format == "html" || context.options.format == "md") {
    Document document = audit_document(r, args.group_by, args.top);
    if (prometheus_stats.partial) {
      document.title = "PARTIAL DATA: " + document.title;
      document.facts.insert(document.facts.begin(), {"data", partial_line(prometheus_stats)});
    }
    document.sections.front().paragraphs.push_back(
        fmt::format("{} samples read from {} file{}, {} rows skipped.", format_number(static_cast<double>(stats.samples), 0),
                    args.files.size(), args.files.size() == 1 ? "" : "s", skipped));
    for (const auto& [reason, n] : stats.skipped) document.sections.front().paragraphs.push_back(fmt::format("Skipped {}: {}.", n, reason));
    context.emit_document(document);
    return exit_code;
  }
  bool colour = colour_wanted_here(!context.options.output.empty(), context.options.format);
  std::string out = prometheus_stats.partial ? paint(partial_line(prometheus_stats), Style::bold, colour) + "\n" : "";
  out += paint(fmt::format("{}/month recoverable of {}/month across {} GPUs (mean duty cycle {:.1f}%, {:.0f}% of samples idle)",
                                format_usd(r.recoverable_usd_per_month), format_usd(r.fleet_usd_per_month), r.gpus,
                                r.mean_util_pct, r.idle_sample_fraction * 100), Style::bold, colour) + "\n";
  if (r.underused_gpus > 0)
    out += fmt::format("The work of the {} under-used GPUs fits on {} at 70% busy\n", r.underused_gpus, r.underused_fit_on);
  if (r.usd_per_1k_inferences)
    out += fmt::format("{} per 1k inferences across the GPUs with request rates\n", format_usd(*r.usd_per_1k_inferences));
  out += fmt::format("{} samples read from {} file{}, {} rows skipped\n", format_number(static_cast<double>(stats.samples), 0),
                     args.files.size(), args.files.size() == 1 ? "" : "s", skipped);
  for (const auto& [reason, n] : stats.skipped) out += fmt::format("  skipped {}: {}\n", n, reason);
  std::map<std::string, std::pair<int, double>> kinds;
  for (const auto& f : r.findings) {
    kinds[f.kind].first++;
    kinds[f.kind].second += f.waste_usd_per_month;
  }
  out += "\nFindings:\n";
  for (const auto& [kind, v] : kinds) out += fmt::format("  {:<18} {:>5} series, {}/month\n", kind, v.first, format_usd(v.second));
  Table table = findings_table(r, args.top);
  out += "\n" + paint("Largest moves first:", Style::bold, colour) + "\n" + render_text(table);
  if (!r.attribution.empty()) {
    Table groups = attribution_table(r, args.group_by);
    out += fmt::format("\nCost by {} (the top 20% hold {:.0f}% of the cost):\n", args.group_by, r.top20_cost_share * 100) +
           render_text(groups);
  }
  if (context.options.explain) {
    out += "\nAssumptions:\n";
    for (const auto& a : r.assumptions) out += "  - " + a + "\n";
  }
  context.emit(out);
  return exit_code;
}

}  // namespace

void add_audit_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* audit = app.add_subcommand("audit", "Find idle, under-used and oversized GPUs in telemetry, with dollars attached");
  auto args = std::make_shared<AuditArgs>();
  audit->add_option("FILES", args->files, "nvidia-smi CSV, dmon, dcgm-exporter text, Prometheus JSON or long CSV");
  audit->add_option("--prometheus", args->prometheus, "Query a Prometheus-compatible server (aggregates pushed down as PromQL)");
  audit->add_option("--range", args->range, "How far back to query (14d, 36h, ...)");
  audit->add_option("--selector", args->selector, "Extra label matchers for the queries, e.g. namespace=\"ml\"");
  audit->add_option("--telemetry-format", args->telemetry_format, "auto, nvidia-smi, dmon, dcgm, prometheus-json, long-csv");
  audit->add_option("--host", args->host, "Host label for files without one");
  audit->add_option("--timestamp-unit", args->timestamp_unit,
                    "Units of sample timestamps in Prometheus-style text: auto (ms; s for OpenMetrics ending in '# EOF'), s, ms");
  audit->add_option("--columns", args->columns, "Long CSV column roles: timestamp=...,series=...,value=...,metric=...");
  audit->add_option("--metric", args->metric,
                    "Long CSV without a metric column: the metric it holds (gpu_util_pct, memory_used_bytes, "
                    "requests_per_s, cpu_util_pct, ...); FILE@metric sets it per file");
  audit->add_option("--label-columns", args->label_columns, "Long CSV columns to keep as labels (comma-separated)");
  audit->add_option("--usd-per-gpu-hour", args->usd_per_gpu_hour, "Price per GPU-hour (default: the catalog's)")->check(CLI::Range(0.0, 1e5));
  audit->add_option("--accelerator", args->accelerator, "The GPU model when the telemetry does not name it");
  audit->add_option("--offering", args->offering,
                    "The instance type that runs (p4de.24xlarge): prices per GPU from it (default: each series' "
                    "instance_type label, else the catalog's cheapest offering of the accelerator)");
  audit->add_option("--group-by", args->group_by, "Attribute cost to this label (namespace, team, job, pod, ...)");
  audit->add_flag("--allow-partial", args->allow_partial,
                  "Exit 0 when Prometheus answered only in part (default: exit 4, the report says what is missing)");
  audit->add_option("--min-coverage-hours", args->min_coverage_hours, "Hours of data a finding needs")->check(CLI::Range(0.0, 1e6));
  audit->add_option("--top", args->top, "Findings to show")->check(CLI::Range(1, 100000));
  audit->add_option("--prometheus-timeout", args->query.timeout_s, "Seconds to wait for one Prometheus answer")
      ->check(CLI::Range(0.1, 3600.0))->capture_default_str();
  audit->add_option("--prometheus-retries", args->query.retries, "Retries per query (exponential backoff)")
      ->check(CLI::Range(0, 10))->capture_default_str();
  audit->add_option("--max-points-per-query", args->query.max_points_per_query, "Hourly points per series in one query")
      ->check(CLI::Range(1, 11000))->capture_default_str();
  audit->add_option("--max-response-bytes", args->query.max_response_bytes,
                    "Largest Prometheus answer kept in memory (larger ones are split by time range), bytes")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 34))->capture_default_str();
  audit->callback([&context, &action, args] { action = [&context, args] { return run_audit_command(context, *args); }; });
}

}  // namespace gw
