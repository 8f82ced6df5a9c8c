#include "telemetry/prometheus_api.h"

#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <simdjson.h>
#include <mutex>
#include <thread>

#include "core/cancel.h"
#include "core/numbers.h"

namespace gw {

std::optional<PrometheusUrl> split_prometheus_url(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return std::nullopt;
  size_t path = url.find('/', scheme + 3);
  PrometheusUrl u;
  u.scheme_host_port = path == std::string::npos ? url : url.substr(0, path);
  u.base_path = path == std::string::npos ? "" : url.substr(path);
  while (!u.base_path.empty() && u.base_path.back() == '/') u.base_path.pop_back();
  return u;
}

namespace {

// Prometheus and its kin refuse ranges with too many points or samples; the message says so.
bool says_too_large(const std::string& text) {
  for (const char* phrase : {"exceeded maximum resolution", "too many samples", "would load too many", "limit exceeded",
                             "too many points", "exceeds the limit", "max_samples"})
    if (text.find(phrase) != std::string::npos) return true;
  return false;
}

// What an answer said, before its data is looked at.
struct Envelope {
  bool json_object = false;
  bool success = false;
  std::string error;
  simdjson::dom::element data;
  bool has_data = false;
};

Envelope read_envelope(const simdjson::dom::element& doc, PrometheusStats& stats) {
  Envelope e;
  if (!doc.is_object()) return e;
  e.json_object = true;
  std::string_view text;
  if (doc["status"].get_string().get(text) == simdjson::SUCCESS) e.success = text == "success";
  if (doc["error"].get_string().get(text) == simdjson::SUCCESS) e.error = std::string(text);
  e.has_data = doc["data"].get(e.data) == simdjson::SUCCESS;
  simdjson::dom::array warnings;
  if (e.success && doc["warnings"].get_array().get(warnings) == simdjson::SUCCESS && warnings.size() > 0) {
    stats.partial = true;
    for (simdjson::dom::element w : warnings)
      if (w.get_string().get(text) == simdjson::SUCCESS) stats.warnings += std::string(text) + "; ";
  }
  return e;
}

// A matrix's series: [time, "value"] points; what is not that shape is counted and skipped.
std::vector<AnswerSeries> read_matrix(const simdjson::dom::array& result, long long& malformed) {
  std::vector<AnswerSeries> out;
  out.reserve(result.size());
  for (simdjson::dom::element series : result) {
    simdjson::dom::object metric;
    simdjson::dom::array values;
    if (series["metric"].get_object().get(metric) != simdjson::SUCCESS ||
        series["values"].get_array().get(values) != simdjson::SUCCESS) {
      ++malformed;
      continue;
    }
    AnswerSeries s;
    for (simdjson::dom::key_value_pair label : metric) {
      std::string_view value;
      if (label.value.get_string().get(value) == simdjson::SUCCESS) s.metric.emplace_back(std::string(label.key), std::string(value));
    }
    s.points.reserve(values.size());
    for (simdjson::dom::element point : values) {
      simdjson::dom::array pair;
      double time_s = 0;
      std::string_view text;
      if (point.get_array().get(pair) != simdjson::SUCCESS || pair.size() != 2 ||
          pair.at(0).get_double().get(time_s) != simdjson::SUCCESS || pair.at(1).get_string().get(text) != simdjson::SUCCESS) {
        ++malformed;
        continue;
      }
      if (auto value = parse_finite_double(text)) s.points.emplace_back(time_s, *value);  // NaN and Inf: no measurement
    }
    out.push_back(std::move(s));
  }
  return out;
}

// One parser for every thread, taken in turn: a DOM parser holds ~14 bytes per byte of the
// largest answer it has read (a 5 MB chunk of 10,000 series: 70 MB), and parsing is a few
// milliseconds of the seconds a query waits on the server.
simdjson::dom::parser& shared_parser() {
  static simdjson::dom::parser parser;
  return parser;
}
std::mutex& shared_parser_mutex() {
  static std::mutex mutex;
  return mutex;
}

// One request with retries; `take` reads a successful answer's data (false: the data is not
// the shape asked for, and the answer is retried as if cut short).
template <typename Take>
QueryFailure request(HttpClient& client, const std::string& path, const HttpParams& params,
                     const PrometheusQueryOptions& o, PrometheusStats& stats, std::string& message, Take&& take) {
  simdjson::dom::parser& parser = shared_parser();
  std::string last_error;
  for (int attempt = 0; attempt <= o.retries; ++attempt) {
    if (cancel_requested()) {  // the caller gave up: no more queries
      message = "interrupted";
      return QueryFailure::refused;
    }
    if (attempt > 0) {
      ++stats.retries;
      std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(o.backoff_s * 1000) * (1 << (attempt - 1))));
    }
    ++stats.queries;
    HttpAnswer f = client.get(path, params, o.max_response_bytes);
    if (f.over_limit) {
      message = fmt::format("a response over {} MiB", o.max_response_bytes >> 20);
      return QueryFailure::too_large;
    }
    if (!f.reached) {
      last_error = fmt::format("cannot reach Prometheus ({})", f.error);
      continue;
    }
    if (f.status >= 500 && !says_too_large(f.body)) {
      last_error = fmt::format("HTTP {} from Prometheus", f.status);
      continue;
    }
    std::lock_guard<std::mutex> parsing(shared_parser_mutex());  // until the answer is read
    simdjson::dom::element doc;
    Envelope envelope;
    if (parser.parse(f.body).get(doc) == simdjson::SUCCESS) envelope = read_envelope(doc, stats);
    if (!envelope.json_object) {
      if (f.status >= 400) {  // a proxy's error page, not Prometheus's JSON
        message = fmt::format("HTTP {}: {}", f.status, f.body.substr(0, 200));
        return says_too_large(f.body) ? QueryFailure::too_large : QueryFailure::refused;
      }
      last_error = fmt::format("HTTP {}: the response is not JSON (truncated?)", f.status);
      continue;
    }
    if (f.status >= 400 || !envelope.success) {
      message = fmt::format("Prometheus refused the query (HTTP {}): {}", f.status,
                            envelope.error.empty() ? f.body.substr(0, 200) : envelope.error);
      return says_too_large(envelope.error) ? QueryFailure::too_large : QueryFailure::refused;
    }
    if (!envelope.has_data || !take(envelope.data)) {
      last_error = "the response has no data in the shape asked for";
      continue;
    }
    return QueryFailure::none;
  }
  message = last_error + fmt::format(" after {} tries", o.retries + 1);
  return QueryFailure::unavailable;
}

}  // namespace

