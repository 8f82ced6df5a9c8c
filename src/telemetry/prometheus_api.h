// The HTTP side of the Prometheus push-down: one query against /api/v1/query or
// /api/v1/query_range, retried with exponential backoff on connection errors, timeouts, 5xx and
// bodies cut short, its answer parsed (simdjson) into series of [time, value] points, and a
// range split in halves while the server or we find the answer too large.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "telemetry/http_client.h"
#include "telemetry/prometheus_client.h"

namespace gw {

struct PrometheusUrl {
  std::string scheme_host_port;
  std::string base_path;
};

std::optional<PrometheusUrl> split_prometheus_url(const std::string& url);

// Why a query failed: too large for the server or for us (split the range and ask again),
// refused (a bad query: stop), or unavailable after retries (down, slow, 5xx, truncated).
enum class QueryFailure { none, too_large, refused, unavailable };

// One series of an answer: its string-valued labels and its points with finite values.
struct AnswerSeries {
  std::vector<std::pair<std::string, std::string>> metric;
  std::vector<std::pair<double, double>> points;  // time in seconds, value
};

struct QueryResult {
  QueryFailure failure = QueryFailure::none;
  std::string message;
  std::vector<AnswerSeries> series;
  double from = 0, to = 0;  // the evaluation times a range query covered
};

// Frees what the answers' parser holds (it keeps room for the largest answer it has read).
void release_parser_memory();

// One query with retries. Malformed series and points are counted in stats and skipped; warnings
// (Thanos and Mimir say so when some stores did not answer) make the stats partial.
QueryResult prometheus_query(HttpClient& client, const PrometheusUrl& url, const char* endpoint,
                             const HttpParams& params, const PrometheusQueryOptions& o, PrometheusStats& stats);

// A range query over [from, to] at `step`, halved while the answer is too large; the results in
// time order.
void prometheus_range_query(HttpClient& client, const PrometheusUrl& url, const std::string& promql, double from,
                            double to, double step, const PrometheusQueryOptions& o, PrometheusStats& stats,
                            std::vector<QueryResult>& out);

// How many series a selector matches over a time range, from the index alone (/api/v1/series),
// into `count`; a failure says why not (the message in `message`).
QueryFailure prometheus_series_count(HttpClient& client, const PrometheusUrl& url, const std::string& selector,
                                     double from, double to, const PrometheusQueryOptions& o, PrometheusStats& stats,
                                     size_t& count, std::string& message);

// Prometheus 2.x includes both ends of a range window; 3.x and most of its kin leave out the start.
// Servers that do not say their version (Thanos, Mimir, VictoriaMetrics) are taken as left-open.
bool closes_range_windows(HttpClient& client, const PrometheusUrl& url);

}  // namespace gw
