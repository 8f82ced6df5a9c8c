#include "watch/watcher.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "report/document.h"

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

Watcher::Watcher(const Catalog& catalog, WatchOptions options) : catalog_(catalog), options_(std::move(options)) {
  health_.window_s = options_.query.range_s;
}

bool Watcher::refresh(double now_s) {
  AuditInputs in;
  in.prometheus = options_.query;
  in.prometheus->end_s = now_s;
  in.options = options_.audit;
  const auto started = std::chrono::steady_clock::now();
  auto run = audit_telemetry(catalog_, in);
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::shared_ptr<Snapshot> next;
  std::string error;
  if (run.ok()) {
    next = std::make_shared<Snapshot>();
    next->run = std::move(run.value());
    next->fleet_metrics = fleet_exposition(next->run, options_.window_text, options_.audit.group_by);
    next->findings_json = to_json(next->run).dump();
    auto page = render_html(audit_run_document(next->run, options_.audit.group_by, 50));
    next->page_html = page.ok() ? refreshing(page.value(), options_.interval_s)
                                : "<!doctype html><title>gpuwise watch</title><p>The page could not be drawn: " +
                                      page.error().to_string() + "</p>";
  } else {
    error = run.error().to_string();
  }
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
  health_.partial = next->run.prometheus.partial;
  health_.missing_fraction = next->run.prometheus.missing_fraction();
  health_.prometheus_queries += next->run.prometheus.queries;
  health_.prometheus_retries += next->run.prometheus.retries;
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
  if (path == "/") return reply(200, "text/html; charset=utf-8", snapshot->page_html);
  return reply(200, "application/json", snapshot->findings_json);
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
