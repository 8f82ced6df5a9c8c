#include "telemetry/prometheus_client.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "core/limits.h"
#include "core/numbers.h"
#include "core/parallel.h"
#include "telemetry/prometheus_api.h"
#include "telemetry/pushdown_coverage.h"
#include "telemetry/pushdown_joins.h"
#include "telemetry/pushdown_store.h"
#include "telemetry/recording_rules.h"

namespace gw {

namespace {

// Series whose samples lie within this many hourly windows, and no more samples, are read raw.
constexpr int kRawReadHours = 3;
constexpr double kRawReadSamples = 20000;
// Series whose hours may hide an interval longer than the gap cap are read raw too, up to this
// many samples in all (the most irregular first); beyond it their hourly sums stand.
constexpr double kIrregularRawBudgetSamples = 2e6;
// Hours in which a series went stale or came back (its life's first and last, the edges of
// gaps) are read raw for their first and last sample times, up to this many samples in all.
constexpr double kBoundaryRawBudgetSamples = 4e6;
// An hour's boundary samples are asked for the whole fleet at once past this many series.
constexpr size_t kBoundaryFleetQuerySeries = 8;
// Series x hours one range query covers: a query then scans ~6 M samples at 1-minute scrapes,
// about a second of a server's core, well inside default timeouts, and the chunks of each
// aggregate spread over the concurrent queries.
constexpr double kSeriesHoursPerQuery = 100000;
constexpr double kStepS = 3600;
// dcgm-exporter's duty cycle (%) and framebuffer use (MiB).
constexpr const char* kUtilMetric = "DCGM_FI_DEV_GPU_UTIL";
constexpr const char* kMemoryMetric = "DCGM_FI_DEV_FB_USED";
// Requests served, counted by the serving engines' own exporters: vLLM (docs.vllm.ai, "Production
// Metrics"), SGLang (docs.sglang.ai, "Production Metrics"), Hugging Face TGI and NVIDIA Triton
// (their metrics pages), as of 2026-12.
constexpr const char* kServedCounters = "vllm:request_success_total|sglang:num_requests_total|tgi_request_success|nv_inference_request_success";

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

using namespace pushdown;


// One request of a batch: a range query over one chunk (split while too large), or an instant
// query at one time; `what` names it in the time per aggregate.
struct Request {
  std::string what, promql;
  double from = 0, to = 0;  // range: evaluation times
  double at = -1;           // instant: the evaluation time (>= 0)
};

struct Answer {
  std::vector<QueryResult> results;
  PrometheusStats stats;
  double seconds = 0;
};

// Hourly aggregates of a time range pushed down to the server as range queries, and the raw
// samples of the series and hours those cannot say enough about, read into an aggregator.
// Requests go out concurrently (--prometheus-concurrency); answers are taken in request order,
// so the result does not depend on which came back first.
class PushDownReader {
 public:
  PushDownReader(const PrometheusQueryOptions& o, const PrometheusUrl& url, PushDownStore& store, TelemetryAggregator& aggregator,
                 PrometheusStats& stats)
      : o_(o), url_(url), store_(store), data_(store.series), aggregator_(aggregator), stats_(stats) {
    now_ = o.end_s > 0 ? o.end_s : static_cast<double>(std::time(nullptr));
    // Hour boundaries, so server-side windows match the hours of the week. The end is rounded up:
    // the hour in progress holds the newest series, often the short-lived ones.
    end_ = std::ceil(now_ / 3600) * 3600;
    hours_ = static_cast<size_t>(std::ceil(o.range_s / 3600));
    start_ = end_ - static_cast<double>(hours_) * 3600;
    window_ = {start_, static_cast<long long>(std::llround(start_ / 3600)), hours_};
    auto client = make_client();
    // Prometheus 2.x closes range windows at both ends, 3.x opens them at the start: a sample on
    // an hour boundary must fall in one hour only, (h - 1h, h], as the files' hours are.
    closed_windows_ = closes_range_windows(*client, url_);
    hour_ = closed_windows_ ? "3599999ms" : "1h";
    std::string sel = o_.selector.empty() ? "" : "{" + o_.selector + "}";
    util_ = kUtilMetric + sel;
    memory_ = kMemoryMetric + sel;
    idle_rule_ = kIdleRuleName + sel;
  }

