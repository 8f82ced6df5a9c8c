#include "telemetry/prometheus_client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <functional>
#include <httplib.h>
#include <map>
#include <set>
#include <tuple>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/cancel.h"
#include "core/limits.h"
#include "core/numbers.h"

namespace gw {

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

namespace {

// Series whose samples lie within this many hourly windows, and no more samples, are read raw.
constexpr int kRawReadHours = 3;
constexpr double kRawReadSamples = 20000;
// Series whose hours may hide an interval longer than the gap cap are read raw too, up to this
// many samples in all (the most irregular first); beyond it their hourly sums stand.
constexpr double kIrregularRawBudgetSamples = 2e6;

struct Url {
  std::string scheme_host_port;
  std::string base_path;
};

std::optional<Url> split_url(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return std::nullopt;
  size_t path = url.find('/', scheme + 3);
  Url u;
  u.scheme_host_port = path == std::string::npos ? url : url.substr(0, path);
  u.base_path = path == std::string::npos ? "" : url.substr(path);
  while (!u.base_path.empty() && u.base_path.back() == '/') u.base_path.pop_back();
  return u;
}

// Why a range query failed: too large for the server or for us (split the range and ask
// again), refused (a bad query: stop), or unavailable after retries (down, slow, 5xx, truncated).
enum class Failure { none, too_large, refused, unavailable };

struct QueryResult {
  Failure failure = Failure::none;
  std::string message;
  nlohmann::json body;
  double from = 0, to = 0;  // the evaluation times a range query covered
};

// Prometheus and its kin refuse ranges with too many points or samples; the message says so.
bool says_too_large(const std::string& text) {
  for (const char* phrase : {"exceeded maximum resolution", "too many samples", "would load too many", "limit exceeded",
                             "too many points", "exceeds the limit", "max_samples"})
    if (text.find(phrase) != std::string::npos) return true;
  return false;
}

// One query (/api/v1/query_range or /api/v1/query), retried with exponential backoff on
// connection errors, timeouts, 5xx and bodies that are cut short. A body over the size limit is
// abandoned as it streams.
QueryResult api_query(httplib::Client& client, const Url& url, const char* endpoint, const httplib::Params& params,
                      const PrometheusQueryOptions& o, PrometheusStats& stats) {
  QueryResult result;
  std::string last_error;
  for (int attempt = 0; attempt <= o.retries; ++attempt) {
    if (cancel_requested()) {  // the caller gave up: no more queries
      result.failure = Failure::refused;
      result.message = "interrupted";
      return result;
    }
    if (attempt > 0) {
      ++stats.retries;
      std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(o.backoff_s * 1000) * (1 << (attempt - 1))));
    }
    ++stats.queries;
    std::string body_text;
    bool over_limit = false;
    int status = 0;
    auto response = client.Get(
        (url.base_path + endpoint).c_str(), params, httplib::Headers{},
        [&](const httplib::Response& r) {
          status = r.status;
          return true;
        },
        [&](const char* data, size_t length) {
          if (body_text.size() + length > o.max_response_bytes) {
            over_limit = true;
            return false;
          }
          body_text.append(data, length);
          return true;
        });
    if (over_limit) {
      result.failure = Failure::too_large;
      result.message = fmt::format("a response over {} MiB", o.max_response_bytes >> 20);
      return result;
    }
    if (!response) {
      last_error = fmt::format("cannot reach Prometheus ({})", httplib::to_string(response.error()));
      continue;
    }
    status = response->status;
    if (status >= 500 && !says_too_large(body_text)) {
      last_error = fmt::format("HTTP {} from Prometheus", status);
      continue;
    }
    nlohmann::json body = nlohmann::json::parse(body_text, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      if (status >= 400) {  // a proxy's error page, not Prometheus's JSON
        result.failure = says_too_large(body_text) ? Failure::too_large : Failure::refused;
        result.message = fmt::format("HTTP {}: {}", status, body_text.substr(0, 200));
        return result;
      }
      last_error = fmt::format("HTTP {}: the response is not JSON (truncated?)", status);
      continue;
    }
    std::string error = body.contains("error") && body["error"].is_string() ? body["error"].get<std::string>() : "";
    if (status >= 400 || !body.contains("status") || body["status"] != "success") {
      result.failure = says_too_large(error) ? Failure::too_large : Failure::refused;
      result.message = fmt::format("Prometheus refused the query (HTTP {}): {}", status,
                                   error.empty() ? body_text.substr(0, 200) : error);
      return result;
    }
    if (!body.contains("data") || !body["data"].is_object() || !body["data"].contains("result") ||
        !body["data"]["result"].is_array()) {
      last_error = "the response has no data.result list";
      continue;
    }
    // Thanos and Mimir answer with warnings when some stores did not: the data is partial.
    if (body.contains("warnings") && body["warnings"].is_array() && !body["warnings"].empty()) {
      stats.partial = true;
      for (const auto& w : body["warnings"])
        if (w.is_string()) stats.warnings += w.get<std::string>() + "; ";
    }
    result.body = std::move(body);
    return result;
  }
  result.failure = Failure::unavailable;
  result.message = last_error + fmt::format(" after {} tries", o.retries + 1);
  return result;
}

