#include "telemetry/aggregate.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace gw {

namespace {
constexpr double kIntervalMin_s = 1e-3;
const double kIntervalLogGrowth = std::log(1.05);
constexpr int kIntervalBins = 520;  // up to ~1e8 s

int interval_bin(double interval_s) {
  if (interval_s <= kIntervalMin_s) return 0;
  return std::min(kIntervalBins - 1, static_cast<int>(std::log(interval_s / kIntervalMin_s) / kIntervalLogGrowth) + 1);
}
}  // namespace

void IntervalHistogram::add(double interval_s) {
  if (interval_s != last_interval_s_) {
    last_interval_s_ = interval_s;
    last_bin_ = static_cast<size_t>(interval_bin(interval_s));
    if (counts_.empty() || last_bin_ < first_ || last_bin_ >= first_ + counts_.size()) cover(last_bin_);
  }
  ++counts_[last_bin_ - first_];
  sums_[last_bin_ - first_] += interval_s;
  ++count_;
}

// Only the bins between the shortest and the longest interval are stored: regular scrapes
// fill one or two, with slack for jitter on either side.
void IntervalHistogram::cover(size_t bin) {
  constexpr size_t kSlack = 2;
  size_t low = counts_.empty() ? bin : std::min(bin, first_);
  size_t high = counts_.empty() ? bin + 1 : std::max(bin + 1, first_ + counts_.size());
  low = low > kSlack ? low - kSlack : 0;
  high = std::min<size_t>(kIntervalBins, high + kSlack);
  std::vector<unsigned> counts(high - low, 0);
  std::vector<double> sums(high - low, 0.0);
  const size_t offset = counts_.empty() ? 0 : first_ - low;
  std::copy(counts_.begin(), counts_.end(), counts.begin() + static_cast<std::ptrdiff_t>(offset));
  std::copy(sums_.begin(), sums_.end(), sums.begin() + static_cast<std::ptrdiff_t>(offset));
  counts_ = std::move(counts);
  sums_ = std::move(sums);
  first_ = low;
}

double IntervalHistogram::median_s() const {
  long long seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (2 * seen >= count_ && counts_[i] > 0) return sums_[i] / counts_[i];
  }
  return 0;
}

// A bin's intervals are taken at their mean: exact except in the bin that holds the cap.
double IntervalHistogram::covered_s(double cap_s) const {
  double total = 0;
  for (size_t i = 0; i < counts_.size(); ++i)
    if (counts_[i] > 0) total += std::min(sums_[i], cap_s * counts_[i]);
  return total;
}

long long IntervalHistogram::count_above(double cap_s) const {
  long long n = 0;
  for (size_t i = 0; i < counts_.size(); ++i)
    if (counts_[i] > 0 && sums_[i] > cap_s * counts_[i]) n += counts_[i];
  return n;
}

double IntervalHistogram::sum_above(double cap_s) const {
  double total = 0;
  for (size_t i = 0; i < counts_.size(); ++i)
    if (counts_[i] > 0 && sums_[i] > cap_s * counts_[i]) total += sums_[i];
  return total;
}

double SeriesAggregate::coverage_hours() const {
  if (intervals.count() > 0) {
    double median = intervals.median_s();
    return (intervals.covered_s(3.0 * median) + median) / 3600.0;
  }
  return pushed_covered_s / 3600.0;
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
  // Heap addresses share their low bits (alignment): mixed before the index masks them.
  const uint64_t hash = mix_hash(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s.series)));
  SeriesAggregate* const* found = by_address_.find(s.series, hash);
  SeriesAggregate* slot = found ? *found : nullptr;
  if (!slot) {
    auto it = series_.find(*s.series);
    if (it == series_.end()) {
      it = series_.emplace(*s.series, SeriesAggregate{}).first;
      it->second.labels = *s.labels;
    }
    slot = &it->second;
    by_address_.insert(s.series, hash, slot);
  }
  last_series_ = s.series;
  last_aggregate_ = slot;
  ++samples_;
  accumulate(*slot, s);
}

void TelemetryAggregator::note_time(SeriesAggregate& a, double time_s) {
  if (a.last_util_s > -1e299) {
    double interval = time_s - a.last_util_s;
    if (interval < 0) ++a.out_of_order;
    else if (interval > 0) a.intervals.add(interval);  // equal times: a repeated row
  }
  if (time_s >= a.last_util_s) a.last_util_s = time_s;
}

