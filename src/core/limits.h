// Input limits that keep memory bounded on hostile or mistaken input: the largest file read
// whole (specs, configs, catalogs, JSON answers) and the most telemetry series. Process-wide,
// set once from the command line (--max-input-mib, --max-series); exceeding one is an error
// that names the limit, never an out-of-memory kill.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gw {

struct InputLimits {
  size_t max_file_bytes = size_t{1} << 30;  // 1 GiB: files read whole (streamed readers have no size limit)
  size_t max_series = 1000000;              // telemetry series (memory grows with series, not samples)
};

InputLimits& input_limits();

// Thrown by the series table when a file holds more series than allowed; readers turn it into
// an error naming the file.
struct SeriesLimitExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace gw