QueryResult range_query(httplib::Client& client, const Url& url, const std::string& query, double start, double end,
                        double step, const PrometheusQueryOptions& o, PrometheusStats& stats) {
  httplib::Params params{{"query", query}, {"start", fmt::format("{:.3f}", start)}, {"end", fmt::format("{:.3f}", end)},
                         {"step", fmt::format("{:.0f}", step)}};
  return api_query(client, url, "/api/v1/query_range", params, o, stats);
}

// Runs the query over [from, to], halving the range while the answer is too large.
void query_range_split(httplib::Client& client, const Url& url, const std::string& query, double from, double to,
                       double step, const PrometheusQueryOptions& o, PrometheusStats& stats, std::vector<QueryResult>& out) {
  QueryResult r = range_query(client, url, query, from, to, step, o, stats);
  if (r.failure == Failure::too_large && to - from >= step) {
    ++stats.splits;
    double middle = from + std::floor((to - from) / step / 2) * step;
    query_range_split(client, url, query, from, middle, step, o, stats, out);
    query_range_split(client, url, query, middle + step, to, step, o, stats, out);
    return;
  }
  r.from = from;
  r.to = to;
  out.push_back(std::move(r));
}

struct PushedCoverage {
  std::vector<double> covered_s;  // per hour
  long long gaps = 0;
  double gap_s = 0;
};

// A PromQL string literal.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// The series' id from the labels gpuwise keeps, and the matchers that select it again.
std::string series_id(const nlohmann::json& metric, Labels& labels, std::string* matchers = nullptr) {
  labels.clear();
  if (matchers) matchers->clear();
  for (const auto& [k, v] : metric.items()) {
    if (k == "__name__" || !v.is_string()) continue;
    std::string key = canonical_label_key(k);
    if (identifies_series(key)) {
      labels.emplace_back(key, v.get<std::string>());
      if (matchers) *matchers += (matchers->empty() ? "" : ",") + k + "=" + quoted(v.get<std::string>());
    }
  }
  std::sort(labels.begin(), labels.end());
  std::string id;
  for (const auto& [k, v] : labels) id += (id.empty() ? "" : ",") + k + "=" + v;
  return id;
}

// Prometheus 2.x includes both ends of a range window; 3.x and most of its kin leave out the start.
// Servers that do not say their version (Thanos, Mimir, VictoriaMetrics) are taken as left-open.
bool closes_range_windows(httplib::Client& client, const Url& url) {
  auto response = client.Get((url.base_path + "/api/v1/status/buildinfo").c_str());
  if (!response || response->status != 200) return false;
  auto body = nlohmann::json::parse(response->body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("data") || !body["data"].is_object()) return false;
  const auto& version = body["data"].value("version", std::string());
  return version.rfind("2.", 0) == 0 || version.rfind("1.", 0) == 0;
}

// Intervals between an hour's samples: a first sample at or before the hour's start is the
// previous hour's last (seen through the lookback), one interval more.
double hour_intervals(double samples, double first_s, double hour_start_s) {
  return first_s <= hour_start_s ? samples : samples - 1;
}

