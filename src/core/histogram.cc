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

void LogHistogram::cover(std::size_t index) {
  constexpr std::size_t kSlack = 4;
  std::size_t low = index, high = index + 1;
  if (!buckets_.empty()) {
    low = std::min(low, first_);
    high = std::max(high, first_ + buckets_.size());
  }
  // Slack of half the span on the side that grew: a drifting value reallocates O(log) times.
  std::size_t slack = std::max(kSlack, (high - low) / 2);
  if (buckets_.empty() || index < first_) low = low > slack ? low - slack : 0;
  if (buckets_.empty() || index >= first_) high = std::min<std::size_t>(kBuckets, high + slack);
  std::vector<uint64_t> grown(high - low, 0);
  std::copy(buckets_.begin(), buckets_.end(), grown.begin() + static_cast<std::ptrdiff_t>(first_ - std::min(first_, low)));
  buckets_ = std::move(grown);
  first_ = low;
}

void LogHistogram::add(double value) {
  ++count_;
  sum_ += value;
  max_ = std::max(max_, value);
  // Telemetry repeats values (memory used stays put): skip the logarithm then.
  if (value == last_value_) {
    ++buckets_[last_index_ - first_];
    return;
  }
  int index = value <= kMin ? 0 : static_cast<int>(std::log(value / kMin) / kLogGrowth) + 1;
  last_value_ = value;
  last_index_ = static_cast<size_t>(std::clamp(index, 0, kBuckets - 1));
  if (buckets_.empty() || last_index_ < first_ || last_index_ >= first_ + buckets_.size()) cover(last_index_);
  ++buckets_[last_index_ - first_];
}

void LogHistogram::repeat_since(const LogHistogram& earlier, double times) {
  if (!(times > 0) || count_ == earlier.count_) return;
  uint64_t added = 0;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    const size_t index = first_ + k;
    uint64_t before = 0;
    if (index >= earlier.first_ && index < earlier.first_ + earlier.buckets_.size()) before = earlier.buckets_[index - earlier.first_];
    const auto more = static_cast<uint64_t>(std::llround(times * static_cast<double>(buckets_[k] - before)));
    buckets_[k] += more;
    added += more;
  }
  sum_ += times * (sum_ - earlier.sum_);
  count_ += added;
}

double LogHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    seen += buckets_[k];
    if (seen >= rank) {
      const int i = static_cast<int>(first_ + k);
      if (i == 0) return kMin;
      // The bucket's geometric middle: within half a bucket (0.5%) of any value in it.
      double low = kMin * std::pow(kGrowth, i - 1);
      return std::min(max_, low * std::sqrt(kGrowth));
    }
  }
  return max_;
}

}  // namespace gw
