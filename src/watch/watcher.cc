#include "watch/watcher.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "core/numbers.h"
#include "core/text.h"
#include "report/document.h"
#include "telemetry/prometheus_client.h"

namespace gw {

namespace {

double wall_clock_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

HttpReply reply(int status, std::string content_type, std::string body) {
  HttpReply r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

// The audit page, asking the browser to load it again every interval.
std::string refreshing(std::string html, double interval_s) {
  const std::string meta = fmt::format("<meta http-equiv=\"refresh\" content=\"{:.0f}\">", std::max(5.0, interval_s));
  size_t head = html.find("<head>");
  if (head != std::string::npos) html.insert(head + 6, meta);
  return html;
}

}  // namespace

Result<std::vector<std::pair<std::string, double>>> parse_watch_windows(std::string_view text) {
  std::vector<std::pair<std::string, double>> windows;
  for (const auto& piece : split(text, ',')) {
    std::string window(trim(piece));
    if (window.empty()) continue;
    auto seconds = parse_duration_s(window);
    if (!seconds || *seconds < 3600)
      return Error{"", 0, "", "'" + window + "' is not a duration of an hour or more, like 1h, 24h, 7d or 14d"};
    windows.emplace_back(std::move(window), *seconds);
  }
  return windows;
}

void use_watcher_malloc_settings() {
#ifdef __GLIBC__
  // One malloc arena: each query thread's own arena keeps what it freed (pieces of answers), and
  // a watcher at 10,000 GPUs held 560 MiB instead of 300; the threads wait on the server, not on
  // malloc (a refresh 6.5 s with one arena, 8.1 s with the default).
  mallopt(M_ARENA_MAX, 1);
  // Blocks of 1 MiB or more (answers, the 13 MB exposition, per-window tables) mapped and
  // unmapped whole: glibc otherwise raises this threshold after each such block is freed, the
  // next ones land in the heap and a week of hourly refreshes at 10,000 GPUs peaked at 311 MiB
  // (272 MiB with the threshold fixed; resident memory 218 and 196 MiB after a day).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

Watcher::Watcher(const Catalog& catalog, WatchOptions options)
    : catalog_(catalog), options_(std::move(options)), store_(options_.settle_s) {
  health_.window_s = options_.query.range_s;
}

bool Watcher::refresh(double now_s) {
  std::lock_guard<std::mutex> one_at_a_time(refresh_mutex_);
  // The longest window first: it asks Prometheus for what the store lacks; the others find
  // every hour in the store.
  struct Window {
    std::string name;
    double seconds;
    bool primary;
  };
  std::vector<Window> windows = {{options_.window_text, options_.query.range_s, true}};
  for (const auto& [name, seconds] : options_.windows)
    if (name != options_.window_text) windows.push_back({name, seconds, false});
  std::stable_sort(windows.begin(), windows.end(), [](const Window& a, const Window& b) { return a.seconds > b.seconds; });
  const auto started = std::chrono::steady_clock::now();
  store_.filled_for_end_s = 0;  // a new refresh asks again what has not settled
  std::vector<AuditRun> runs;
  runs.reserve(windows.size());
  std::string error;
  std::vector<Window> audited;
  for (const auto& w : windows) {
    AuditInputs in;
    in.prometheus = options_.query;
    in.prometheus->range_s = w.seconds;
    in.prometheus->end_s = now_s;
    in.prometheus->store = &store_;
    in.options = options_.audit;
    if (!w.primary) in.options.min_coverage_hours = std::min(in.options.min_coverage_hours, 0.5 * w.seconds / 3600);
    auto run = audit_telemetry(catalog_, in);
    if (!run.ok()) {
      // The longest window asks Prometheus and the primary one is what the watcher serves: either
      // failing fails the refresh. Another window without data (an hour in which nothing
      // reported) is left out of this refresh's figures.
      if (runs.empty() || w.primary) {
        error = run.error().to_string();
        break;
      }
      continue;
    }
    // Beside the primary window only the fleet's and the groups' figures are exported.
    if (!w.primary) run.value().report.series = {};
    runs.push_back(std::move(run.value()));
    audited.push_back(w);
  }
  store_.forget_before(static_cast<long long>(std::ceil(now_s / 3600)) - static_cast<long long>(std::ceil(windows.front().seconds / 3600)));
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::shared_ptr<Snapshot> next;
  if (error.empty()) {
    next = std::make_shared<Snapshot>();
    std::vector<WindowAudit> audits;
    size_t primary = 0;
    for (size_t k = 0; k < audited.size(); ++k) {
      audits.push_back({audited[k].name, &runs[k], audited[k].primary});
      if (audited[k].primary) primary = k;
    }
    next->fleet_metrics = fleet_exposition(audits, options_.audit.group_by);
    next->prometheus = runs.front().prometheus;  // the longest window's: what was asked this time
    next->run = std::move(runs[primary]);
    runs.clear();
  }
  long long hours_kept = 0;  // counted outside the lock the scrapes take
  for (const auto& [id, series] : store_.series) hours_kept += static_cast<long long>(series.run.hours.size());
#ifdef __GLIBC__
  // The audit's working memory (answers, aggregates) is freed by now; hand it back to the
  // system, so that a watcher idle between refreshes holds only what it serves.
  malloc_trim(0);
#endif
  std::lock_guard<std::mutex> lock(mutex_);
  last_attempt_s_ = now_s;
  if (!next) {
    ++health_.refreshes_failed;
    ++failures_in_a_row_;
    last_error_ = error;
    return false;
  }
  ++health_.refreshes_ok;
  failures_in_a_row_ = 0;
  last_error_.clear();
  health_.last_success_s = now_s;
  health_.last_refresh_seconds = took_s;
  health_.partial = next->prometheus.partial;
  health_.missing_fraction = next->prometheus.missing_fraction();
  health_.prometheus_queries += next->prometheus.queries;
  health_.prometheus_retries += next->prometheus.retries;
  health_.hours_asked = next->prometheus.hours_asked;
  health_.hours_kept = hours_kept;
  snapshot_ = std::move(next);
  return true;
}

double Watcher::next_refresh_s() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (last_attempt_s_ == 0) return 0;
  if (failures_in_a_row_ == 0) return last_attempt_s_ + options_.interval_s;
  const double backoff = options_.first_retry_s * std::pow(2.0, std::min(failures_in_a_row_ - 1, 20));
  return last_attempt_s_ + std::min(backoff, options_.interval_s);
}

bool Watcher::ready() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return snapshot_ != nullptr;
}

std::string Watcher::last_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_error_;
}

