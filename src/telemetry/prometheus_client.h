// Audits a fleet kept in Prometheus (or Thanos, Mimir, VictoriaMetrics) without pulling raw
// samples: PromQL aggregates each series hour by hour on the server (avg, count, fresh and idle
// minutes, memory max and p95 over the hour), the range is cut into chunks sized by the series
// count and sent a few at a time, and failures are retried with backoff. Raw samples are read
// only where hourly sums cannot say enough: short-lived series, the hours a series goes stale or
// comes back, irregular series, hours holding impossible values.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "telemetry/aggregate.h"
#include "telemetry/http_client.h"

namespace gw {

namespace pushdown {
class PushDownStore;
}

struct PrometheusQueryOptions {
  std::string url;               // http://host:9090
  HttpCredentials credentials;   // bearer token or basic auth, CA bundle (from files or the environment)
  double range_s = 14 * 86400;   // up to now (or end_s)
  double end_s = 0;              // 0: now
  std::string selector;          // extra label matchers, e.g. namespace="ml"
  int max_points_per_query = 10000;
  int retries = 3;
  double backoff_s = 0.2;        // before the first retry; doubles each time
  double timeout_s = 30;
  int concurrency = 4;           // queries in flight at once
  // Fresh and idle minutes from the recorded idle flag (telemetry/recording_rules.h) where the
  // server has it, by subqueries for the hours it does not.
  bool use_recording_rules = false;
  size_t max_response_bytes = 256u << 20;  // a larger answer is split by time range
  // Hourly answers kept between calls (gpuwise watch): complete hours are not asked again, and
  // a window ending where the store was last filled asks nothing. Null: a store of the call's own.
  pushdown::PushDownStore* store = nullptr;
  std::function<void(int chunks_done, int chunks_total)> on_progress;
};

struct PrometheusStats {
  int queries = 0;
  int retries = 0;
  int splits = 0;                // ranges halved because the answer was too large
  int failed_chunks = 0;         // chunks still unavailable after retries
  long long malformed = 0;       // series or points that were not [time, "value"]
  long long over_series_limit = 0;  // series refused by --max-series
  bool partial = false;          // some chunk failed after retries, or the server said so
  std::string warnings;
  std::vector<std::pair<double, double>> failed_ranges;  // [from, to] evaluation times, seconds since the epoch
  // With use_recording_rules: hours whose fresh and idle minutes the recorded flag gave, and
  // hours asked by subqueries (before the rule existed, or the hour it started in).
  int hours_by_rule = 0, hours_by_subquery = 0;
  // Hours whose fresh and idle minutes subqueries counted in 1-minute and in 5-minute steps.
  int hours_by_minute_step = 0, hours_by_five_minute_step = 0;
  int hours_asked = 0;           // of the window's hours, those asked of the server (the rest a store held)
  double queried_s = 0, failed_s = 0;  // query-seconds asked for and lost: the share of GPU-hours missing
  double missing_fraction() const { return queried_s > 0 ? failed_s / queried_s : 0; }
  // Wall seconds spent on each kind of query (an aggregate, a kind of raw read), summed over its
  // requests (which overlap when sent concurrently), in the order first asked.
  std::vector<std::pair<std::string, double>> seconds_by_query;
  void add_seconds(const std::string& what, double seconds);
};

// Adds each series' hourly summaries to the aggregator.
std::optional<Error> audit_from_prometheus(const PrometheusQueryOptions& options, TelemetryAggregator& aggregator,
                                           PrometheusStats& stats);

// Durations like 14d, 36h, 90m, 3600s (or plain seconds).
std::optional<double> parse_duration_s(std::string_view text);

}  // namespace gw
