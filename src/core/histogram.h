// A bounded-memory histogram with logarithmic buckets (1% wide, 0.1 us to ~1.6e7): quantiles
// within 0.5% of the exact value at any count, and an exact mean. What the simulator keeps
// instead of every latency, and an audit per series for the memory p95, so memory does not grow
// with the number of samples. Only the span of buckets between the smallest and the largest
// value seen is stored (a GPU's memory use spans a few buckets, a latency a few hundred).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace gw {

class LogHistogram {
 public:
  void add(double value);  // values <= 0 are counted in the lowest bucket
  uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  double max() const { return max_; }
  double quantile(double q) const;  // 0 when empty
  std::size_t stored_buckets() const { return buckets_.size(); }
  // Adds again, `times` over (a fraction allowed: each bucket's count rounded), what was added
  // since `earlier`, a copy of this histogram taken before: a simulation that replays a steady
  // stretch counts its values once per replay.
  void repeat_since(const LogHistogram& earlier, double times);

 private:
  void cover(std::size_t index);  // stores bucket `index` (and some slack beyond it)
  std::vector<uint64_t> buckets_;  // the counts of buckets first_ .. first_ + size - 1
  std::size_t first_ = 0;
  uint64_t count_ = 0;
  double sum_ = 0;
  double max_ = 0;
  double last_value_ = std::numeric_limits<double>::quiet_NaN();  // equals no value: the first add files its own
  std::size_t last_index_ = 0;
};

}  // namespace gw
