// gpuwise audit FILE...: read GPU telemetry, find waste, attach dollars, recommend moves.
#include <CLI/CLI.hpp>

#include "audit/audit_run.h"
#include "cli/context.h"
#include "cli/prometheus_options.h"
#include "core/numbers.h"
#include "core/text.h"
#include "report/style.h"
#include "trace/request_trace.h"

namespace gw {

namespace {

struct AuditArgs {
  std::vector<std::string> files;
  AuditReadText read;  // format, timestamps, a long CSV's columns
  std::string accelerator, group_by, prometheus, range = "14d", end, selector, offering;
  double usd_per_gpu_hour = 0, host_usd_per_hour = 0;
  double min_coverage_hours = 30;
  bool allow_partial = false, print_recording_rules = false, always_on = false;
  int top = 20;
  PrometheusQueryOptions query;  // timeouts, retries and size limits of the push-down
  PrometheusCredentialArgs credentials;
};

int run_audit_command(CommandContext& context, const AuditArgs& args) {
  if (args.print_recording_rules) {
    context.emit(audit_recording_rules());
    return 0;
  }
  AuditInputs in;
  auto read = audit_read_options(args.read);
  if (!read.ok()) throw InputError{read.error()};
  in.read = read.value();
  in.files = args.files;
  if (args.files.empty() && args.prometheus.empty()) fail("FILES", "give telemetry files or --prometheus URL");
  if (!args.prometheus.empty()) {
    in.prometheus = args.query;
    in.prometheus->url = args.prometheus;
    auto range = parse_duration_s(args.range);
    if (!range) fail("--range", "'" + args.range + "' is not a duration like 14d, 36h or 90m");
    in.prometheus->range_s = *range;
    if (!args.end.empty()) {
      auto end = parse_timestamp(args.end);
      if (!end || *end <= 0) fail("--end", "'" + args.end + "' is not a time like 2026-01-01T00:00:00Z or seconds since the epoch");
      in.prometheus->end_s = *end;
    }
    in.prometheus->selector = args.selector;
    in.prometheus->credentials = prometheus_credentials(args.credentials);
  }
  for (const auto& entry : args.files) context.add_input(file_and_metric(entry).first);
  in.options.min_coverage_hours = args.min_coverage_hours;
  in.options.always_on = args.always_on;
  if (args.usd_per_gpu_hour > 0) in.options.usd_per_gpu_hour = args.usd_per_gpu_hour;
  if (args.host_usd_per_hour > 0) in.options.host_usd_per_hour = args.host_usd_per_hour;
  in.options.accelerator = args.accelerator;
  in.options.offering = args.offering;
  in.options.group_by = args.group_by;
  in.show_progress = context.progress_enabled();
  in.explain = context.options.explain;
  in.note = [&context](const std::string& line) { context.note(line); };
  auto run = audit_telemetry(context.catalog(), in);
  if (!run.ok()) throw InputError{run.error()};
  if (context.options.format == "json")
    context.emit_json(to_json(run.value()), "audit");
  else if (context.options.format == "html" || context.options.format == "md")
    context.emit_document(audit_run_document(run.value(), args.group_by, args.top));
  else
    context.emit(audit_text(run.value(), args.group_by, args.top,
                            colour_wanted_here(!context.options.output.empty(), context.options.format), context.options.explain));
  return run.value().exit_code(args.allow_partial);
}

}  // namespace

void add_audit_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* audit = app.add_subcommand("audit", "Find idle, under-used and oversized GPUs in telemetry, with dollars attached");
  auto args = std::make_shared<AuditArgs>();
  audit->add_option("FILES", args->files, "nvidia-smi CSV, dmon, dcgm-exporter text, Prometheus JSON or long CSV");
  audit->add_option("--prometheus", args->prometheus, "Query a Prometheus-compatible server (aggregates pushed down as PromQL)");
  audit->add_option("--range", args->range, "How far back to query (14d, 36h, ...)");
  audit->add_option("--end", args->end, "End of the queried range (2026-01-01T00:00:00Z or seconds since the epoch; default: now)");
  audit->add_option("--selector", args->selector, "Extra label matchers for the queries, e.g. namespace=\"ml\"");
  audit->add_option("--telemetry-format", args->read.telemetry_format, "auto, nvidia-smi, dmon, dcgm, prometheus-json, long-csv");
  audit->add_option("--host", args->read.host, "Host label for files without one");
  audit->add_option("--timestamp-unit", args->read.timestamp_unit,
                    "Units of sample timestamps in Prometheus-style text: auto (ms; s for OpenMetrics ending in '# EOF'), s, ms");
  audit->add_option("--columns", args->read.columns, "Long CSV column roles: timestamp=...,series=...,value=...,metric=...");
  audit->add_option("--metric", args->read.metric,
                    "Long CSV without a metric column: the metric it holds (gpu_util_pct, memory_used_bytes, "
                    "requests_per_s, cpu_util_pct, ...); FILE@metric sets it per file");
  audit->add_option("--label-columns", args->read.label_columns, "Long CSV columns to keep as labels (comma-separated)");
  audit->add_option("--usd-per-gpu-hour", args->usd_per_gpu_hour, "Price per GPU-hour (default: the catalog's)")->check(CLI::Range(0.0, 1e5));
  audit->add_option("--host-usd-per-hour", args->host_usd_per_hour,
                    "The host VM's price per hour (n1-standard-8 for a GCP N1 + T4), shared by the GPUs on each host")
      ->check(CLI::Range(0.0, 1e5));
  audit->add_option("--accelerator", args->accelerator, "The GPU model when the telemetry does not name it");
  audit->add_option("--offering", args->offering,
                    "The instance type that runs (p4de.24xlarge): prices per GPU from it (default: each series' "
                    "instance_type label, else the catalog's cheapest offering of the accelerator)");
  audit->add_option("--group-by", args->group_by, "Attribute cost to this label (namespace, team, job, pod, ...)");
  audit->add_flag("--allow-partial", args->allow_partial,
                  "Exit 0 when Prometheus answered only in part (default: exit 4, the report says what is missing)");
  audit->add_flag("--always-on", args->always_on,
                  "Price every GPU around the clock, also those that report only while a job runs (a VM left up between runs)");
  audit->add_option("--min-coverage-hours", args->min_coverage_hours, "Hours of data a finding needs")->check(CLI::Range(0.0, 1e6));
  audit->add_option("--top", args->top, "Findings to show")->check(CLI::Range(1, 100000));
  add_prometheus_options(*audit, args->query, args->credentials);
  audit->add_flag("--print-recording-rules", args->print_recording_rules,
                  "Write the Prometheus rule file that --use-recording-rules reads, and exit");
  audit->callback([&context, &action, args] { action = [&context, args] { return run_audit_command(context, *args); }; });
}

}  // namespace gw