// The time a series' hourly summaries stand for, by the files' rule as far as hourly sums allow:
// in each hour a sample stands for the hour's mean spacing (the span between its first and last
// samples per interval), at most 3x the series' median spacing, and the hour for no more than the
// minutes in which Prometheus saw the series fresh. What the series' span holds beyond is gaps.
PushedCoverage pushed_coverage(const std::vector<TelemetryAggregator::HourSummary>& hours, const std::vector<double>& fresh_s) {
  PushedCoverage out;
  out.covered_s.assign(hours.size(), 0.0);
  std::vector<double> hour_spacing_s(hours.size(), 0.0);
  std::vector<std::pair<double, double>> spacings;  // spacing in an hour, its samples
  double first = 1e300, last = -1e300, samples = 0;
  auto scraped = [](const TelemetryAggregator::HourSummary& h) { return std::max(h.samples, h.scraped); };
  for (size_t i = 0; i < hours.size(); ++i) {
    const auto& h = hours[i];
    if (scraped(h) < 1) continue;
    bool from_previous_hour = h.first_s <= h.hour_start_s;
    double intervals = hour_intervals(scraped(h), h.first_s, h.hour_start_s);
    if (intervals >= 1 && h.last_s > h.first_s) {
      hour_spacing_s[i] = (h.last_s - h.first_s) / intervals;
      spacings.emplace_back(hour_spacing_s[i], scraped(h));
    }
    if (!from_previous_hour) first = std::min(first, h.first_s);
    last = std::max(last, h.last_s);
    samples += scraped(h);
  }
  if (spacings.empty() || samples < 2) return out;  // one sample stands for no time, as in the files
  std::sort(spacings.begin(), spacings.end());
  double seen = 0, median_s = spacings.back().first;
  for (const auto& [spacing, n] : spacings) {
    seen += n;
    if (2 * seen >= samples) {
      median_s = spacing;
      break;
    }
  }
  const double cap_s = 3 * median_s;
  double covered = 0;
  long long previous_hour = 0;
  bool any_hour = false;
  for (size_t i = 0; i < hours.size(); ++i) {
    const auto& h = hours[i];
    if (scraped(h) < 1) continue;
    double spacing = hour_spacing_s[i] > 0 ? hour_spacing_s[i] : median_s;
    double spanned = scraped(h) * spacing;
    // Fresh minutes are counted at minute steps: the first sample is seen up to a minute late.
    out.covered_s[i] = std::min(scraped(h) * std::min(spacing, cap_s), fresh_s[i] + 60);
    covered += out.covered_s[i];
    if (spanned - out.covered_s[i] > cap_s) ++out.gaps;  // stale or sparse inside the hour
    long long hour = std::llround(h.hour_start_s / 3600);
    if (any_hour && hour > previous_hour + 1) ++out.gaps;  // whole hours without samples
    previous_hour = hour;
    any_hour = true;
  }
  double span_s = (first < 1e299 ? last - first : 0) + median_s;
  if (span_s - covered > cap_s) {
    out.gap_s = span_s - covered;
    out.gaps = std::max<long long>(out.gaps, 1);
  } else {
    out.gaps = 0;
  }
  return out;
}

// How much of a series' span its hourly sums cannot place: in each hour, the span its samples
// stand for beyond as many intervals of the series' shortest hourly spacing, where that is more
// than three such spacings (room for an interval the files' rule would cut as a gap: an interval
// longer than the cap is invisible in an hour's mean spacing). 0: every hour is regular.
double hidden_gap_room_s(const std::map<double, std::map<std::string, double>>& hours) {
  struct Hour {
    double span_s, intervals;
  };
  std::vector<Hour> spans;
  double shortest_s = 1e300;
  for (const auto& [hour_start, values] : hours) {
    auto count = values.find("count"), first = values.find("first"), last = values.find("last");
    if (count == values.end() || first == values.end() || last == values.end() || count->second < 1) continue;
    double intervals = hour_intervals(count->second, first->second, hour_start);
    double span_s = last->second - first->second;
    if (intervals < 1 || span_s <= 0) continue;
    spans.push_back({span_s, intervals});
    shortest_s = std::min(shortest_s, span_s / intervals);
  }
  double room_s = 0;
  for (const auto& h : spans) {
    double beyond_regular_s = h.span_s - h.intervals * shortest_s;
    if (beyond_regular_s > 3 * shortest_s) room_s += beyond_regular_s;
  }
  return room_s;
}