  std::optional<Error> read() {
    if (auto error = read_aggregates()) return error;
    if (stats_.over_series_limit > 0)
      return Error{o_.url, 0, "", fmt::format("more than {} series match (raise the limit with --max-series, or narrow --selector)",
                                              input_limits().max_series)};
    bool any = false;
    for (const auto& [id, entry] : data_) any = any || life_of(entry).samples > 0 || has_memory(entry);
    if (!any && stats_.partial) return Error{o_.url, 0, "", stats_.warnings.substr(0, stats_.warnings.find(';'))};
    if (!any) return Error{o_.url, 0, "", "Prometheus has no DCGM_FI_DEV_GPU_UTIL or DCGM_FI_DEV_FB_USED series in the range"};
    add_host_hours(store_, window_, aggregator_);
    add_served_requests(store_, window_, aggregator_);
    std::set<std::string> read_raw = read_short_lived_and_boundaries();
    for (const auto& id : read_irregular(read_raw)) read_raw.insert(id);
    read_impossible_hours(read_raw);
    for (const auto& [id, entry] : data_)
      if (!read_raw.count(id)) add_hours(id, entry);
    return std::nullopt;
  }

 private:
  using Entry = SeriesHours;

  // The window's hour `i` of a series (unknown where the store has none).
  const HourValues& hour(const Entry& entry, size_t i) const {
    static const HourValues unknown;
    const HourValues* h = entry.run.find(window_.hour(i));
    return h ? *h : unknown;
  }
  bool has_memory(const Entry& entry) const {
    for (size_t i = 0; i < hours_; ++i)
      if (!std::isnan(hour(entry, i)[kMemMax])) return true;
    return false;
  }

  std::unique_ptr<HttpClient> make_client() const {
    auto client = make_http_client(url_.scheme_host_port);
    client->set_timeouts(std::min(o_.timeout_s, 10.0), o_.timeout_s);
    if (o_.credentials.any()) client->set_credentials(o_.credentials);
    return client;
  }

  double hour_start(size_t index) const { return start_ + static_cast<double>(index) * kStepS; }

  // The window of `seconds` ending at an evaluation time, as this server bounds its windows.
  std::string window(double seconds) const {
    return closed_windows_ ? fmt::format("{:.0f}ms", seconds * 1000 - 1) : fmt::format("{:.0f}s", seconds);
  }

  // Runs the requests, up to --prometheus-concurrency at a time, each on its own connection;
  // answers in request order, their counts added to the stats in that order.
  std::vector<Answer> run(const std::vector<Request>& requests) {
    std::vector<Answer> answers(requests.size());
    std::mutex progress;
    parallel_for(requests.size(), std::max(1, o_.concurrency), [&](size_t i) {
      const Request& r = requests[i];
      Answer& a = answers[i];
      auto client = make_client();
      auto started = std::chrono::steady_clock::now();
      if (r.at >= 0) {
        a.results.push_back(prometheus_query(*client, url_, "/api/v1/query", {{"query", r.promql}, {"time", fmt::format("{:.3f}", r.at)}},
                                             o_, a.stats));
      } else {
        prometheus_range_query(*client, url_, r.promql, r.from, r.to, kStepS, o_, a.stats, a.results);
      }
      a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (o_.on_progress) {
        std::lock_guard<std::mutex> lock(progress);
        o_.on_progress(++chunks_done_, chunks_total_);
      }
    });
    for (size_t i = 0; i < answers.size(); ++i) {
      const PrometheusStats& s = answers[i].stats;
      stats_.queries += s.queries;
      stats_.retries += s.retries;
      stats_.splits += s.splits;
      stats_.malformed += s.malformed;
      stats_.partial = stats_.partial || s.partial;
      stats_.warnings += s.warnings;
      stats_.add_seconds(requests[i].what, answers[i].seconds);
    }
    return answers;
  }

  // Runs requests `batch` at a time, handing each batch's answers to `take` with the index of its
  // first request and freeing them before the next batch is sent: memory holds one batch of
  // answers, not all of them (a fleet's boundary hours are 10,000 series each; 10,000 GPUs over 7
  // days are 12 M hourly points). Stops at the first error `take` returns.
  std::optional<Error> in_batches(const std::vector<Request>& requests, size_t batch,
                                  const std::function<std::optional<Error>(size_t, const std::vector<Answer>&)>& take) {
    for (size_t first = 0; first < requests.size(); first += batch) {
      const std::vector<Request> some(requests.begin() + static_cast<std::ptrdiff_t>(first),
                                      requests.begin() + static_cast<std::ptrdiff_t>(std::min(requests.size(), first + batch)));
      if (auto error = take(first, run(some))) return error;
    }
    return std::nullopt;
  }

