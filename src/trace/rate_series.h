// A measured request-rate series (CSV: a timestamp and requests per second per row, e.g. a
// gateway's QPS scraped every minute), the demand curve autoscaling and the pricing mix replay.
// Rows can be filtered by column values (one gateway among pods); each rate holds until the next
// timestamp. Rows that fail to parse are errors naming file, line and column.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace gw {

struct RatePoint {
  double time_s = 0;  // from the series' first timestamp
  double rps = 0;
};

struct RateSeriesOptions {
  std::string timestamp_column = "timestamp";
  std::string rps_column = "rps";
  std::vector<std::pair<std::string, std::string>> where;  // keep rows whose column equals the value
};

struct RateSeries {
  std::string path;
  std::vector<RatePoint> points;  // ascending time; duplicates merged (mean)
  double step_s = 0;              // median gap: how long the last rate holds
  double mean_rps = 0, peak_rps = 0;
  double duration_s = 0;          // first point to last point plus one step
  long long rows_filtered_out = 0;
  long long duplicate_timestamps = 0;
  // The rate at a time (piecewise constant; 0 outside the series).
  double rate_at(double time_s) const;
};

Result<RateSeries> load_rate_series(const std::string& path, const RateSeriesOptions& options);
Result<RateSeries> parse_rate_series(std::string_view text, const std::string& path, const RateSeriesOptions& options);

}  // namespace gw