// An hour's summary from its raw samples (an hour holding impossible values): the measurements
// only, their exact idle count and memory p95; returns how many samples were out of range.
long long summarize_hour(const std::vector<TelemetrySample>& raw, TelemetryAggregator::HourSummary& h) {
  double sum = 0, n = 0, idle = 0, scraped = 0, first = 1e300, last = -1e300;
  std::vector<double> memory;
  long long out_of_range = 0;
  for (const auto& s : raw) {
    if (!s.in_range) ++out_of_range;
    if (s.metric == Metric::gpu_util_pct) {
      ++scraped;
      first = std::min(first, s.time_s);
      last = std::max(last, s.time_s);
      if (!s.in_range) continue;
      sum += s.value;
      ++n;
      idle += s.value < 5;
    } else if (s.in_range) {
      memory.push_back(s.value);
    }
  }
  h.samples = n;
  h.scraped = scraped;
  h.util_mean = n > 0 ? sum / n : 0;
  h.idle_samples = idle;
  if (scraped > 0) {
    h.first_s = first;
    h.last_s = last;
  }
  h.memory_max.reset();
  h.memory_p95.reset();
  if (!memory.empty()) {
    std::sort(memory.begin(), memory.end());
    h.memory_max = memory.back();
    double rank = 0.95 * static_cast<double>(memory.size() - 1);  // as quantile_over_time interpolates
    size_t below = static_cast<size_t>(rank);
    double above = memory[std::min(below + 1, memory.size() - 1)];
    h.memory_p95 = memory[below] + (above - memory[below]) * (rank - static_cast<double>(below));
  }
  return out_of_range;
}

// Hourly aggregates of a time range pushed down to the server as range queries, and the raw
// samples of the series whose hours cannot say enough, read into an aggregator.
class PushDownReader {
 public:
  PushDownReader(const PrometheusQueryOptions& o, const Url& url, TelemetryAggregator& aggregator, PrometheusStats& stats)
      : o_(o), url_(url), client_(url.scheme_host_port), aggregator_(aggregator), stats_(stats) {
    client_.set_connection_timeout(static_cast<time_t>(std::ceil(std::min(o.timeout_s, 10.0))));
    client_.set_read_timeout(static_cast<time_t>(std::ceil(o.timeout_s)));
    end_ = o.end_s > 0 ? o.end_s : static_cast<double>(std::time(nullptr));
    // Hour boundaries, so server-side windows match the hours of the week. The end is rounded up:
    // the hour in progress holds the newest series, often the short-lived ones.
    end_ = std::ceil(end_ / 3600) * 3600;
    start_ = end_ - std::ceil(o.range_s / 3600) * 3600;
    // Prometheus 2.x closes range windows at both ends, 3.x opens them at the start: a sample on
    // an hour boundary must fall in one hour only, (h - 1h, h], as the files' hours are.
    closed_windows_ = closes_range_windows(client_, url_);
    hour_ = closed_windows_ ? "3599999ms" : "1h";
  }

