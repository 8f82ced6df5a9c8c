// How much of a trace's prompts a prefix cache could spare, by how many replicas share the
// traffic: the trace's requests dealt to R replicas in turn (a router that ignores the cache),
// each replica with an unlimited cache of the prompt blocks it has seen, a request's hit the
// longest run of its blocks cached from the first (its last token always computed). For traces
// that name their prompt blocks (the Mooncake traces' hash_ids).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace gw {

class PrefixReuse {
 public:
  // One request's prompt: its tokens and its blocks' chain ids, block_tokens each.
  void add(double input_tokens, const std::vector<unsigned long long>& block_ids, int block_tokens);
  bool empty() const { return requests_ == 0; }
  long long requests() const { return requests_; }
  // The share of prompt tokens cached over `replicas` replicas at each count of `counts`.
  std::vector<std::pair<int, double>> curve(const std::vector<int>& counts) const;

 private:
  std::vector<unsigned long long> ids_;  // every request's block ids, one after another
  std::vector<size_t> ends_;             // where each request's ids end in ids_
  std::vector<double> inputs_;
  std::vector<int> block_tokens_;
  long long requests_ = 0;
};

// The cached share at `replicas` from a curve: linear between its counts, and beyond its last
// count the last share scaled by last count / replicas (a conversation finds its earlier turns
// on its replica one time in `replicas`). 0 for an empty curve.
double cached_share_at(const std::vector<std::pair<int, double>>& curve, int replicas);

}  // namespace gw
