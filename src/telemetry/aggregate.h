// Streaming per-series aggregates of GPU telemetry: duty cycle (mean, idle share, histogram),
// SM and tensor activity, memory (peak and p95), power, CPU, an hour-of-week profile and the
// data coverage. Memory grows with the number of series, not samples.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <vector>
#include <map>
#include <optional>
#include <unordered_map>
#include <string>
#include <utility>

#include "core/flat_index.h"
#include "core/histogram.h"
#include "telemetry/readers.h"

namespace gw {

// Intervals between a series' duty-cycle samples: counts and exact sums in 5%-wide logarithmic
// bins from 1 ms (only the span between the shortest and longest interval is stored), so
// coverage can cap each interval at a multiple of the series' own median spacing once the whole
// series has been read.
class IntervalHistogram {
 public:
  void add(double interval_s);
  long long count() const { return count_; }
  double median_s() const;
  double covered_s(double cap_s) const;      // sum of min(interval, cap)
  long long count_above(double cap_s) const;  // intervals longer than cap: gaps
  double sum_above(double cap_s) const;
  size_t stored_bins() const { return counts_.size(); }

 private:
  void cover(size_t bin);
  std::vector<unsigned> counts_;  // bins first_ .. first_ + size - 1
  std::vector<double> sums_;
  size_t first_ = 0;
  long long count_ = 0;
  double last_interval_s_ = std::numeric_limits<double>::quiet_NaN();  // regular scrapes repeat their interval: skip the logarithm then
  size_t last_bin_ = 0;
};

struct SeriesAggregate {
  Labels labels;
  long long util_samples = 0;
  double util_sum = 0;
  long long idle_samples = 0;     // duty cycle below the idle threshold
  double sm_sum = 0, tensor_sum = 0, dram_sum = 0, power_sum = 0, cpu_sum = 0, iowait_sum = 0, requests_sum = 0;
  long long sm_samples = 0, tensor_samples = 0, dram_samples = 0, power_samples = 0, cpu_samples = 0, iowait_samples = 0, requests_samples = 0;
  int host_cpus = 0;               // logical CPUs of a host series, when known
  double memory_peak = 0, memory_total = 0;
  LogHistogram memory;             // GiB, for the p95
  double first_s = 1e300, last_s = -1e300;
  long long timed_samples = 0;
  IntervalHistogram intervals;      // between consecutive duty-cycle timestamps (files)
  double last_util_s = -1e300;
  long long out_of_order = 0;       // duty-cycle samples earlier than the one before
  long long out_of_range = 0;       // samples outside the metric's physical range
  // Coverage of a series summed elsewhere (Prometheus push-down), where intervals are not seen.
  double pushed_covered_s = 0, pushed_gap_s = 0;
  long long pushed_gaps = 0;
  std::array<double, 168> hour_sum{};
  // Samples by hour of the week. 32 bits: a slot overflows only past 4.29e9 samples of one series
  // in one hour of the week (over 1,000 a second for 20 years), and keeps each series under 4 KB.
  std::array<uint32_t, 168> hour_count{};
  std::array<uint32_t, 168> hour_idle{};  // of hour_count, the samples below the idle threshold

  double mean_util() const { return util_samples ? util_sum / util_samples : 0; }
  double idle_fraction() const { return util_samples ? static_cast<double>(idle_samples) / util_samples : 0; }
  // Hours observed: each interval between samples counts up to 3x the series' median spacing
  // (longer ones are gaps), plus one median spacing for the last sample. Series summed
  // elsewhere (Prometheus push-down) bring their own covered time and gaps.
  double coverage_hours() const;
  double gap_cap_s() const { return 3.0 * intervals.median_s(); }
  long long gaps() const { return intervals.count() ? intervals.count_above(gap_cap_s()) : pushed_gaps; }
  double gap_hours() const { return (intervals.count() ? intervals.sum_above(gap_cap_s()) : pushed_gap_s) / 3600.0; }
  std::string label(const std::string& key) const;
};

// A GPU below this duty cycle is idle (the findings' and the push-down's threshold).
inline constexpr double kIdleUtilPct = 5.0;

class TelemetryAggregator {
 public:
  explicit TelemetryAggregator(double idle_threshold_pct = kIdleUtilPct) : idle_threshold_(idle_threshold_pct) {}
  void add(const TelemetrySample& sample);

  // One hour of a series already aggregated elsewhere (Prometheus push-down): the mean duty
  // cycle over samples, how many were idle, and the memory peak and p95 in that hour.
  struct HourSummary {
    double hour_start_s = 0;
    double util_mean = 0;
    double samples = 0;              // measurements (in range)
    double scraped = 0;              // samples with a time, out-of-range ones too (0: as samples)
    double idle_samples = 0;
    double first_s = 0, last_s = 0;  // of the hour's samples
    double covered_s = 0;            // time the hour's samples stand for (gaps excluded)
    std::optional<double> memory_max, memory_p95;
  };
  void add_hour(const std::string& series, const Labels& labels, const HourSummary& hour);
  // Samples of a series summed elsewhere that were outside their metric's physical range.
  void add_out_of_range(const std::string& series, long long samples);
  // The gaps of a series summed elsewhere: how many, and their total length.
  void add_gaps(const std::string& series, long long gaps, double gap_s);
  // A mean over `samples` samples of one metric, aggregated elsewhere (host CPU from PromQL).
  void add_mean(const std::string& series, const Labels& labels, Metric metric, double mean, double samples);
  // Series whose duty-cycle samples came out of time order: their intervals (coverage, gaps)
  // are only right once their times are given again in order by restore_time_order.
  std::vector<std::string> out_of_order_series() const;
  // Rebuilds a series' intervals from all its duty-cycle sample times (any order), so coverage
  // and gaps do not depend on the order of the rows.
  void restore_time_order(const std::string& series, std::vector<double> times_s);
  const std::map<std::string, SeriesAggregate>& series() const { return series_; }
  long long samples() const { return samples_; }

 private:
  void accumulate(SeriesAggregate& a, const TelemetrySample& s);
  static void note_time(SeriesAggregate& a, double time_s);
  double idle_threshold_;
  std::map<std::string, SeriesAggregate> series_;
  // Series ids are interned by the readers: look them up by address (map nodes do not move).
  FlatIndex<const std::string*, SeriesAggregate*> by_address_;
  const std::string* last_series_ = nullptr;  // consecutive samples are often of one series
  SeriesAggregate* last_aggregate_ = nullptr;
  // Rows of one scrape share a time: its hour of the week is worked out once.
  double last_hour_time_s_ = std::numeric_limits<double>::quiet_NaN();
  size_t last_hour_of_week_ = 0;
  long long samples_ = 0;
};

// Files already read into the aggregator, read again for the series whose rows came out of
// time order, so their coverage and gaps do not depend on the row order. Returns how many series
// were put in order, or the error of a file that can no longer be read.
Result<size_t> restore_time_order(TelemetryAggregator& aggregator,
                                  const std::vector<std::pair<std::string, ReadOptions>>& files);

}  // namespace gw
