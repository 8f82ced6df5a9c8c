#include "sim/request_router.h"

#include <algorithm>

#include "core/text.h"

namespace gw {

std::string_view router_name(Router router) {
  switch (router) {
    case Router::round_robin: return "round-robin";
    case Router::shortest_queue: return "join-shortest-queue";
    case Router::least_tokens: return "least-outstanding-tokens";
    case Router::shared_queue: return "shared-queue";
    case Router::prefix_affinity: return "prefix-affinity";
  }
  return "round-robin";
}

std::optional<Router> parse_router(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "round-robin") return Router::round_robin;
  if (name == "join-shortest-queue" || name == "jsq") return Router::shortest_queue;
  if (name == "least-outstanding-tokens") return Router::least_tokens;
  if (name == "shared-queue") return Router::shared_queue;
  if (name == "prefix-affinity" || name == "cache-aware") return Router::prefix_affinity;
  return std::nullopt;
}

namespace {

// The next ready replica after the last one chosen, whatever their load.
class RoundRobinRouter final : public RequestRouter {
 public:
  int route(std::span<const ReplicaLoad> loads, int ready_count) override {
    if (ready_count == 0) return kNoReplicaReady;
    for (size_t tries = 0; tries < loads.size(); ++tries) {
      size_t i = next_++ % loads.size();
      if (loads[i].ready) return static_cast<int>(i);
    }
    return kNoReplicaReady;
  }

 private:
  size_t next_ = 0;
};

// The ready replica with the least of a load measure; the first such on a tie.
template <typename Measure>
class LeastLoadedRouter final : public RequestRouter {
 public:
  int route(std::span<const ReplicaLoad> loads, int ready_count) override {
    if (ready_count == 0) return kNoReplicaReady;
    int best = kNoReplicaReady;
    for (size_t i = 0; i < loads.size(); ++i) {
      if (!loads[i].ready) continue;
      if (best < 0 || Measure{}(loads[i]) < Measure{}(loads[static_cast<size_t>(best)])) best = static_cast<int>(i);
    }
    return best;
  }
};

struct OutstandingRequests {
  long long operator()(const ReplicaLoad& load) const { return load.outstanding; }
};
struct OutstandingTokens {
  double operator()(const ReplicaLoad& load) const { return load.outstanding_tokens; }
};

// Every request to one queue; the simulator hands it to replicas as they fall idle.
class SharedQueueRouter final : public RequestRouter {
 public:
  int route(std::span<const ReplicaLoad>, int) override { return kSharedQueue; }
};

// SGLang's cache-aware policy over the replicas' own prefix caches: when the load is out of
// balance, the least loaded; otherwise the replica with the longest cached prefix of the prompt
// if it covers more than cache_threshold of it, else the one caching least (most room to cache
// this prompt). Ties go to the least loaded, then the first.
class PrefixAffinityRouter final : public RequestRouter {
 public:
  explicit PrefixAffinityRouter(PrefixAffinityOptions o) : o_(o) {}
  bool reads_prefixes() const override { return true; }
  int route(std::span<const ReplicaLoad> loads, int ready_count) override {
    if (ready_count == 0) return kNoReplicaReady;
    int least = -1, best_match = -1, least_cached = -1;
    long long most = 0;
    auto fewer = [&](int a, int b) { return loads[static_cast<size_t>(a)].outstanding < loads[static_cast<size_t>(b)].outstanding; };
    for (size_t k = 0; k < loads.size(); ++k) {
      const ReplicaLoad& l = loads[k];
      if (!l.ready) continue;
      const int i = static_cast<int>(k);
      most = std::max(most, l.outstanding);
      if (least < 0 || fewer(i, least)) least = i;
      if (best_match < 0 || l.prefix_match > loads[static_cast<size_t>(best_match)].prefix_match ||
          (l.prefix_match == loads[static_cast<size_t>(best_match)].prefix_match && fewer(i, best_match)))
        best_match = i;
      if (least_cached < 0 || l.cached_blocks < loads[static_cast<size_t>(least_cached)].cached_blocks ||
          (l.cached_blocks == loads[static_cast<size_t>(least_cached)].cached_blocks && fewer(i, least_cached)))
        least_cached = i;
    }
    const auto fewest = static_cast<double>(loads[static_cast<size_t>(least)].outstanding);
    const auto most_d = static_cast<double>(most);
    if (most_d - fewest > o_.balance_abs_threshold && most_d > fewest * o_.balance_rel_threshold) return least;
    if (loads[static_cast<size_t>(best_match)].prefix_match > o_.cache_threshold) return best_match;
    return least_cached;
  }

 private:
  PrefixAffinityOptions o_;
};

}  // namespace

std::unique_ptr<RequestRouter> make_request_router(Router router) {
  switch (router) {
    case Router::round_robin: return std::make_unique<RoundRobinRouter>();
    case Router::shortest_queue: return std::make_unique<LeastLoadedRouter<OutstandingRequests>>();
    case Router::least_tokens: return std::make_unique<LeastLoadedRouter<OutstandingTokens>>();
    case Router::shared_queue: return std::make_unique<SharedQueueRouter>();
    case Router::prefix_affinity: return std::make_unique<PrefixAffinityRouter>(PrefixAffinityOptions{});
  }
  return std::make_unique<RoundRobinRouter>();
}

}  // namespace gw