  std::optional<Error> read() {
    std::string sel = o_.selector.empty() ? "" : "{" + o_.selector + "}";
    std::string util = "DCGM_FI_DEV_GPU_UTIL" + sel, memory = "DCGM_FI_DEV_FB_USED" + sel;
    const std::string& hour = hour_;
    // Evaluated at the end of each hour over the hour before it.
    const Query queries[] = {
        {"mean", "avg_over_time(" + util + "[" + hour + "])"},
        {"count", "count_over_time(" + util + "[" + hour + "])"},
        // The share of the hour below 5%, sampled each minute (each raw sample held until the next).
        {"idle_share", "avg_over_time((" + util + " < bool 5)[" + hour + ":1m])"},
        // Minutes in which the series was not stale (a sample in the 5 minutes before): the most
        // time its samples can stand for, as Prometheus itself would see them.
        {"fresh_minutes", "count_over_time(" + util + "[" + hour + ":1m])"},
        // The earliest can be the previous hour's last sample, seen through the 5-minute lookback.
        {"first", "min_over_time(timestamp(" + util + ")[" + hour + ":1m])"},
        {"last", "max_over_time(timestamp(" + util + ")[" + hour + ":1m])"},
        {"mem_max", "max_over_time(" + memory + "[" + hour + "]) * 1048576"},
        {"mem_p95", "quantile_over_time(0.95, " + memory + "[" + hour + "]) * 1048576"},
        // Hours holding a value outside the physical range: read raw, so it is skipped and counted.
        {"impossible", "(max_over_time(" + util + "[" + hour + "]) > 100) or (min_over_time(" + util + "[" + hour +
                           "]) < 0) or (min_over_time(" + memory + "[" + hour + "]) < 0)"},
    };
    // Host CPU from node_exporter, one series per instance, joined to the GPUs by host name.
    const Query host_queries[] = {
        // A counter's rate over the hour is its mean rate in that hour.
        {"cpu", "100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode=\"idle\"}[" + hour + "])))"},
        {"iowait", "100 * avg by (instance) (rate(node_cpu_seconds_total{mode=\"iowait\"}[" + hour + "]))"},
        {"cpus", "count by (instance) (node_cpu_seconds_total{mode=\"idle\"})"},
    };
    chunks_total_ = static_cast<int>(std::ceil((end_ - start_) / chunk_s())) * static_cast<int>(std::size(queries) + std::size(host_queries));
    for (const auto& q : queries)
      if (auto error = read_gpu_query(q)) return error;
    for (const auto& q : host_queries) {
      if (data_.empty()) break;
      if (auto error = read_host_query(q)) return error;
    }
    if (stats_.over_series_limit > 0)
      return Error{o_.url, 0, "", fmt::format("more than {} series match (raise the limit with --max-series, or narrow --selector)",
                                              input_limits().max_series)};
    if (data_.empty() && stats_.partial) return Error{o_.url, 0, "", stats_.warnings.substr(0, stats_.warnings.find(';'))};
    if (data_.empty())
      return Error{o_.url, 0, "", "Prometheus has no DCGM_FI_DEV_GPU_UTIL or DCGM_FI_DEV_FB_USED series in the range"};
    std::set<std::string> read_raw = read_raw_series();
    for (const auto& [id, entry] : data_)
      if (!read_raw.count(id)) add_hours(id, entry);
    return std::nullopt;
  }

 private:
  struct Query {
    std::string name, promql;
  };
  // A series' labels and, by hour start, each query's value.
  using Hours = std::map<double, std::map<std::string, double>>;
  using Entry = std::pair<Labels, Hours>;
  static constexpr double kStepS = 3600;

  double chunk_s() const { return kStepS * o_.max_points_per_query; }

  // Runs one query over the whole range in chunks; calls on_series for each series of each
  // answer. A refused query is an error; chunks unavailable after retries make the result partial.
  std::optional<Error> run(const std::string& promql, const std::function<void(const nlohmann::json&)>& on_series) {
    const double chunk = chunk_s();
    for (double from = start_ + kStepS; from <= end_; from += chunk) {
      double to = std::min(end_, from + chunk - kStepS);
      std::vector<QueryResult> results;
      query_range_split(client_, url_, promql, from, to, kStepS, o_, stats_, results);
      stats_.queried_s += to - from + kStepS;
      if (o_.on_progress) o_.on_progress(++chunks_done_, chunks_total_);
      for (const auto& r : results) {
        if (r.failure == Failure::refused) return Error{o_.url, 0, "query", r.message + " (query: " + promql + ")"};
        if (r.failure == Failure::unavailable && !answered_ && r.message.rfind("cannot reach", 0) == 0)
          return Error{o_.url, 0, "", r.message};
        if (r.failure != Failure::none) {
          record_failure(r);
          continue;
        }
        answered_ = true;
        for (const auto& series : r.body["data"]["result"]) {
          // Malformed series (no labels, values that are not [time, "number"]) are skipped, counted.
          if (!series.is_object() || !series.contains("metric") || !series["metric"].is_object() ||
              !series.contains("values") || !series["values"].is_array()) {
            ++stats_.malformed;
            continue;
          }
          on_series(series);
        }
      }
    }
    return std::nullopt;
  }

  void record_failure(const QueryResult& r) {
    stats_.partial = true;
    ++stats_.failed_chunks;
    stats_.warnings += fmt::format("{} for {:.0f}..{:.0f}; ", r.message, r.from, r.to);
    stats_.failed_s += r.to - r.from + kStepS;
    if (std::find(stats_.failed_ranges.begin(), stats_.failed_ranges.end(), std::pair{r.from, r.to}) == stats_.failed_ranges.end())
      stats_.failed_ranges.emplace_back(r.from, r.to);
  }

