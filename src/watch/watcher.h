// `gpuwise watch`: the audit run continuously against the fleet's Prometheus. Every interval it
// audits the window that ends now through the push-down (hourly aggregates computed by the
// server), keeps the answer, and serves it: /metrics (exposition.h), / (the audit page,
// refreshing itself), /api/v1/findings (the audit's JSON), /healthz and /readyz. The hours
// Prometheus answered in full are kept (pushdown_store.h), so a refresh asks only for the hours
// since the last one (and those still settling), however long its windows. When
// Prometheus is down or slow it keeps serving the last values, their age exported, and retries
// with a backoff that doubles up to the interval; it holds no state on disk, so a restart rebuilds
// everything from Prometheus at its first refresh.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "audit/audit_run.h"
#include "catalog/catalog.h"
#include "telemetry/http_server.h"
#include "telemetry/pushdown_store.h"
#include "watch/exposition.h"

namespace gw {

struct WatchOptions {
  PrometheusQueryOptions query;  // url, selector, timeouts; range_s is the primary window
  AuditOptions audit;            // min_coverage_hours: the primary window's; other windows' at most half their span
  double interval_s = 300;
  double first_retry_s = 5;      // after a failed refresh; doubles up to interval_s
  std::string window_text = "24h";
  // Rolling windows audited beside the primary one at every refresh, each exported with its
  // fleet and group figures (the per-GPU ones, the findings, the page and the JSON are the
  // primary window's): name and seconds.
  std::vector<std::pair<std::string, double>> windows;
  // An hour that ended this long before a refresh is complete in Prometheus: kept, not asked again.
  double settle_s = 900;
  std::string metrics_token;     // non-empty: /metrics answers only "Authorization: Bearer <token>"
};

// `--windows` as `gpuwise watch` takes it: comma-separated durations of an hour or more (1h, 24h,
// 7d), each kept with its text for the `window` label; empty pieces skipped. The error names the
// piece at fault (field left for the caller).
Result<std::vector<std::pair<std::string, double>>> parse_watch_windows(std::string_view text);

// glibc's malloc set for a long-running watcher (one arena, large blocks mapped whole); before
// the first thread starts. Nothing elsewhere.
void use_watcher_malloc_settings();

class Watcher {
 public:
  Watcher(const Catalog& catalog, WatchOptions options);

  // One refresh now: true when Prometheus answered (fully or in part); on failure the last
  // values stay and the error is kept.
  bool refresh(double now_s);
  // When the next refresh is due: an interval after a success, a growing backoff after failures.
  double next_refresh_s() const;

  // What the server answers for a GET.
  HttpReply answer(const HttpRequest& request, double now_s) const;
  std::string metrics(double now_s) const;
  bool ready() const;
  std::string last_error() const;

 private:
  struct Snapshot {
    AuditRun run;                  // the primary window's
    PrometheusStats prometheus;    // what the refresh asked (the longest window's audit)
    std::string fleet_metrics;  // the exposition of the fleet's figures
  };

  const Catalog& catalog_;
  WatchOptions options_;
  std::mutex refresh_mutex_;        // one refresh at a time: they share the store
  pushdown::PushDownStore store_;   // the hours already answered, the longest window's
  mutable std::mutex mutex_;
  std::shared_ptr<const Snapshot> snapshot_;
  WatchHealth health_;
  std::string last_error_;
  double last_attempt_s_ = 0;
  int failures_in_a_row_ = 0;
};

// Runs the watcher until `stop` is set: refreshes on schedule while `server` (bound already)
// answers. Returns when stopped.
void run_watch(Watcher& watcher, HttpServer& server, const std::atomic<bool>& stop);

}  // namespace gw
