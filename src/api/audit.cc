#include "gpuwise/audit.h"

#include <algorithm>

#include "api/handles.h"
#include "audit/audit_run.h"
#include "core/numbers.h"

namespace gpuwise {

Answer audit(const Catalog& catalog, const AuditQuery& query) {
  gw::AuditInputs in;
  in.read = gw::value_or_throw(gw::audit_read_options(
      {query.telemetry_format, query.timestamp_unit, query.host, query.columns, query.metric, query.label_columns}));
  in.files = query.files;
  if (query.files.empty() && query.prometheus_url.empty())
    throw Error("", 0, "FILES", "give telemetry files or --prometheus URL");
  if (!query.prometheus_url.empty()) {
    in.prometheus.emplace();
    in.prometheus->url = query.prometheus_url;
    auto range = gw::parse_duration_s(query.range);
    if (!range) throw Error("", 0, "--range", "'" + query.range + "' is not a duration like 14d, 36h or 90m");
    in.prometheus->range_s = *range;
    in.prometheus->selector = query.selector;
    if (query.prometheus_timeout_s) in.prometheus->timeout_s = *query.prometheus_timeout_s;
    if (query.prometheus_retries) in.prometheus->retries = *query.prometheus_retries;
    if (query.max_points_per_query) in.prometheus->max_points_per_query = *query.max_points_per_query;
    if (query.prometheus_concurrency) in.prometheus->concurrency = std::clamp(*query.prometheus_concurrency, 1, 64);
    in.prometheus->use_recording_rules = query.use_recording_rules;
  }
  in.options.min_coverage_hours = query.min_coverage_hours;
  if (query.usd_per_gpu_hour && *query.usd_per_gpu_hour > 0) in.options.usd_per_gpu_hour = query.usd_per_gpu_hour;
  if (query.host_usd_per_hour && *query.host_usd_per_hour > 0) in.options.host_usd_per_hour = query.host_usd_per_hour;
  in.options.always_on = query.always_on;
  in.options.accelerator = query.accelerator;
  in.options.offering = query.offering;
  in.options.group_by = query.group_by;
  auto warnings = std::make_shared<std::vector<std::string>>();
  in.note = [warnings, &query](const std::string& line) {
    warnings->push_back(line);
    if (query.on_warning) query.on_warning(line);
  };
  auto held = catalog.impl();  // the run points into it
  auto run = std::make_shared<const gw::AuditRun>(gw::value_or_throw(gw::audit_telemetry(held->catalog, in)));
  Answer::Impl a;
  a.command = "audit";
  a.body = gw::to_json(*run);
  a.exit_code = run->exit_code(query.allow_partial);
  a.warnings = std::move(*warnings);
  std::string group_by = query.group_by;
  int top = query.top;
  a.text = [held, run, group_by, top](bool explain) { return gw::audit_text(*run, group_by, top, false, explain); };
  a.markdown = [held, run, group_by, top](bool) { return gw::render_markdown(gw::audit_run_document(*run, group_by, top)); };
  a.document = [held, run, group_by, top] { return gw::audit_run_document(*run, group_by, top); };
  return Answer(std::make_shared<const Answer::Impl>(std::move(a)));
}

std::string recording_rules() { return gw::audit_recording_rules(); }

}  // namespace gpuwise