  // [time, "value"] pairs of a series; malformed points are counted and skipped.
  void points(const nlohmann::json& series, const std::function<void(double, double)>& on_point) {
    for (const auto& point : series["values"]) {
      if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_string()) {
        ++stats_.malformed;
        continue;
      }
      auto value = parse_finite_double(point[1].get<std::string>());
      if (value) on_point(point[0].get<double>(), *value);
    }
  }

  std::optional<Error> read_gpu_query(const Query& q) {
    return run(q.promql, [&](const nlohmann::json& series) {
      Labels labels;
      std::string matchers;
      std::string id = series_id(series["metric"], labels, &matchers);
      if (data_.size() >= input_limits().max_series && !data_.count(id)) {
        ++stats_.over_series_limit;
        return;
      }
      auto& entry = data_[id];
      selectors_.emplace(id, std::move(matchers));
      entry.first = labels;
      points(series, [&](double t, double value) { entry.second[t - kStepS][q.name] = value; });
    });
  }

  std::optional<Error> read_host_query(const Query& q) {
    Metric metric = q.name == "cpu" ? Metric::cpu_util_pct : q.name == "iowait" ? Metric::cpu_iowait_pct : Metric::host_cpus;
    return run(q.promql, [&](const nlohmann::json& series) {
      const auto& m = series["metric"];
      if (!m.contains("instance") || !m["instance"].is_string()) return;
      Labels labels{{"hostname", instance_host(m["instance"].get<std::string>())}};
      std::string id = "hostname=" + labels[0].second;
      points(series, [&](double, double value) { aggregator_.add_mean(id, labels, metric, value, 1); });
    });
  }

  // The raw samples of a series in the window_s before `at`, or nothing if the server failed.
  std::optional<std::vector<TelemetrySample>> raw_samples(const std::string& id, const Labels& labels, double at,
                                                          double window_s) {
    std::string window = closed_windows_ ? fmt::format("{:.0f}ms", window_s * 1000 - 1) : fmt::format("{:.0f}s", window_s);
    std::string matchers = selectors_[id];
    if (!o_.selector.empty()) matchers += (matchers.empty() ? "" : ",") + o_.selector;
    std::vector<TelemetrySample> raw;
    for (const auto& [name, metric, scale] : {std::tuple{"DCGM_FI_DEV_GPU_UTIL", Metric::gpu_util_pct, 1.0},
                                              std::tuple{"DCGM_FI_DEV_FB_USED", Metric::memory_used_bytes, 1048576.0}}) {
      std::string promql = std::string(name) + (matchers.empty() ? "" : "{" + matchers + "}") + "[" + window + "]";
      QueryResult r = api_query(client_, url_, "/api/v1/query", {{"query", promql}, {"time", fmt::format("{:.3f}", at)}}, o_, stats_);
      if (r.failure != Failure::none) return std::nullopt;
      for (const auto& series : r.body["data"]["result"]) {
        if (!series.is_object() || !series.contains("values") || !series["values"].is_array()) continue;
        points(series, [&, metric = metric, scale = scale](double t, double value) {
          TelemetrySample sample{&id, &labels, metric, t, value * scale};
          sample.in_range = outside_physical_range(sample) == nullptr;
          raw.push_back(sample);
        });
      }
    }
    std::stable_sort(raw.begin(), raw.end(), [](const TelemetrySample& a, const TelemetrySample& b) { return a.time_s < b.time_s; });
    return raw;
  }

  // Series that live a few hours are read raw, by the files' rules: hourly sums cannot place a
  // series' first sample closer than the minute steps of a subquery, which is most of a short
  // pod's life. Long series are read raw when their hours may hide gaps (most irregular first,
  // within a budget): the files' rule cuts each interval at 3x the median spacing, which hourly
  // sums cannot see. Returns the series read raw into the aggregator.
  std::set<std::string> read_raw_series() {
    struct RawRead {
      double hidden_room_s;
      std::string id;
      double first_hour, last_hour, samples;
    };
    std::vector<RawRead> raw_reads;
    for (const auto& [id, entry] : data_) {
      double first_hour = 1e300, last_hour = -1e300, samples = 0;
      for (const auto& [hour_start, values] : entry.second) {
        auto count = values.find("count");
        if (count == values.end() || count->second < 1) continue;
        first_hour = std::min(first_hour, hour_start);
        last_hour = std::max(last_hour, hour_start);
        samples += count->second;
      }
      if (samples < 1 || samples > kRawReadSamples) continue;
      bool short_lived = last_hour - first_hour < kRawReadHours * kStepS;
      double room_s = short_lived ? 1e300 : hidden_gap_room_s(entry.second);
      if (room_s > 0) raw_reads.push_back({room_s, id, first_hour, last_hour, samples});
    }
    std::sort(raw_reads.begin(), raw_reads.end(), [](const RawRead& a, const RawRead& b) {
      return a.hidden_room_s != b.hidden_room_s ? a.hidden_room_s > b.hidden_room_s : a.id < b.id;
    });
    std::set<std::string> read_raw;
    double irregular_samples = 0;
    for (const auto& r : raw_reads) {
      bool short_lived = r.hidden_room_s >= 1e300;
      if (!short_lived && irregular_samples + r.samples > kIrregularRawBudgetSamples) continue;
      const auto& entry = data_[r.id];
      auto raw = raw_samples(r.id, entry.first, r.last_hour + kStepS, r.last_hour - r.first_hour + kStepS);
      if (!raw) continue;  // the hourly sums stand
      if (!short_lived) irregular_samples += r.samples;
      for (const auto& sample : *raw) aggregator_.add(sample);
      read_raw.insert(r.id);
    }
    return read_raw;
  }

  // A series' hours, as the server summed them, into the aggregator.
  void add_hours(const std::string& id, const Entry& entry) {
    std::vector<TelemetryAggregator::HourSummary> hours;
    std::vector<double> fresh_s;
    long long out_of_range = 0;
    for (const auto& hour_values : entry.second) {
      const double hour_start = hour_values.first;
      const auto& values = hour_values.second;  // a named variable: lambdas may not capture bindings before clang 16
      TelemetryAggregator::HourSummary h;
      h.hour_start_s = hour_start;
      auto get = [&](const char* key) -> std::optional<double> {
        auto it = values.find(key);
        return it == values.end() ? std::nullopt : std::optional<double>(it->second);
      };
      h.samples = get("count").value_or(0);
      h.util_mean = get("mean").value_or(0);
      h.idle_samples = get("idle_share").value_or(0) * h.samples;
      h.first_s = get("first").value_or(hour_start);
      h.last_s = get("last").value_or(hour_start + kStepS);
      h.memory_max = get("mem_max");
      h.memory_p95 = get("mem_p95");
      if (get("impossible")) {
        if (auto raw = raw_samples(id, entry.first, hour_start + kStepS, kStepS)) out_of_range += summarize_hour(*raw, h);
      }
      hours.push_back(h);
      fresh_s.push_back(60 * get("fresh_minutes").value_or(60));
    }
    PushedCoverage coverage = pushed_coverage(hours, fresh_s);
    for (size_t i = 0; i < hours.size(); ++i) {
      hours[i].covered_s = coverage.covered_s[i];
      aggregator_.add_hour(id, entry.first, hours[i]);
    }
    aggregator_.add_gaps(id, coverage.gaps, coverage.gap_s);
    aggregator_.add_out_of_range(id, out_of_range);
  }

  const PrometheusQueryOptions& o_;
  const Url& url_;
  httplib::Client client_;
  TelemetryAggregator& aggregator_;
  PrometheusStats& stats_;
  double start_ = 0, end_ = 0;
  bool closed_windows_ = false;
  std::string hour_;
  std::map<std::string, Entry> data_;               // series -> labels and hours
  std::map<std::string, std::string> selectors_;    // series -> label matchers
  bool answered_ = false;                           // the server answered at least one query
  int chunks_done_ = 0, chunks_total_ = 0;
};

}  // namespace

std::optional<Error> audit_from_prometheus(const PrometheusQueryOptions& o, TelemetryAggregator& aggregator,
                                           PrometheusStats& stats) {
  auto url = split_url(o.url);
  if (!url) return Error{o.url, 0, "--prometheus", "expected a URL like http://localhost:9090"};
  PushDownReader reader(o, *url, aggregator, stats);
  return reader.read();
}

}  // namespace gw
