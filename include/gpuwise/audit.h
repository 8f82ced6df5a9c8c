// gpuwise::audit: GPU telemetry (nvidia-smi CSV, dmon, dcgm-exporter text, Prometheus JSON, long
// CSV, or a Prometheus server queried with the aggregates pushed down) run through the audit's
// rules: idle and under-used GPUs, oversized VRAM, starved pipelines, with dollars and moves,
// and cost attributed by a label. The question `gpuwise audit FILE... | --prometheus URL` answers.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpuwise/answer.h"
#include "gpuwise/catalog.h"

namespace gpuwise {

struct AuditQuery {
  std::vector<std::string> files;     // telemetry files; "FILE@metric" names a long CSV's metric
  std::string telemetry_format = "auto";  // auto, nvidia-smi, dmon, dcgm, prometheus-json, long-csv
  std::string timestamp_unit = "auto";    // auto, s, ms (Prometheus-style text)
  std::string host;                   // for files without one
  std::string columns;                // long CSV roles: "timestamp=...,series=...,value=...,metric=..."
  std::string metric;                 // a long CSV's metric when it has no metric column
  std::string label_columns;          // long CSV columns kept as labels, comma-separated
  std::string prometheus_url;         // query this server instead of (or beside) files
  std::string range = "14d";          // how far back to query
  std::string selector;               // extra label matchers, e.g. namespace="ml"
  std::optional<double> prometheus_timeout_s;   // per answer (30)
  std::optional<int> prometheus_retries;        // per query (3)
  std::optional<int> max_points_per_query;      // hourly points per series in one query (10,000)
  std::optional<int> prometheus_concurrency;    // queries in flight at once (4)
  bool use_recording_rules = false;   // fresh and idle minutes from gpuwise's recorded idle flag
  std::optional<double> usd_per_gpu_hour;       // default: the catalog's
  std::optional<double> host_usd_per_hour;      // the host VM's price, shared by the GPUs on each host
  bool always_on = false;             // price GPUs that report only while a job runs around the clock
  std::string accelerator;            // when the telemetry does not name the GPU model
  std::string offering;               // the instance type that runs, for its price per GPU
  std::string group_by;               // attribute cost to this label (namespace, team, ...)
  double min_coverage_hours = 30;     // hours of data a finding needs
  int top = 20;                       // findings in the text and report
  bool allow_partial = false;         // a partial Prometheus answer exits 0 rather than 4
  // Called with each warning as it arises (a skipped row's reason, a failed chunk); may be empty.
  std::function<void(const std::string&)> on_warning;
};

// Throws gpuwise::Error naming the file, line and field of unreadable telemetry, or when no
// sample was read. Seconds per GB of files; a Prometheus audit as long as its queries take.
Answer audit(const Catalog& catalog, const AuditQuery& query);

// The Prometheus rule file use_recording_rules reads (`gpuwise audit --print-recording-rules`).
std::string recording_rules();

}  // namespace gpuwise
