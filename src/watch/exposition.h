// The watcher's /metrics in the Prometheus text format (0.0.4), as the exporter guidelines ask:
// base units in names (seconds, bytes, ratios 0-1), money as _usd, counters ending _total,
// HELP and TYPE for every family, no timestamps, and labels bounded by the fleet (one set per
// GPU series, finding, group). Label values are escaped, so a hostile label (quotes, newlines,
// backslashes) cannot break the exposition.
#pragma once

#include <string>
#include <vector>

#include "audit/audit_run.h"

namespace gw {

// The watcher's own health, exported beside the fleet's figures.
struct WatchHealth {
  double now_s = 0;
  double last_success_s = 0;       // 0: no refresh has succeeded yet
  double last_refresh_seconds = 0;  // how long the last successful refresh took
  long long refreshes_ok = 0, refreshes_failed = 0;
  double window_s = 0;
  bool partial = false;             // the last answer was partial (some chunks missing)
  double missing_fraction = 0;      // of the GPU-hours asked for
  long long prometheus_queries = 0, prometheus_retries = 0;
  long long hours_kept = 0;         // series-hours held between refreshes
  int hours_asked = 0;              // hours the last refresh asked Prometheus for (the others were held)
};

// A label value in the text format: backslash, double quote and line feed escaped.
std::string escape_label_value(const std::string& value);

// The labels a GPU series is exported with: gpu (its id) and, where the series has them,
// hostname, namespace, pod, container, team, accelerator and instance_type.
std::vector<std::pair<std::string, std::string>> gpu_labels(const SeriesReport& series);

// One window's audit: its name ("7d", the `window` label) and whether its per-GPU families and
// findings are exported (the primary window's; the others export fleet and group figures only,
// so that a 10,000-GPU fleet is not exported four times over).
struct WindowAudit {
  std::string window;
  const AuditRun* run = nullptr;
  bool per_gpu = true;
};

// The fleet's figures from audits of one or more windows: rendered once per refresh, served at
// every scrape.
std::string fleet_exposition(const std::vector<WindowAudit>& audits, const std::string& group_by);
std::string fleet_exposition(const AuditRun& run, const std::string& window, const std::string& group_by);
// The watcher's own health, rendered at each scrape; `series` kept from the last refresh.
std::string health_exposition(const WatchHealth& health, size_t series);
// Both: the fleet's figures from the last audit (none before the first) and the watcher's health.
std::string watch_exposition(const AuditRun* run, const std::string& window, const std::string& group_by, const WatchHealth& health);

}  // namespace gw