void release_parser_memory() {
  std::lock_guard<std::mutex> lock(shared_parser_mutex());
  shared_parser() = simdjson::dom::parser{};
}

std::optional<double> parse_duration_s(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  double unit = 1;
  char last = text.back();
  if (last == 'd') unit = 86400;
  else if (last == 'h') unit = 3600;
  else if (last == 'm') unit = 60;
  else if (last == 's') unit = 1;
  if (last == 'd' || last == 'h' || last == 'm' || last == 's') text.remove_suffix(1);
  auto value = parse_finite_double(text);
  if (!value || *value <= 0) return std::nullopt;
  return *value * unit;
}

void PrometheusStats::add_seconds(const std::string& what, double seconds) {
  for (auto& [name, total] : seconds_by_query)
    if (name == what) {
      total += seconds;
      return;
    }
  seconds_by_query.emplace_back(what, seconds);
}

QueryResult prometheus_query(HttpClient& client, const PrometheusUrl& url, const char* endpoint,
                             const HttpParams& params, const PrometheusQueryOptions& o, PrometheusStats& stats) {
  QueryResult result;
  result.failure = request(client, url.base_path + endpoint, params, o, stats, result.message, [&](const simdjson::dom::element& data) {
    simdjson::dom::array matrix;
    if (data["result"].get_array().get(matrix) != simdjson::SUCCESS) return false;
    result.series = read_matrix(matrix, stats.malformed);
    return true;
  });
  return result;
}

void prometheus_range_query(HttpClient& client, const PrometheusUrl& url, const std::string& promql, double from,
                            double to, double step, const PrometheusQueryOptions& o, PrometheusStats& stats,
                            std::vector<QueryResult>& out) {
  HttpParams params{{"query", promql}, {"start", fmt::format("{:.3f}", from)}, {"end", fmt::format("{:.3f}", to)},
                         {"step", fmt::format("{:.0f}", step)}};
  QueryResult r = prometheus_query(client, url, "/api/v1/query_range", params, o, stats);
  if (r.failure == QueryFailure::too_large && to - from >= step) {
    ++stats.splits;
    double middle = from + std::floor((to - from) / step / 2) * step;
    prometheus_range_query(client, url, promql, from, middle, step, o, stats, out);
    prometheus_range_query(client, url, promql, middle + step, to, step, o, stats, out);
    return;
  }
  r.from = from;
  r.to = to;
  out.push_back(std::move(r));
}

QueryFailure prometheus_series_count(HttpClient& client, const PrometheusUrl& url, const std::string& selector,
                                     double from, double to, const PrometheusQueryOptions& o, PrometheusStats& stats,
                                     size_t& count, std::string& message) {
  HttpParams params{{"match[]", selector}, {"start", fmt::format("{:.3f}", from)}, {"end", fmt::format("{:.3f}", to)}};
  return request(client, url.base_path + "/api/v1/series", params, o, stats, message, [&](const simdjson::dom::element& data) {
    simdjson::dom::array series;
    if (data.get_array().get(series) != simdjson::SUCCESS) return false;
    count = series.size();
    return true;
  });
}

bool closes_range_windows(HttpClient& client, const PrometheusUrl& url) {
  HttpAnswer response = client.get(url.base_path + "/api/v1/status/buildinfo", {}, 1u << 20);
  if (!response.reached || response.status != 200) return false;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view version;
  if (parser.parse(response.body).get(doc) != simdjson::SUCCESS || doc["data"]["version"].get_string().get(version) != simdjson::SUCCESS)
    return false;
  return version.rfind("2.", 0) == 0 || version.rfind("1.", 0) == 0;
}

}  // namespace gw
