// gpuwise watch --prometheus URL: the audit run continuously, served as Prometheus metrics, a
// live page and JSON (watch/watcher.h).
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>

#include <fmt/format.h>

#include "cli/context.h"
#include "cli/prometheus_options.h"
#include "core/numbers.h"
#include "watch/watcher.h"

namespace gw {

namespace {

struct WatchArgs {
  std::string prometheus, listen = "127.0.0.1:9464", interval = "5m", window = "7d", windows = "1h,24h,7d,14d", settle = "15m";
  std::string selector, group_by, offering, accelerator;
  std::string metrics_token_file;
  double usd_per_gpu_hour = 0, min_coverage_hours = -1;
  bool once = false;
  PrometheusQueryOptions query;
  PrometheusCredentialArgs credentials;
};

std::atomic<bool> stop_requested{false};
extern "C" void request_stop(int) { stop_requested.store(true); }

// host:port, host defaulting to loopback.
std::pair<std::string, int> listen_address(const std::string& text) {
  const size_t colon = text.rfind(':');
  std::string host = colon == std::string::npos ? "127.0.0.1" : text.substr(0, colon);
  const std::string port_text = colon == std::string::npos ? text : text.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port < 0 || port > 65535)
    fail("--listen", "'" + text + "' is not host:port (127.0.0.1:9464)");
  return {host.empty() ? "127.0.0.1" : host, static_cast<int>(port)};
}

// The token that guards the served data: from a file (first line; --metrics-token-file or
// $GPUWISE_WATCH_TOKEN_FILE, systemd's credentials) or $GPUWISE_WATCH_TOKEN, never from the
// command line, where every user of the host can read it.
std::string metrics_token(std::string file) {
  if (const char* set = std::getenv("GPUWISE_WATCH_TOKEN_FILE"); file.empty() && set && *set) file = set;
  if (!file.empty()) return read_secret_file("--metrics-token-file", file);
  const char* set = std::getenv("GPUWISE_WATCH_TOKEN");
  return set ? set : "";
}

int run_watch_command(CommandContext& context, const WatchArgs& args) {
  use_watcher_malloc_settings();
  WatchOptions options;
  options.query = args.query;
  options.query.url = args.prometheus;
  options.query.selector = args.selector;
  options.query.credentials = prometheus_credentials(args.credentials);
  auto window = parse_duration_s(args.window);
  if (!window || *window < 3600) fail("--window", "'" + args.window + "' is not a duration of an hour or more, like 7d or 24h");
  options.query.range_s = *window;
  options.window_text = args.window;
  auto windows = parse_watch_windows(args.windows);
  if (!windows.ok()) fail("--windows", windows.error().message);
  options.windows = std::move(windows.value());
  auto settle = parse_duration_s(args.settle);
  if (!settle) fail("--settle", "'" + args.settle + "' is not a duration, like 15m");
  options.settle_s = *settle;
  auto interval = parse_duration_s(args.interval);
  if (!interval || *interval < 1) fail("--interval", "'" + args.interval + "' is not a duration of a second or more, like 5m");
  options.interval_s = *interval;
  // Findings need this much data; by default most of the window (at most the audit's 30 hours).
  options.audit.min_coverage_hours = args.min_coverage_hours >= 0 ? args.min_coverage_hours : std::min(30.0, 0.5 * *window / 3600);
  options.audit.group_by = args.group_by;
  options.audit.offering = args.offering;
  options.audit.accelerator = args.accelerator;
  if (args.usd_per_gpu_hour > 0) options.audit.usd_per_gpu_hour = args.usd_per_gpu_hour;
  options.metrics_token = metrics_token(args.metrics_token_file);
  Watcher watcher(context.catalog(), options);
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (args.once) {
    const bool ok = watcher.refresh(now);
    if (!ok) fail("--prometheus", watcher.last_error());
    context.emit(watcher.metrics(now));
    return 0;
  }
  auto [host, port] = listen_address(args.listen);
  std::string error;
  auto server = make_http_server(error);
  if (!server) fail("--listen", error);
  if (!server->bind(host, port, error)) fail("--listen", error);
  context.note(fmt::format("serving http://{}:{}/metrics, / and /api/v1/findings; auditing {} of {} every {}", host,
                           server->port(), args.window, args.prometheus, args.interval));
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  run_watch(watcher, *server, stop_requested);
  return 0;
}

}  // namespace

void add_watch_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* watch = app.add_subcommand("watch", "Audit the fleet's Prometheus continuously: serve GPU cost and waste as metrics, a live page and JSON");
  auto args = std::make_shared<WatchArgs>();
  watch->add_option("--prometheus", args->prometheus, "The fleet's Prometheus-compatible server (http://host:9090)")->required();
  watch->add_option("--listen", args->listen, "Address to serve on (loopback unless told otherwise)")->capture_default_str();
  watch->add_option("--interval", args->interval, "Time between refreshes")->capture_default_str();
  watch->add_option("--window", args->window, "The primary window, ending now: per-GPU metrics, findings, page and JSON")
      ->capture_default_str();
  watch->add_option("--windows", args->windows, "Rolling windows audited beside it at every refresh (fleet and group metrics, label window)")
      ->capture_default_str();
  watch->add_option("--settle", args->settle, "An hour that ended this long ago is complete in Prometheus: kept, not asked again")
      ->capture_default_str();
  watch->add_option("--selector", args->selector, "Extra label matchers for the queries, e.g. namespace=\"ml\"");
  watch->add_option("--group-by", args->group_by, "Attribute cost to this label (namespace, team, ...): gpuwise_group_* metrics");
  watch->add_option("--offering", args->offering, "The instance type that runs (prices per GPU from it)");
  watch->add_option("--accelerator", args->accelerator, "The GPU model when the telemetry does not name it");
  watch->add_option("--usd-per-gpu-hour", args->usd_per_gpu_hour, "Price per GPU-hour (default: the catalog's)")->check(CLI::Range(0.0, 1e5));
  watch->add_option("--min-coverage-hours", args->min_coverage_hours,
                    "Hours of data a finding needs (default: half the window, at most 30)")
      ->check(CLI::Range(0.0, 1e6));
  watch->add_option("--metrics-token-file", args->metrics_token_file,
                    "Serve /metrics, / and the API only with 'Authorization: Bearer <token>', the token read from this file "
                    "(or $GPUWISE_WATCH_TOKEN_FILE; or the token in $GPUWISE_WATCH_TOKEN)");
  add_prometheus_options(*watch, args->query, args->credentials);
  watch->add_flag("--once", args->once, "Refresh once, write the metrics to stdout (or --output) and exit");
  watch->callback([&context, &action, args] { action = [&context, args] { return run_watch_command(context, *args); }; });
}

}  // namespace gw
