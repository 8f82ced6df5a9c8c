// A fixed-memory latency histogram with logarithmic buckets (1% wide): quantiles within 0.5% of
// the exact value at any count, and an exact mean. What the simulator keeps instead of every
// latency, so memory does not grow with the number of requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gw {

class LogHistogram {
 public:
  LogHistogram();
  void add(double value);  // values <= 0 are counted in the lowest bucket
  uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  double max() const { return max_; }
  double quantile(double q) const;  // 0 when empty

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  double sum_ = 0;
  double max_ = 0;
  double last_value_ = -1;  // below kMin: never equals a value that needs its own bucket
  std::size_t last_index_ = 0;
};

}  // namespace gw