void TelemetryAggregator::accumulate(SeriesAggregate& a, const TelemetrySample& s) {
  if (!s.in_range) {
    ++a.out_of_range;
    if (s.metric == Metric::gpu_util_pct) note_time(a, s.time_s);  // scraped, though not a measurement
    return;
  }
  switch (s.metric) {
    case Metric::gpu_util_pct: {
      note_time(a, s.time_s);
      ++a.util_samples;
      a.util_sum += s.value;
      if (s.value < idle_threshold_) ++a.idle_samples;
      // Timestamps are seconds since the epoch (or the data's own origin): the hour of the week
      // counts from Thursday 1970-01-01 00:00 UTC, shifted to start on Monday.
      // Hours are left-open, (h, h + 1h], as PromQL's range windows are, so files and
      // Prometheus push-down put a sample on an hour boundary in the same hour.
      if (s.time_s != last_hour_time_s_) {
        long long hour = static_cast<long long>(std::floor((s.time_s - 1e-3) / 3600.0));
        last_hour_of_week_ = static_cast<size_t>(((hour + 72) % 168 + 168) % 168);
        last_hour_time_s_ = s.time_s;
      }
      const size_t how = last_hour_of_week_;
      a.hour_sum[how] += s.value;
      ++a.hour_count[how];
      if (s.value < idle_threshold_) ++a.hour_idle[how];
      ++a.timed_samples;
      a.first_s = std::min(a.first_s, s.time_s);
      a.last_s = std::max(a.last_s, s.time_s);
      break;
    }
    case Metric::sm_active: ++a.sm_samples; a.sm_sum += std::clamp(s.value, 0.0, 1.0); break;  // within rounding
    case Metric::tensor_active: ++a.tensor_samples; a.tensor_sum += std::clamp(s.value, 0.0, 1.0); break;
    case Metric::dram_active: ++a.dram_samples; a.dram_sum += std::clamp(s.value, 0.0, 1.0); break;
    case Metric::memory_used_bytes:
      if (a.memory_total > 0 && s.value > a.memory_total * 1.001) {  // more than the device holds
        ++a.out_of_range;
        return;
      }
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
    case Metric::requests_per_s: a.requests_samples += n; a.requests_sum += mean * samples; break;
    default: break;  // GPU metrics come through add_hour
  }
}

std::vector<std::string> TelemetryAggregator::out_of_order_series() const {
  std::vector<std::string> out;
  for (const auto& [id, a] : series_)
    if (a.out_of_order > 0) out.push_back(id);
  return out;
}

void TelemetryAggregator::restore_time_order(const std::string& series, std::vector<double> times_s) {
  auto it = series_.find(series);
  if (it == series_.end()) return;
  SeriesAggregate& a = it->second;
  std::sort(times_s.begin(), times_s.end());
  a.intervals = IntervalHistogram{};
  a.last_util_s = -1e300;
  a.out_of_order = 0;
  for (double t : times_s) note_time(a, t);
}

void TelemetryAggregator::add_out_of_range(const std::string& series, long long samples) {
  auto it = series_.find(series);
  if (it != series_.end()) it->second.out_of_range += samples;
}

void TelemetryAggregator::add_gaps(const std::string& series, long long gaps, double gap_s) {
  auto it = series_.find(series);
  if (it == series_.end()) return;
  it->second.pushed_gaps += gaps;
  it->second.pushed_gap_s += gap_s;
}

void TelemetryAggregator::add_hour(const std::string& series, const Labels& labels, const HourSummary& h) {
  auto it = series_.find(series);
  if (it == series_.end()) {
    it = series_.emplace(series, SeriesAggregate{}).first;
    it->second.labels = labels;
  }
  SeriesAggregate& a = it->second;
  // Not a time, or more samples in an hour than any exporter sends (2,778 a second): a broken server.
  if (std::abs(h.hour_start_s) > 1e11 || !(h.samples <= 1e7)) return;
  if (h.samples > 0) {
    long long n = static_cast<long long>(std::llround(h.samples));
    a.util_samples += n;
    a.util_sum += h.util_mean * h.samples;
    const long long idle = std::clamp(static_cast<long long>(std::llround(h.idle_samples)), 0LL, n);
    a.idle_samples += idle;
    long long hour = static_cast<long long>(std::floor(h.hour_start_s / 3600.0));
    size_t how = static_cast<size_t>(((hour + 72) % 168 + 168) % 168);
    a.hour_sum[how] += h.util_mean * h.samples;
    a.hour_count[how] += static_cast<uint32_t>(n);
    a.hour_idle[how] += static_cast<uint32_t>(idle);
    a.timed_samples += n;
    a.first_s = std::min(a.first_s, h.first_s);
    a.last_s = std::max(a.last_s, h.last_s);
    samples_ += n;
  }
  a.pushed_covered_s += h.covered_s;
  if (h.memory_max) a.memory_peak = std::max(a.memory_peak, *h.memory_max);
  if (h.memory_p95) a.memory.add(*h.memory_p95 / (1024.0 * 1024.0 * 1024.0));
}

Result<size_t> restore_time_order(TelemetryAggregator& aggregator,
                                  const std::vector<std::pair<std::string, ReadOptions>>& files) {
  auto disordered = aggregator.out_of_order_series();
  if (disordered.empty()) return size_t{0};
  std::set<std::string> wanted(disordered.begin(), disordered.end());
  std::map<std::string, std::vector<double>> times;
  for (const auto& [file, options] : files) {
    ReadStats again;
    auto error = read_telemetry(file, options, [&](const TelemetrySample& s) {
      if (s.metric == Metric::gpu_util_pct && wanted.count(*s.series)) times[*s.series].push_back(s.time_s);
    }, again);
    if (error) return *error;
  }
  for (auto& [id, series_times] : times) aggregator.restore_time_order(id, std::move(series_times));
  return disordered.size();
}

}  // namespace gw
