#include "core/limits.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace gw {

size_t default_max_series() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    double kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:" && kib > 0) {
      double series = kib * 1024 / 2 / static_cast<double>(kSeriesBytesForLimit);
      return static_cast<size_t>(std::clamp(series, 1e5, 1e9));
    }
  }
  return 1000000;
}

InputLimits& input_limits() {
  static InputLimits limits;
  return limits;
}

}  // namespace gw