  // Raw reads whose answers come in groups of `per` (a series' util and memory), a few groups per
  // connection at a time: each group's answers to `take` with the index of its first request.
  void run_grouped(const std::vector<Request>& requests, size_t per, const std::function<void(size_t, const Answer*)>& take) {
    in_batches(requests, per * 2 * static_cast<size_t>(std::max(1, o_.concurrency)), [&](size_t first, const std::vector<Answer>& answers) {
      for (size_t k = 0; k + per <= answers.size(); k += per) take(first + k, &answers[k]);
      return std::optional<Error>{};
    });
  }

  // Hours per range query: from the number of series, so no query scans more than a bounded
  // number of series-hours (a server's timeout and sample limit are per query), and never more
  // points per series than --max-points-per-query.
  std::optional<Error> chunk_hours(size_t& hours) {
    auto client = make_client();
    size_t series = 0;
    std::string message;
    auto started = std::chrono::steady_clock::now();
    QueryFailure failure = prometheus_series_count(*client, url_, util_, start_, end_, o_, stats_, series, message);
    stats_.add_seconds("series count", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (failure == QueryFailure::unavailable && message.rfind("cannot reach", 0) == 0) return Error{o_.url, 0, "", message};
    if (failure != QueryFailure::none) series = 1;  // the server does not say: chunks of --max-points-per-query
    double by_series = std::floor(kSeriesHoursPerQuery / static_cast<double>(std::max<size_t>(series, 1)));
    hours = static_cast<size_t>(std::clamp(by_series, 1.0, static_cast<double>(std::max(1, o_.max_points_per_query))));
    return std::nullopt;
  }

  // The fresh and idle minutes of the window's hours `asked` by subqueries, at the step every
  // hour of the window allows (minute_step_min: from the most samples a series had in each, which
  // the count query stored): a series scraped every minute anywhere in it keeps 1-minute steps.
  // Series read raw whole (short-lived) do not count: their subquery answers are not used.
  std::optional<Error> ask_minutes_by_subquery(const std::vector<size_t>& asked, size_t chunk) {
    std::vector<double> most(hours_, 0);
    for (const auto& [id, entry] : data_)
      if (!read_raw_whole(entry))
        for (size_t i = 0; i < hours_; ++i)
          if (const HourValues* h = entry.run.find(window_.hour(i)); h && (*h)[kCount] > most[i]) most[i] = (*h)[kCount];
    int step_min = 5;
    for (size_t i = 0; i < hours_; ++i) step_min = std::min(step_min, minute_step_min(most[i], std::min(kStepS, now_ - hour_start(i))));
    (step_min > 1 ? stats_.hours_by_five_minute_step : stats_.hours_by_minute_step) += static_cast<int>(asked.size());
    const auto chunks = runs_of(asked, chunk);
    const auto subqueries = minute_queries(util_, "", hour_, step_min);
    const auto names = minute_query_names(false, step_min);
    return run_and_take(over_chunks(subqueries, names.data(), chunks), [&](size_t i, const QueryResult& result) {
      take_gpu_answer(subqueries[i / chunks.size()].first, result, step_min);
    });
  }

  // Requests for each query over each chunk of evaluation times.
  template <typename Queries>
  static std::vector<Request> over_chunks(const Queries& queries, const char* const* names,
                                          const std::vector<std::pair<double, double>>& chunks) {
    std::vector<Request> requests;
    for (size_t q = 0; q < std::size(queries); ++q)
      for (const auto& [from, to] : chunks) requests.push_back({names[q], queries[q].second, from, to});
    return requests;
  }

  // Runs range requests, a few per connection at a time, and hands each answered series list to
  // `take` with its request's index; a refused query or an unreachable server is an error, other
  // failures make the audit partial.
  std::optional<Error> run_and_take(const std::vector<Request>& requests, const std::function<void(size_t, const QueryResult&)>& take) {
    chunks_total_ += static_cast<int>(requests.size());
    return in_batches(requests, 2 * static_cast<size_t>(std::max(1, o_.concurrency)),
                      [&](size_t first, const std::vector<Answer>& answers) -> std::optional<Error> {
                        for (size_t i = 0; i < answers.size(); ++i) {
                          const Request& r = requests[first + i];
                          stats_.queried_s += r.to - r.from + kStepS;
                          for (const auto& result : answers[i].results) {
                            if (result.failure == QueryFailure::refused)
                              return Error{o_.url, 0, "query", result.message + " (query: " + r.promql + ")"};
                            if (result.failure == QueryFailure::unavailable && !answered_ && result.message.rfind("cannot reach", 0) == 0)
                              return Error{o_.url, 0, "", result.message};
                            if (result.failure != QueryFailure::none) {
                              record_failure(result);
                              continue;
                            }
                            answered_ = true;
                            take(first + i, result);
                          }
                        }
                        return std::nullopt;
                      });
  }

  // The hourly aggregates of every GPU series, and the host CPU of every node.
  std::optional<Error> read_aggregates() {
    const std::string& hour = hour_;
    const auto minutes = minute_queries(util_, idle_rule_, hour_);
    const auto minute_names = minute_query_names(true);
    // Evaluated at the end of each hour over the hour before it. The subqueries for fresh and
    // idle minutes (without the recording rule) follow, at the step the counts allow.
    std::vector<std::pair<HourField, std::string>> gpu_queries = {
        {kMean, "avg_over_time(" + util_ + "[" + hour + "])"},
        {kCount, "count_over_time(" + util_ + "[" + hour + "])"},
        {kMemMax, "max_over_time(" + memory_ + "[" + hour + "]) * 1048576"},
        {kMemP95, "quantile_over_time(0.95, " + memory_ + "[" + hour + "]) * 1048576"},
        // Hours holding a value outside the physical range: read raw, so it is skipped and counted.
        {kImpossible, "(max_over_time(" + util_ + "[" + hour + "]) > 100) or (min_over_time(" + util_ + "[" + hour +
                          "]) < 0) or (min_over_time(" + memory_ + "[" + hour + "]) < 0)"},
    };
    std::vector<const char*> gpu_names = {"mean", "count", "memory max", "memory p95", "impossible values"};
    if (o_.use_recording_rules)
      for (size_t k = 0; k < 2; ++k) {
        gpu_queries.push_back(minutes[k]);
        gpu_names.push_back(minute_names[k]);
      }
    // Host CPU from node_exporter, one series per instance, joined to the GPUs by host name.
    const std::pair<Metric, std::string> host_queries[] = {
        // A counter's rate over the hour is its mean rate in that hour.
        {Metric::cpu_util_pct, "100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode=\"idle\"}[" + hour + "])))"},
        {Metric::cpu_iowait_pct, "100 * avg by (instance) (rate(node_cpu_seconds_total{mode=\"iowait\"}[" + hour + "]))"},
        {Metric::host_cpus, "count by (instance) (node_cpu_seconds_total{mode=\"idle\"})"},
    };
    const char* host_names[] = {"host cpu", "host iowait", "host cpus"};
    // Requests each pod served per second in the hour, for the cost per 1,000 inferences.
    const std::pair<Metric, std::string> served_queries[] = {
        {Metric::requests_per_s, std::string("sum by (namespace, pod) (rate({__name__=~\"") + kServedCounters + "\"" +
                                     (o_.selector.empty() ? "" : "," + o_.selector) + "}[" + hour + "]))"}};
    const char* served_names[] = {"requests served"};
    size_t chunk = 0;
    if (auto error = chunk_hours(chunk)) return error;
    // The hours to ask: the window's, but those the store holds complete (and none when the store
    // was filled for this very end, by the longest window of the same refresh).
    std::vector<size_t> ask;
    for (size_t i = 0; i < hours_; ++i)
      if (store_.filled_for_end_s != now_ && !store_.complete(window_.hour(i))) ask.push_back(i);
    stats_.queried_s += static_cast<double>(hours_ - ask.size()) * kStepS;  // answered before
    stats_.hours_asked = static_cast<int>(ask.size());
    for (size_t i : ask) store_.clear_hour(window_.hour(i));
    const auto chunks = runs_of(ask, chunk);
    std::vector<Request> requests = over_chunks(gpu_queries, gpu_names.data(), chunks);
    const size_t gpu_requests = requests.size();
    for (auto& r : over_chunks(host_queries, host_names, chunks)) requests.push_back(std::move(r));
    const size_t host_requests = requests.size();
    for (auto& r : over_chunks(served_queries, served_names, chunks)) requests.push_back(std::move(r));
    auto error = run_and_take(requests, [&](size_t i, const QueryResult& result) {
      if (i < gpu_requests)
        take_gpu_answer(gpu_queries[i / chunks.size()].first, result);
      else if (i < host_requests)
        store_host_answer(store_, host_queries[(i - gpu_requests) / chunks.size()].first, result, window_);
      else
        store_served_answer(store_, result, window_);
    });
    if (!error) error = o_.use_recording_rules ? ask_unrecorded_hours(ask, chunk) : ask_minutes_by_subquery(ask, chunk);
    if (error) return error;
    // Hours answered in full and settled are not asked again.
    for (size_t i : ask) {
      const double at = hour_start(i) + kStepS;
      bool failed = std::any_of(stats_.failed_ranges.begin(), stats_.failed_ranges.end(),
                                [&](const auto& range) { return at >= range.first && at <= range.second; });
      if (!failed) store_.answered(window_.hour(i), now_);
    }
    store_.filled_for_end_s = now_;
    return std::nullopt;
  }

  // Evaluation times of runs of consecutive hours (window indices, ascending), `chunk` at most each.
  std::vector<std::pair<double, double>> runs_of(const std::vector<size_t>& hours, size_t chunk) const {
    std::vector<std::pair<double, double>> chunks;
    for (size_t k = 0; k < hours.size();) {
      size_t j = k + 1;
      while (j < hours.size() && hours[j] == hours[j - 1] + 1 && j - k < chunk) ++j;
      chunks.emplace_back(hour_start(hours[k]) + kStepS, hour_start(hours[j - 1]) + kStepS);
      k = j;
    }
    return chunks;
  }

  // Hours the recorded idle flag cannot answer, asked again by subqueries: hours in which a
  // series was scraped but not recorded (before the rule existed, or while its ruler was down),
  // and the hour the rule started in when series were scraped before it (recorded in part).
  std::optional<Error> ask_unrecorded_hours(const std::vector<size_t>& asked, size_t chunk) {
    std::vector<bool> unrecorded(hours_, false), recorded(hours_, false);
    size_t first_recorded = hours_;
    for (const auto& [id, entry] : data_)
      for (size_t i : asked) {
        const HourValues& h = hour(entry, i);
        if (!std::isnan(h[kFreshMinutes])) {
          recorded[i] = true;
          first_recorded = std::min(first_recorded, i);
        } else if (h[kCount] >= 1) {
          unrecorded[i] = true;
        }
      }
    if (first_recorded > 0 && first_recorded < hours_ && unrecorded[first_recorded - 1]) unrecorded[first_recorded] = true;
    std::vector<size_t> again;
    for (size_t i : asked) {
      stats_.hours_by_rule += recorded[i] && !unrecorded[i];
      if (unrecorded[i]) again.push_back(i);
    }
    stats_.hours_by_subquery += static_cast<int>(again.size());
    if (again.empty()) return std::nullopt;
    for (auto& [id, entry] : data_)
      for (size_t i : again)
        if (HourValues* h = entry.run.find(window_.hour(i))) {
          h->set(kFreshMinutes, kUnknown);
          h->set(kIdleMinutes, kUnknown);
        }
    return ask_minutes_by_subquery(again, chunk);
  }

  void record_failure(const QueryResult& r) {
    stats_.partial = true;
    ++stats_.failed_chunks;
    stats_.warnings += fmt::format("{} for {:.0f}..{:.0f}; ", r.message, r.from, r.to);
    stats_.failed_s += r.to - r.from + kStepS;
    if (std::find(stats_.failed_ranges.begin(), stats_.failed_ranges.end(), std::pair{r.from, r.to}) == stats_.failed_ranges.end())
      stats_.failed_ranges.emplace_back(r.from, r.to);
  }

  // An aggregate's answer into the store, its values times `scale` (steps into minutes).
  void take_gpu_answer(HourField field, const QueryResult& result, double scale = 1) {
    for (const auto& series : result.series) {
      Labels labels;
      std::string matchers;
      std::string id = series_id(series.metric, labels, &matchers);
      auto it = data_.find(id);
      if (it == data_.end()) {
        if (data_.size() >= input_limits().max_series) {
          ++stats_.over_series_limit;
          continue;
        }
        it = data_.emplace(id, Entry{labels, std::move(matchers), {}}).first;
      }
      for (const auto& [t, value] : series.points)
        if (auto i = window_.index_of(t)) it->second.run.at(window_.hour(*i)).set(field, value * scale);
    }
  }

  // Requests for the raw samples of a series (util, and memory when asked) in the window_s
  // before `at`.
  std::vector<Request> raw_requests(const std::string& what, const std::string& matchers, double at, double window_s, bool memory) const {
    std::string all = matchers;
    if (!o_.selector.empty()) all += (all.empty() ? "" : ",") + o_.selector;
    std::vector<Request> out;
    const char* metrics[] = {kUtilMetric, kMemoryMetric};
    for (size_t k = 0; k < (memory ? 2u : 1u); ++k) {
      Request r;
      r.what = what;
      r.promql = std::string(metrics[k]) + (all.empty() ? "" : "{" + all + "}") + "[" + window(window_s) + "]";
      r.at = at;
      out.push_back(std::move(r));
    }
    return out;
  }

  // The samples of a series in raw answers (util first, then memory when asked), or nothing if
  // the server failed.
  std::optional<std::vector<TelemetrySample>> raw_samples(const std::string& id, const Labels& labels, const Answer* answers,
                                                          size_t count) {
    std::vector<TelemetrySample> raw;
    for (size_t k = 0; k < count; ++k) {
      const auto& [metric, scale] = k == 0 ? std::pair{Metric::gpu_util_pct, 1.0} : std::pair{Metric::memory_used_bytes, 1048576.0};
      const QueryResult& r = answers[k].results.front();
      if (r.failure != QueryFailure::none) return std::nullopt;
      for (const auto& series : r.series)
        for (const auto& [t, value] : series.points) {
          TelemetrySample sample{&id, &labels, metric, t, value * scale};
          sample.in_range = outside_physical_range(sample) == nullptr;
          raw.push_back(sample);
        }
    }
    std::stable_sort(raw.begin(), raw.end(), [](const TelemetrySample& a, const TelemetrySample& b) { return a.time_s < b.time_s; });
    return raw;
  }

  // A series' first and last hours with samples, and its samples in all.
  struct Life {
    size_t first = 0, last = 0;
    double samples = 0;
  };
  Life life_of(const Entry& entry) const {
    Life life{hours_, 0, 0};
    for (size_t i = 0; i < hours_; ++i) {
      double n = hour(entry, i)[kCount];
      if (!(n >= 1)) continue;
      life.first = std::min(life.first, i);
      life.last = i;
      life.samples += n;
    }
    return life;
  }
  // A short-lived series: read raw, all its samples (read_short_lived_and_boundaries).
  bool read_raw_whole(const Entry& entry) const {
    Life life = life_of(entry);
    return life.samples >= 1 && life.samples <= kRawReadSamples && life.last - life.first < kRawReadHours;
  }

  // Series that live a few hours are read raw, by the files' rules: hourly sums cannot place a
  // series' first sample closer than the minute steps of a subquery, which is most of a short
  // pod's life. In the other series, the hours in which the series was stale for a minute or
  // more or after which it falls silent (its life's first and last hours, the edges of a gap)
  // are read raw for their first and last sample times; in the rest, fresh every minute, the samples follow each other and the
  // hour's span is the hour. Returns the series read raw.
  std::set<std::string> read_short_lived_and_boundaries() {
    std::vector<Request> requests;
    std::vector<const std::string*> short_lived;
    for (const auto& [id, entry] : data_) {
      if (!read_raw_whole(entry)) continue;
      Life life = life_of(entry);
      for (auto& r : raw_requests("raw: short-lived series", entry.matchers, hour_start(life.last) + kStepS,
                                  static_cast<double>(life.last - life.first + 1) * kStepS, true))
        requests.push_back(std::move(r));
      short_lived.push_back(&id);
    }
    std::set<std::string> read_raw;
    for (const auto* id : short_lived) read_raw.insert(*id);
    // Boundary hours by hour: one request for the fleet where many series need that hour.
    std::map<size_t, std::vector<std::string>> boundaries;
    double budget = kBoundaryRawBudgetSamples;
    for (const auto& [id, entry] : data_) {
      if (read_raw.count(id)) continue;
      for (size_t i = 0; i < hours_; ++i) {
        const HourValues& h = hour(entry, i);
        // Stale for a minute or more; or silent in the next hour, having stopped within this
        // hour's last five minutes, which staleness shows as fresh. Placed by an earlier refresh:
        // not read again.
        bool goes_silent = i + 1 < hours_ && !(hour(entry, i + 1)[kCount] >= 1);
        if (!(h[kCount] >= 1) || !(h[kFreshMinutes] < 59.5 || goes_silent) || !std::isnan(h[kLast])) continue;
        if ((budget -= h[kCount] + 5) < 0) break;
        boundaries[i].push_back(id);
      }
    }
    std::vector<Request> boundary_requests;
    std::vector<std::pair<size_t, const std::string*>> boundary_reads;  // hour, series (null: the fleet)
    for (const auto& [hour, ids] : boundaries) {
      // Lookback reaches 5 minutes before the hour: the previous sample, when the series was fresh then.
      double at = hour_start(hour) + kStepS, window_s = kStepS + 300;
      if (ids.size() > kBoundaryFleetQuerySeries) {
        for (auto& r : raw_requests("raw: boundary hours", "", at, window_s, false)) boundary_requests.push_back(std::move(r));
        boundary_reads.emplace_back(hour, nullptr);
      } else {
        for (const auto& id : ids) {
          for (auto& r : raw_requests("raw: boundary hours", data_[id].matchers, at, window_s, false))
            boundary_requests.push_back(std::move(r));
          boundary_reads.emplace_back(hour, &id);
        }
      }
    }
    run_grouped(requests, 2, [&](size_t i, const Answer* answers) {
      const std::string& id = *short_lived[i / 2];
      auto raw = raw_samples(id, data_[id].labels, answers, 2);
      if (!raw) {
        read_raw.erase(id);  // the hourly sums stand
        return;
      }
      for (const auto& sample : *raw) aggregator_.add(sample);
    });
    run_grouped(boundary_requests, 1, [&](size_t k, const Answer* answer) {
      const auto& [hour, one] = boundary_reads[k];
      const QueryResult& r = answer->results.front();
      if (r.failure != QueryFailure::none) return;  // the hours' spans stand
      for (const auto& series : r.series) {
        Labels labels;
        std::string id = series_id(series.metric, labels);
        if (one && id != *one) continue;
        auto it = data_.find(id);
        if (it == data_.end() || read_raw.count(id)) continue;
        if (HourValues* h = it->second.run.find(window_.hour(hour))) place_hour(*h, hour_start(hour), series.points, closed_windows_);
      }
    });
    return read_raw;
  }

  // Long series whose hours may hide gaps are read raw (most irregular first, within a budget):
  // the files' rule cuts each interval at 3x the median spacing, which hourly sums cannot see.
  std::vector<std::string> read_irregular(const std::set<std::string>& read_raw) {
    struct RawRead {
      double hidden_room_s;
      const std::string* id;
      Life life;
    };
    std::vector<RawRead> candidates;
    for (const auto& [id, entry] : data_) {
      if (read_raw.count(id)) continue;
      Life life = life_of(entry);
      if (life.samples < 1 || life.samples > kRawReadSamples) continue;
      std::vector<HourSpan> spans;
      for (size_t i = life.first; i <= life.last; ++i) {
        const HourValues& h = hour(entry, i);
        if (!(h[kCount] >= 1)) continue;
        auto [first, last] = first_last(h, hour_start(i));
        double intervals = hour_intervals(h[kCount], first, hour_start(i));
        if (intervals >= 1 && last > first) spans.push_back({last - first, intervals});
      }
      double room_s = hidden_gap_room_s(spans);
      if (room_s > 0) candidates.push_back({room_s, &id, life});
    }
    std::sort(candidates.begin(), candidates.end(), [](const RawRead& a, const RawRead& b) {
      return a.hidden_room_s != b.hidden_room_s ? a.hidden_room_s > b.hidden_room_s : *a.id < *b.id;
    });
    std::vector<Request> requests;
    std::vector<const RawRead*> chosen;
    double samples = 0;
    for (const auto& c : candidates) {
      if (samples + c.life.samples > kIrregularRawBudgetSamples) continue;
      samples += c.life.samples;
      for (auto& r : raw_requests("raw: irregular series", data_[*c.id].matchers, hour_start(c.life.last) + kStepS,
                                  static_cast<double>(c.life.last - c.life.first + 1) * kStepS, true))
        requests.push_back(std::move(r));
      chosen.push_back(&c);
    }
    std::vector<std::string> read;
    run_grouped(requests, 2, [&](size_t i, const Answer* answers) {
      const std::string& id = *chosen[i / 2]->id;
      auto raw = raw_samples(id, data_[id].labels, answers, 2);
      if (!raw) return;  // the hourly sums stand
      for (const auto& sample : *raw) aggregator_.add(sample);
      read.push_back(id);
    });
    return read;
  }

  // Hours holding an impossible value are summarized from their raw samples, skipping those.
  void read_impossible_hours(const std::set<std::string>& read_raw) {
    std::vector<Request> requests;
    std::vector<std::pair<std::string, size_t>> hours;
    for (const auto& [id, entry] : data_) {
      if (read_raw.count(id)) continue;
      for (size_t i = 0; i < hours_; ++i) {
        if (std::isnan(hour(entry, i)[kImpossible])) continue;
        for (auto& r : raw_requests("raw: hours with impossible values", entry.matchers, hour_start(i) + kStepS, kStepS, true))
          requests.push_back(std::move(r));
        hours.emplace_back(id, i);
      }
    }
    run_grouped(requests, 2, [&](size_t k, const Answer* answers) {
      const auto& [id, i] = hours[k / 2];
      auto raw = raw_samples(id, data_[id].labels, answers, 2);
      if (raw) impossible_[{id, i}] = std::move(*raw);
    });
  }

  // A series' hours, as the server summed them, into the aggregator.
  void add_hours(const std::string& id, const Entry& entry) {
    std::vector<TelemetryAggregator::HourSummary> hours;
    std::vector<double> fresh_s;
    long long out_of_range = 0;
    for (size_t i = 0; i < hours_; ++i) {
      const HourValues& v = hour(entry, i);
      auto known = [&](HourField f) { return std::isnan(v[f]) ? std::nullopt : std::optional<double>(v[f]); };
      if (!v.any_known()) continue;
      TelemetryAggregator::HourSummary h;
      h.hour_start_s = hour_start(i);
      h.samples = known(kCount).value_or(0);
      h.util_mean = known(kMean).value_or(0);
      double fresh = known(kFreshMinutes).value_or(60);
      h.idle_samples = fresh > 0 ? known(kIdleMinutes).value_or(0) / fresh * h.samples : 0;
      std::tie(h.first_s, h.last_s) = first_last(v, h.hour_start_s);
      h.memory_max = known(kMemMax);
      h.memory_p95 = known(kMemP95);
      auto impossible = impossible_.find({id, i});
      if (impossible != impossible_.end()) out_of_range += summarize_hour(impossible->second, h);
      hours.push_back(h);
      fresh_s.push_back(60 * fresh);
    }
    PushedCoverage coverage = pushed_coverage(hours, fresh_s);
    for (size_t i = 0; i < hours.size(); ++i) {
      hours[i].covered_s = coverage.covered_s[i];
      aggregator_.add_hour(id, entry.labels, hours[i]);
    }
    aggregator_.add_gaps(id, coverage.gaps, coverage.gap_s);
    aggregator_.add_out_of_range(id, out_of_range);
  }

  const PrometheusQueryOptions& o_;
  const PrometheusUrl& url_;
  PushDownStore& store_;
  std::map<std::string, SeriesHours>& data_;  // the store's series: labels, matchers and hours
  TelemetryAggregator& aggregator_;
  PrometheusStats& stats_;
  double now_ = 0, start_ = 0, end_ = 0;  // the window [start_, end_) in whole hours, up to the hour holding now_
  WindowHours window_;                    // the same window, by hours since the epoch
  size_t hours_ = 0;
  bool closed_windows_ = false;
  std::string hour_, util_, memory_, idle_rule_;
  std::map<std::pair<std::string, size_t>, std::vector<TelemetrySample>> impossible_;  // raw samples of hours with impossible values
  bool answered_ = false;                                                              // the server answered at least one query
  int chunks_done_ = 0, chunks_total_ = 0;
};

}  // namespace

std::optional<Error> audit_from_prometheus(const PrometheusQueryOptions& o, TelemetryAggregator& aggregator,
                                           PrometheusStats& stats) {
  auto url = split_prometheus_url(o.url);
  if (!url) return Error{o.url, 0, "--prometheus", "expected a URL like http://localhost:9090"};
  PushDownStore own;
  PushDownReader reader(o, *url, o.store ? *o.store : own, aggregator, stats);
  auto error = reader.read();
  release_parser_memory();
  return error;
}

}  // namespace gw
