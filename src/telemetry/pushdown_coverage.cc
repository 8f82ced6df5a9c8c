#include "telemetry/pushdown_coverage.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/numbers.h"

namespace gw::pushdown {

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
std::string series_id(const std::vector<std::pair<std::string, std::string>>& metric, Labels& labels, std::string* matchers) {
  labels.clear();
  if (matchers) matchers->clear();
  for (const auto& [k, v] : metric) {
    if (k == "__name__") continue;
    std::string key = canonical_label_key(k);
    if (identifies_series(key)) {
      labels.emplace_back(key, v);
      if (matchers) *matchers += (matchers->empty() ? "" : ",") + k + "=" + quoted(v);
    }
  }
  std::sort(labels.begin(), labels.end());
  std::string id;
  for (const auto& [k, v] : labels) id += (id.empty() ? "" : ",") + k + "=" + v;
  return id;
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
double hidden_gap_room_s(const std::vector<HourSpan>& hours) {
  double shortest_s = 1e300;
  for (const auto& h : hours) shortest_s = std::min(shortest_s, h.span_s / h.intervals);
  double room_s = 0;
  for (const auto& h : hours) {
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
      idle += s.value < kIdleUtilPct;
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

void place_hour(HourValues& h, double start_s, const std::vector<std::pair<double, double>>& points, bool closed_windows) {
  const double first_step = start_s + 60, lookback_s = 300;
  double fresh_at_first_step = -1e300, first_in_hour = 1e300, last = -1e300;
  for (const auto& point : points) {
    double t = point.first;
    bool fresh = closed_windows ? t >= first_step - lookback_s : t > first_step - lookback_s;
    if (t <= first_step && fresh) fresh_at_first_step = std::max(fresh_at_first_step, t);
    if (t > start_s) first_in_hour = std::min(first_in_hour, t);
    last = std::max(last, t);
  }
  if (last <= start_s) return;  // no sample in the hour
  h.set(kFirst, (fresh_at_first_step > -1e299 ? fresh_at_first_step : first_in_hour) - start_s);
  h.set(kLast, last - start_s);
}

std::array<std::pair<HourField, std::string>, 2> minute_queries(const std::string& util, const std::string& idle_rule,
                                                               const std::string& hour, int step_min) {
  if (!idle_rule.empty())
    return {{{kFreshMinutes, "count_over_time(" + idle_rule + "[" + hour + "])"},
             {kIdleMinutes, "sum_over_time(" + idle_rule + "[" + hour + "])"}}};
  // A filter, not `< bool`: the engine drops the busy minutes early (6 s against 2.5 s for a
  // week of 1,000 GPUs).
  return {{{kFreshMinutes, fmt::format("count_over_time({}[{}:{}m])", util, hour, step_min)},
           {kIdleMinutes, fmt::format("count_over_time(({} < {})[{}:{}m])", util, kIdleUtilPct, hour, step_min)}}};
}

std::array<const char*, 2> minute_query_names(bool by_rule, int step_min) {
  if (by_rule) return {"fresh minutes (rule)", "idle minutes (rule)"};
  if (step_min > 1) return {"fresh minutes (5-minute steps)", "idle minutes (5-minute steps)"};
  return {"fresh minutes", "idle minutes"};
}

int minute_step_min(double most_samples, double elapsed_s) {
  // n samples d apart span (n - 1) d <= elapsed: a series scraped every d through the hour has
  // n - 1 = elapsed / d, rounded down; one scraped more often than every 4.5 minutes, more than
  // elapsed / 270 s.
  if (!(most_samples > 1)) return 5;
  return elapsed_s / (most_samples - 1) >= 270 ? 5 : 1;
}

std::pair<double, double> first_last(const HourValues& h, double start_s) {
  return {start_s + (std::isnan(h[kFirst]) ? 0.0 : h[kFirst]), start_s + (std::isnan(h[kLast]) ? 3600.0 : h[kLast])};
}

}  // namespace gw::pushdown
