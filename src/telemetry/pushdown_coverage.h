// The hourly-coverage arithmetic of the Prometheus push-down (telemetry/prometheus_client.cc):
// which span a series' hourly sums stand for, where they may hide a gap, and an hour summarized
// from raw samples; with the PromQL quoting and series ids the queries use.
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "telemetry/aggregate.h"
#include "telemetry/pushdown_store.h"
#include "telemetry/readers.h"

namespace gw::pushdown {

// A PromQL string literal.
std::string quoted(const std::string& text);

// The series' id from the labels gpuwise keeps, and the matchers that select it again.
std::string series_id(const std::vector<std::pair<std::string, std::string>>& metric, Labels& labels, std::string* matchers = nullptr);

struct PushedCoverage {
  std::vector<double> covered_s;  // per hour
  long long gaps = 0;
  double gap_s = 0;
};

// An hour's span between its first and last samples, and the intervals in it.
struct HourSpan {
  double span_s, intervals;
};

// Intervals between an hour's samples: a first sample at or before the hour's start is the
// previous hour's last (seen through the lookback), one interval more.
double hour_intervals(double samples, double first_s, double hour_start_s);

// The time a series' hourly summaries stand for, by the files' rule as far as hourly sums allow:
// in each hour a sample stands for the hour's mean spacing (the span between its first and last
// samples per interval), at most 3x the series' median spacing, and the hour for no more than the
// minutes in which Prometheus saw the series fresh. What the series' span holds beyond is gaps.
PushedCoverage pushed_coverage(const std::vector<TelemetryAggregator::HourSummary>& hours, const std::vector<double>& fresh_s);

// How much of a series' span its hourly sums cannot place: in each hour, the span its samples
// stand for beyond as many intervals of the series' shortest hourly spacing, where that is more
// than three such spacings (room for an interval the files' rule would cut as a gap: an interval
// longer than the cap is invisible in an hour's mean spacing). 0: every hour is regular.
double hidden_gap_room_s(const std::vector<HourSpan>& hours);

// An hour's summary from its raw samples (an hour holding impossible values): the measurements
// only, their exact idle count and memory p95; returns how many samples were out of range.
long long summarize_hour(const std::vector<TelemetrySample>& raw, TelemetryAggregator::HourSummary& h);

// An hour's first and last sample times from its raw samples (the hour before and the 5 minutes
// of lookback before it included), as a minute-step subquery sees them: the earliest is the
// previous hour's last sample when that was fresh at the hour's first minute step (the interval
// from it ends in this hour). `closed_windows`: the server's range windows include their start.
void place_hour(HourValues& h, double start_s, const std::vector<std::pair<double, double>>& points, bool closed_windows);

// An hour's fresh minutes (a sample in the 5 minutes before: the most time its samples can stand
// for, as Prometheus itself would see them) and, of those, its idle minutes (each raw sample held
// until the next), evaluated at the hour's end over `hour` (the server's window for an hour): the
// recorded idle flag's count and sum where `idle_rule` is given, else subqueries over `util`
// stepping `step_min` minutes (their counts are steps: times step_min, minutes).
std::array<std::pair<HourField, std::string>, 2> minute_queries(const std::string& util, const std::string& idle_rule,
                                                               const std::string& hour, int step_min = 1);
// Their names in the statistics (--explain), in minute_queries' order.
std::array<const char*, 2> minute_query_names(bool by_rule, int step_min = 1);

// The step, in minutes, of the subqueries counting an hour's fresh and idle minutes: 5 where no
// series was scraped more often than every 4.5 minutes in the hour, else 1. A sample then stands
// for one 5-minute step as it does for five 1-minute steps (a scrape every 5 minutes: exactly),
// and the server evaluates 12 steps an hour per series instead of 60. `most_samples`: the most
// samples a series had in the hour; `elapsed_s`: the hour's length so far (the hour in progress).
int minute_step_min(double most_samples, double elapsed_s);

// An hour's first and last samples: where a raw read placed them, else (fresh every minute) the
// previous hour's last sample and the hour's end.
std::pair<double, double> first_last(const HourValues& h, double start_s);

}  // namespace gw::pushdown
