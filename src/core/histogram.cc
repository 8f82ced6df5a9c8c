#include "core/histogram.h"

#include <algorithm>
#include <cmath>

namespace gw {

namespace {
constexpr double kMin = 1e-7;      // 0.1 microsecond
constexpr double kGrowth = 1.01;   // bucket width
const double kLogGrowth = std::log(kGrowth);
constexpr int kBuckets = 3300;     // up to ~1.6e7 seconds
}  // namespace

LogHistogram::LogHistogram() : buckets_(kBuckets, 0) {}

void LogHistogram::add(double value) {
  ++count_;
  sum_ += value;
  max_ = std::max(max_, value);
  // Telemetry repeats values (memory used stays put): skip the logarithm then.
  if (value == last_value_) {
    ++buckets_[last_index_];
    return;
  }
  int index = value <= kMin ? 0 : static_cast<int>(std::log(value / kMin) / kLogGrowth) + 1;
  last_value_ = value;
  last_index_ = static_cast<size_t>(std::clamp(index, 0, kBuckets - 1));
  ++buckets_[last_index_];
}

double LogHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[static_cast<size_t>(i)];
    if (seen >= rank) {
      if (i == 0) return kMin;
      // The bucket's geometric middle: within half a bucket (0.5%) of any value in it.
      double low = kMin * std::pow(kGrowth, i - 1);
      return std::min(max_, low * std::sqrt(kGrowth));
    }
  }
  return max_;
}

}  // namespace gw
