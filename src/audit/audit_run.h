// The audit question (`gpuwise audit FILE... | --prometheus URL`): telemetry read from files (or
// aggregated by Prometheus itself), run through the audit's rules, with what was read, skipped
// and, for a partial Prometheus answer, missing.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "catalog/catalog.h"
#include "report/document.h"
#include "telemetry/prometheus_client.h"
#include "telemetry/readers.h"

namespace gw {

struct AuditInputs {
  // Telemetry files; "FILE@metric" names the metric a long CSV without a metric column holds.
  std::vector<std::string> files;
  ReadOptions read;
  std::optional<PrometheusQueryOptions> prometheus;  // the push-down, with its URL and range
  AuditOptions options;
  bool show_progress = false;                        // progress bars on stderr
  bool explain = false;                              // notes say the time each kind of Prometheus query took
  // Warnings and notes as they arise ("gpuwise: warning: ..."); none when empty.
  std::function<void(const std::string&)> note;
};

struct AuditRun {
  AuditReport report;
  ReadStats stats;
  PrometheusStats prometheus;
  size_t files = 0;
  long long skipped_rows = 0;
  // A partial Prometheus answer exits 4 (unless allowed), so no script takes it for the fleet.
  int exit_code(bool allow_partial) const { return prometheus.partial && !allow_partial ? 4 : 0; }
};

// How telemetry files are read, as `gpuwise audit`'s options spell it. An Error names the option
// ("--columns") for a value it cannot take.
struct AuditReadText {
  std::string telemetry_format = "auto", timestamp_unit = "auto", host, columns, metric, label_columns;
};
Result<ReadOptions> audit_read_options(const AuditReadText& text);

// A file path and the metric named after '@', if any ("a.csv@gpu_util_pct").
std::pair<std::string, std::string> file_and_metric(const std::string& entry);

// An Error naming the file, line and field for unreadable telemetry, or "no samples" with what
// was read and skipped. Points into `catalog`.
Result<AuditRun> audit_telemetry(const Catalog& catalog, const AuditInputs& inputs);

// The writers: JSON (schemas/audit.schema.json), the text (largest moves first) and the report
// document (Markdown, HTML).
nlohmann::json to_json(const AuditRun& run);
// The Prometheus rule file PrometheusQueryOptions::use_recording_rules reads.
std::string audit_recording_rules();
std::string audit_text(const AuditRun& run, const std::string& group_by, int top, bool colour, bool explain);
Document audit_run_document(const AuditRun& run, const std::string& group_by, int top);

}  // namespace gw