std::string Watcher::metrics(double now_s) const {
  std::shared_ptr<const Snapshot> snapshot;
  WatchHealth health;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    snapshot = snapshot_;
    health = health_;
  }
  health.now_s = now_s;
  if (!snapshot) return health_exposition(health, 0);
  return snapshot->fleet_metrics + health_exposition(health, snapshot->run.report.series.size());
}

HttpReply Watcher::answer(const HttpRequest& request, double now_s) const {
  const std::string& path = request.path;
  if (path == "/healthz") return reply(200, "text/plain; charset=utf-8", "ok\n");
  if (path == "/readyz") {
    if (ready()) return reply(200, "text/plain; charset=utf-8", "ready\n");
    return reply(503, "text/plain; charset=utf-8", "no refresh has succeeded yet: " + last_error() + "\n");
  }
  if (path != "/metrics" && path != "/" && path != "/api/v1/findings")
    return reply(404, "text/plain; charset=utf-8", "not found; try /metrics, /, /api/v1/findings, /healthz or /readyz\n");
  if (!options_.metrics_token.empty() && request.authorization != "Bearer " + options_.metrics_token)
    return reply(401, "text/plain; charset=utf-8", "a bearer token is required\n");
  if (path == "/metrics") return reply(200, "text/plain; version=0.0.4; charset=utf-8", metrics(now_s));
  std::shared_ptr<const Snapshot> snapshot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    snapshot = snapshot_;
  }
  if (!snapshot) return reply(503, "text/plain; charset=utf-8", "no refresh has succeeded yet: " + last_error() + "\n");
  if (path == "/") {
    // Drawn when asked, as the JSON is: a refresh then holds only what /metrics serves.
    auto page = render_html(audit_run_document(snapshot->run, options_.audit.group_by, 50));
    if (!page.ok())
      return reply(500, "text/html; charset=utf-8",
                   "<!doctype html><title>gpuwise watch</title><p>The page could not be drawn: " + page.error().to_string() + "</p>");
    return reply(200, "text/html; charset=utf-8", refreshing(page.value(), options_.interval_s));
  }
  // Rendered when asked: 30 MB of JSON for 10,000 GPUs is not worth holding between refreshes.
  return reply(200, "application/json", to_json(snapshot->run).dump());
}

void run_watch(Watcher& watcher, HttpServer& server, const std::atomic<bool>& stop) {
  std::thread serving([&] { server.serve([&watcher](const HttpRequest& r) { return watcher.answer(r, wall_clock_s()); }); });
  while (!stop.load()) {
    const double now = wall_clock_s();
    if (now >= watcher.next_refresh_s()) watcher.refresh(now);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  server.stop();
  serving.join();
}

}  // namespace gw
