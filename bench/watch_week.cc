// A week of `gpuwise watch` refreshes in minutes: the watcher (watch/watcher.h, the same object the
// command runs) is driven with a simulated clock against a Prometheus that holds the history, one
// refresh per simulated hour, its /metrics rendered after each as a scrape would. Prints the
// resident memory, the refresh seconds and the series-hours kept through the week, and exits 1
// when memory is not flat (resident memory after the last refresh more than 10% above the one
// after the first simulated day) or the peak passes 300 MiB, or a refresh fails.
// Usage: gpuwise_watch_week URL END_S [HOURS] [WINDOW] [WINDOWS]
//   END_S: the end of the history (unix seconds); the week's refreshes end there.
//   HOURS (168): refreshes, one per simulated hour, the first at END_S - HOURS h.
//   WINDOW (7d) and WINDOWS (1h,24h,7d): the primary and rolling windows, as `watch` takes them;
//   the history must reach the longest window before the first refresh for the store to be full
//   from the start.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/numbers.h"
#include "telemetry/prometheus_client.h"
#include "watch/watcher.h"

namespace {

// VmRSS or VmHWM of this process, in KiB.
long status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  return 0;
}

// The value of an unlabelled sample in an exposition, or -1.
double sample(const std::string& metrics, const std::string& name) {
  const std::string key = "\n" + name + " ";
  const size_t at = metrics.find(key);
  return at == std::string::npos ? -1 : std::atof(metrics.c_str() + at + key.size());
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s URL END_S [HOURS] [WINDOW] [WINDOWS]\n", argv[0]);
    return 2;
  }
  gw::use_watcher_malloc_settings();  // as `gpuwise watch` runs
  const double end_s = std::atof(argv[2]);
  const int hours = argc > 3 ? std::atoi(argv[3]) : 168;
  const std::string window = argc > 4 ? argv[4] : "7d";
  const std::string windows = argc > 5 ? argv[5] : "1h,24h,7d";
  if (hours < 25) {
    std::fprintf(stderr, "HOURS must be 25 or more: memory is compared with the first simulated day's\n");
    return 2;
  }
  auto catalog = gw::Catalog::embedded();
  if (!catalog.ok()) {
    std::fprintf(stderr, "%s\n", catalog.error().to_string().c_str());
    return 2;
  }
  gw::WatchOptions options;
  options.query.url = argv[1];
  const auto window_s = gw::parse_duration_s(window);
  if (!window_s || *window_s < 3600) {
    std::fprintf(stderr, "WINDOW: '%s' is not a duration of an hour or more\n", window.c_str());
    return 2;
  }
  options.query.range_s = *window_s;
  options.window_text = window;
  auto parsed_windows = gw::parse_watch_windows(windows);
  if (!parsed_windows.ok()) {
    std::fprintf(stderr, "WINDOWS: %s\n", parsed_windows.error().message.c_str());
    return 2;
  }
  options.windows = std::move(parsed_windows.value());
  options.audit.min_coverage_hours = std::min(30.0, 0.5 * options.query.range_s / 3600);
  gw::Watcher watcher(catalog.value(), options);

  std::printf("%d hourly refreshes of a %s watcher (windows %s), simulated time ending %.0f\n", hours, window.c_str(),
              windows.c_str(), end_s);
  std::printf("%8s %10s %12s %9s %9s %14s %12s\n", "refresh", "seconds", "hours asked", "RSS MiB", "peak MiB", "hours kept",
              "metrics MB");
  long rss_after_day_kib = 0, rss_last_kib = 0, rss_most_after_day_kib = 0;
  double slowest_warm_s = 0, total_warm_s = 0;
  int failed = 0;
  for (int refresh = 1; refresh <= hours; ++refresh) {
    const double now_s = end_s - (hours - refresh) * 3600.0;
    const auto start = std::chrono::steady_clock::now();
    if (!watcher.refresh(now_s)) {
      std::fprintf(stderr, "refresh %d failed: %s\n", refresh, watcher.last_error().c_str());
      ++failed;
      continue;
    }
    const double refresh_s = seconds_since(start);
    const std::string metrics = watcher.metrics(now_s);  // a scrape, as Prometheus would take it
    const long rss_kib = status_kib("VmRSS");
    if (refresh > 1) {
      slowest_warm_s = std::max(slowest_warm_s, refresh_s);
      total_warm_s += refresh_s;
    }
    if (refresh == 24) rss_after_day_kib = rss_kib;
    if (refresh > 24) rss_most_after_day_kib = std::max(rss_most_after_day_kib, rss_kib);
    rss_last_kib = rss_kib;
    if (refresh <= 2 || refresh % 12 == 0 || refresh == hours)
      std::printf("%8d %10.2f %12.0f %9.0f %9.0f %14.0f %12.2f\n", refresh, refresh_s,
                  sample(metrics, "gpuwise_watch_asked_span_seconds") / 3600, rss_kib / 1024.0, status_kib("VmHWM") / 1024.0,
                  sample(metrics, "gpuwise_watch_hourly_answers_kept"), metrics.size() / 1e6);
    std::fflush(stdout);
  }
  const long peak_kib = status_kib("VmHWM");
  std::printf("RSS after the first day %.0f MiB, after the week %.0f MiB (most %.0f MiB after the first day), peak %.0f MiB; "
              "refreshes after the first: %.2f s mean, %.2f s slowest\n",
              rss_after_day_kib / 1024.0, rss_last_kib / 1024.0, rss_most_after_day_kib / 1024.0, peak_kib / 1024.0,
              total_warm_s / std::max(1, hours - 1), slowest_warm_s);
  int status = 0;
  if (failed) {
    std::printf("  %d refreshes failed\n", failed);
    status = 1;
  }
  if (rss_last_kib > rss_after_day_kib * 11 / 10) {
    std::printf("  memory grew past 10%% after the first day\n");
    status = 1;
  }
  if (peak_kib > 300 * 1024) {
    std::printf("  peak over the 300 MB target\n");
    status = 1;
  }
  return status;
}
