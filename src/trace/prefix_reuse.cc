#include "trace/prefix_reuse.h"

#include <algorithm>
#include <unordered_set>

namespace gw {

void PrefixReuse::add(double input_tokens, const std::vector<unsigned long long>& block_ids, int block_tokens) {
  ids_.insert(ids_.end(), block_ids.begin(), block_ids.end());
  ends_.push_back(ids_.size());
  inputs_.push_back(input_tokens);
  block_tokens_.push_back(block_tokens);
  ++requests_;
}

std::vector<std::pair<int, double>> PrefixReuse::curve(const std::vector<int>& counts) const {
  std::vector<std::pair<int, double>> out;
  double total = 0;
  for (double input : inputs_) total += input;
  for (int replicas : counts) {
    std::vector<std::unordered_set<unsigned long long>> caches(static_cast<size_t>(std::max(1, replicas)));
    double cached = 0;
    size_t begin = 0;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      auto& cache = caches[i % caches.size()];
      const size_t end = ends_[i];
      size_t hit = 0;
      while (begin + hit < end && cache.count(ids_[begin + hit]) != 0) ++hit;
      cached += std::min(static_cast<double>(hit) * block_tokens_[i], std::max(0.0, inputs_[i] - 1));
      cache.insert(ids_.begin() + static_cast<long>(begin), ids_.begin() + static_cast<long>(end));
      begin = end;
    }
    out.emplace_back(replicas, total > 0 ? cached / total : 0);
  }
  return out;
}

double cached_share_at(const std::vector<std::pair<int, double>>& curve, int replicas) {
  if (curve.empty()) return 0;
  if (replicas <= curve.front().first) return curve.front().second;
  for (size_t i = 1; i < curve.size(); ++i)
    if (replicas <= curve[i].first) {
      const auto& [r0, s0] = curve[i - 1];
      const auto& [r1, s1] = curve[i];
      return s0 + (s1 - s0) * (replicas - r0) / static_cast<double>(r1 - r0);
    }
  return curve.back().second * curve.back().first / static_cast<double>(replicas);
}

}  // namespace gw
