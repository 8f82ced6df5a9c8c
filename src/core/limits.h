// Input limits that keep memory bounded on hostile or mistaken input: the largest file read
// whole (specs, configs, catalogs, JSON answers) and the most telemetry series. Process-wide,
// set once from the command line (--max-input-mib, --max-series); exceeding one is an error
// that names the limit, never an out-of-memory kill.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gw {

// Bytes budgeted per telemetry series when deriving the default limit: twice the measured
// budget, for the peaks while reading.
inline constexpr size_t kSeriesBytesForLimit = 8192;
// Half of MemAvailable (/proc/meminfo) over kSeriesBytesForLimit, between 100,000 and 10^9;
// 1,000,000 where the figure cannot be read.
size_t default_max_series();

struct InputLimits {
  size_t max_file_bytes = size_t{1} << 30;  // 1 GiB: files read whole (streamed readers have no size limit)
  // Telemetry series (memory grows with series, not samples): by default as many as half the
  // memory available at start-up holds at kSeriesBytesForLimit each (bench/telemetry_speed
  // measures under 4 KB a series at rest), so the limit triggers before the machine runs out.
  size_t max_series = default_max_series();
};

InputLimits& input_limits();

// Thrown by the series table when a file holds more series than allowed; readers turn it into
// an error naming the file.
struct SeriesLimitExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace gw
