#include "telemetry/aggregate.h"

#include <algorithm>
#include <cmath>

namespace gw {

double SeriesAggregate::coverage_hours() const {
  if (timed_samples < 2) return 0;
  double span = last_s - first_s;
  double gap = span / static_cast<double>(timed_samples - 1);
  return std::min(span, gap * static_cast<double>(timed_samples)) / 3600.0;
}

std::string SeriesAggregate::label(const std::string& key) const {
  for (const auto& [k, v] : labels)
    if (k == key) return v;
  return {};
}

void TelemetryAggregator::add(const TelemetrySample& s) {
  if (s.series == last_series_) {
    ++samples_;
    accumulate(*last_aggregate_, s);
    return;
  }
  SeriesAggregate*& slot = by_address_[s.series];
  if (!slot) {
    auto it = series_.find(*s.series);
    if (it == series_.end()) {
      it = series_.emplace(*s.series, SeriesAggregate{}).first;
      it->second.labels = *s.labels;
    }
    slot = &it->second;
  }
  last_series_ = s.series;
  last_aggregate_ = slot;
  ++samples_;
  accumulate(*slot, s);
}

void TelemetryAggregator::accumulate(SeriesAggregate& a, const TelemetrySample& s) {
  switch (s.metric) {
    case Metric::gpu_util_pct: {
      ++a.util_samples;
      a.util_sum += s.value;
      if (s.value < idle_threshold_) ++a.idle_samples;
      // Timestamps are seconds since the epoch (or the data's own origin): the hour of the week
      // counts from Thursday 1970-01-01 00:00 UTC, shifted to start on Monday.
      // Hours are left-open, (h, h + 1h], as PromQL's range windows are, so files and
      // Prometheus push-down put a sample on an hour boundary in the same hour.
      long long hour = static_cast<long long>(std::floor((s.time_s - 1e-3) / 3600.0));
      size_t how = static_cast<size_t>(((hour + 72) % 168 + 168) % 168);
      a.hour_sum[how] += s.value;
      ++a.hour_count[how];
      ++a.timed_samples;
      a.first_s = std::min(a.first_s, s.time_s);
      a.last_s = std::max(a.last_s, s.time_s);
      break;
    }
    case Metric::sm_active: ++a.sm_samples; a.sm_sum += s.value; break;
    case Metric::tensor_active: ++a.tensor_samples; a.tensor_sum += s.value; break;
    case Metric::memory_used_bytes:
      a.memory_peak = std::max(a.memory_peak, s.value);
      a.memory.add(s.value / (1024.0 * 1024.0 * 1024.0));  // GiB: within the histogram's range
      break;
    case Metric::memory_total_bytes: a.memory_total = std::max(a.memory_total, s.value); break;
    case Metric::power_w: ++a.power_samples; a.power_sum += s.value; break;
    case Metric::cpu_util_pct: ++a.cpu_samples; a.cpu_sum += s.value; break;
    case Metric::cpu_iowait_pct: ++a.iowait_samples; a.iowait_sum += s.value; break;
    case Metric::host_cpus: a.host_cpus = std::max(a.host_cpus, static_cast<int>(s.value)); break;
    case Metric::requests_per_s: ++a.requests_samples; a.requests_sum += s.value; break;
  }
}

void TelemetryAggregator::add_mean(const std::string& series, const Labels& labels, Metric metric, double mean,
                                   double samples) {
  auto it = series_.find(series);
  if (it == series_.end()) {
    it = series_.emplace(series, SeriesAggregate{}).first;
    it->second.labels = labels;
  }
  SeriesAggregate& a = it->second;
  long long n = static_cast<long long>(std::llround(samples));
  switch (metric) {
    case Metric::cpu_util_pct: a.cpu_samples += n; a.cpu_sum += mean * samples; break;
    case Metric::cpu_iowait_pct: a.iowait_samples += n; a.iowait_sum += mean * samples; break;
    case Metric::host_cpus: a.host_cpus = std::max(a.host_cpus, static_cast<int>(std::lround(mean))); break;
    default: break;  // GPU metrics come through add_hour
  }
}

void TelemetryAggregator::add_hour(const std::string& series, const Labels& labels, const HourSummary& h) {
  auto it = series_.find(series);
  if (it == series_.end()) {
    it = series_.emplace(series, SeriesAggregate{}).first;
    it->second.labels = labels;
  }
  SeriesAggregate& a = it->second;
  if (std::abs(h.hour_start_s) > 1e11 || !(h.samples < 1e15)) return;  // not a time or a count: a broken server
  if (h.samples > 0) {
    long long n = static_cast<long long>(std::llround(h.samples));
    a.util_samples += n;
    a.util_sum += h.util_mean * h.samples;
    a.idle_samples += static_cast<long long>(std::llround(h.idle_samples));
    long long hour = static_cast<long long>(std::floor(h.hour_start_s / 3600.0));
    size_t how = static_cast<size_t>(((hour + 72) % 168 + 168) % 168);
    a.hour_sum[how] += h.util_mean * h.samples;
    a.hour_count[how] += n;
    a.timed_samples += n;
    a.first_s = std::min(a.first_s, h.first_s);
    a.last_s = std::max(a.last_s, h.last_s);
    samples_ += n;
  }
  if (h.memory_max) a.memory_peak = std::max(a.memory_peak, *h.memory_max);
  if (h.memory_p95) a.memory.add(*h.memory_p95 / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace gw
