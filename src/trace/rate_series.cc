#include "trace/rate_series.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/csv.h"
#include "core/text.h"
#include "trace/request_trace.h"

namespace gw {

double RateSeries::rate_at(double time_s) const {
  if (points.empty() || time_s < 0 || time_s >= duration_s) return 0;
  auto it = std::upper_bound(points.begin(), points.end(), time_s,
                             [](double t, const RatePoint& p) { return t < p.time_s; });
  return it == points.begin() ? 0 : std::prev(it)->rps;
}

Result<RateSeries> parse_rate_series(std::string_view text, const std::string& path, const RateSeriesOptions& options) {
  auto table = parse_csv(text, path);
  if (!table.ok()) return table.error();
  const CsvTable& t = table.value();
  for (const std::string& column : {options.timestamp_column, options.rps_column})
    if (t.column(column) < 0) return Error{path, 1, column, "no such column; the header has: " + fmt::format("{}", fmt::join(t.header, ", "))};
  for (const auto& [column, value] : options.where)
    if (t.column(column) < 0) return Error{path, 1, column, "no such column to filter on"};
  RateSeries series;
  series.path = path;
  std::vector<RatePoint> raw;
  for (const auto& row : t.rows) {
    CsvRecord record(t, row);
    bool keep = true;
    for (const auto& [column, value] : options.where) keep = keep && record.text(column) == value;
    if (!keep) {
      ++series.rows_filtered_out;
      continue;
    }
    std::string stamp = record.text(options.timestamp_column);
    auto time = parse_timestamp(stamp);
    if (!time) return Error{path, row.line, options.timestamp_column, "'" + stamp + "' is not a timestamp (epoch seconds or ISO 8601)"};
    double rps = record.number(options.rps_column, 0, 1e9);
    if (!record.ok()) return record.error();
    raw.push_back({*time, rps});
  }
  if (raw.empty()) return Error{path, 0, options.rps_column, fmt::format("no rows left ({} filtered out)", series.rows_filtered_out)};
  std::stable_sort(raw.begin(), raw.end(), [](const RatePoint& a, const RatePoint& b) { return a.time_s < b.time_s; });
  // Merge rows with one timestamp (the mean: two scrapes of one gateway).
  for (size_t i = 0; i < raw.size();) {
    size_t j = i;
    double sum = 0;
    while (j < raw.size() && raw[j].time_s == raw[i].time_s) sum += raw[j++].rps;
    series.duplicate_timestamps += static_cast<long long>(j - i - 1);
    series.points.push_back({raw[i].time_s - raw.front().time_s, sum / static_cast<double>(j - i)});
    i = j;
  }
  std::vector<double> gaps;
  for (size_t i = 1; i < series.points.size(); ++i) gaps.push_back(series.points[i].time_s - series.points[i - 1].time_s);
  if (gaps.empty()) {
    series.step_s = 60;
  } else {
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<long>(gaps.size() / 2), gaps.end());
    series.step_s = gaps[gaps.size() / 2];
  }
  series.duration_s = series.points.back().time_s + series.step_s;
  double area = 0;
  for (size_t i = 0; i < series.points.size(); ++i) {
    double end = i + 1 < series.points.size() ? series.points[i + 1].time_s : series.duration_s;
    area += series.points[i].rps * (end - series.points[i].time_s);
    series.peak_rps = std::max(series.peak_rps, series.points[i].rps);
  }
  series.mean_rps = area / series.duration_s;
  if (series.peak_rps <= 0) return Error{path, 0, options.rps_column, "every rate is zero"};
  return series;
}

Result<RateSeries> load_rate_series(const std::string& path, const RateSeriesOptions& options) {
  std::string text, message;
  if (!read_file(path, text, message)) return Error{path, 0, "", "cannot read: " + message};
  return parse_rate_series(text, path, options);
}

}  // namespace gw
