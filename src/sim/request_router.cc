#include "sim/request_router.h"

#include <algorithm>
#include <vector>

#include "core/random.h"
#include "core/text.h"

namespace gw {

std::string_view router_name(Router router) {
  switch (router) {
    case Router::round_robin: return "round-robin";
    case Router::shortest_queue: return "join-shortest-queue";
    case Router::least_tokens: return "least-outstanding-tokens";
    case Router::shared_queue: return "shared-queue";
    case Router::prefix_affinity: return "prefix-affinity";
    case Router::random: return "random";
    case Router::power_of_two: return "power-of-two";
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
  if (name == "random") return Router::random;
  if (name == "power-of-two" || name == "power_of_two") return Router::power_of_two;
  return std::nullopt;
}

namespace {

// A draw in [0, n), n > 0, from the seeded generator (uniform: modulo bias is below 2^-50 here).
size_t draw_below(Rng& rng, size_t n) { return static_cast<size_t>(rng.next() % n); }

// The next ready replica after the last one chosen, whatever their load; with several copies
// of the router, the next after the last one the copy drawn chose.
class RoundRobinRouter final : public RequestRouter {
 public:
  RoundRobinRouter(uint64_t seed, int instances) : next_(static_cast<size_t>(std::max(1, instances)), 0), rng_(seed) {}
  int route(std::span<const ReplicaLoad> loads, int ready_count) override {
    if (ready_count == 0) return kNoReplicaReady;
    size_t& next = next_.size() == 1 ? next_[0] : next_[draw_below(rng_, next_.size())];
    for (size_t tries = 0; tries < loads.size(); ++tries) {
      size_t i = next++ % loads.size();
      if (loads[i].ready) return static_cast<int>(i);
    }
    return kNoReplicaReady;
  }

 private:
  std::vector<size_t> next_;  // each copy's position
  Rng rng_;
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

// How many of loads are ready (counted, not taken from the caller's tally: a draw must range
// over exactly the replicas it can land on).
size_t ready_in(std::span<const ReplicaLoad> loads) {
  return static_cast<size_t>(std::count_if(loads.begin(), loads.end(), [](const ReplicaLoad& l) { return l.ready; }));
}

// The index of the k-th ready replica (k from 0).
int kth_ready(std::span<const ReplicaLoad> loads, size_t k) {
  for (size_t i = 0; i < loads.size(); ++i)
    if (loads[i].ready && k-- == 0) return static_cast<int>(i);
  return kNoReplicaReady;
}

// kube-proxy's choice: one ready endpoint, each as likely (iptables/nftables modes' random
// probability rules; a client keeping its connection open repeats the draw's replica, which
// the simulation does not model: each request is its own connection here).
class RandomRouter final : public RequestRouter {
 public:
  explicit RandomRouter(uint64_t seed) : rng_(seed) {}
  int route(std::span<const ReplicaLoad> loads, int) override {
    const size_t n = ready_in(loads);
    if (n == 0) return kNoReplicaReady;
    return kth_ready(loads, draw_below(rng_, n));
  }

 private:
  Rng rng_;
};

// The vLLM Router's power_of_two (from SGLang's router, policies/power_of_two.rs): two distinct
// ready replicas drawn at random, the one with fewer requests the router has in flight there
// (its own count: engine load reports are off by default), the first drawn on a tie.
class PowerOfTwoRouter final : public RequestRouter {
 public:
  explicit PowerOfTwoRouter(uint64_t seed) : rng_(seed) {}
  int route(std::span<const ReplicaLoad> loads, int) override {
    const size_t n = ready_in(loads);
    if (n == 0) return kNoReplicaReady;
    if (n == 1) return kth_ready(loads, 0);
    const size_t a = draw_below(rng_, n);
    size_t b = draw_below(rng_, n - 1);
    if (b >= a) ++b;  // the second of the other n - 1, as the router's redraw-until-different gives
    const int first = kth_ready(loads, a), second = kth_ready(loads, b);
    return loads[static_cast<size_t>(first)].outstanding <= loads[static_cast<size_t>(second)].outstanding ? first : second;
  }

 private:
  Rng rng_;
};

}  // namespace

std::unique_ptr<RequestRouter> make_request_router(Router router, uint64_t seed, int instances) {
  switch (router) {
    case Router::round_robin: return std::make_unique<RoundRobinRouter>(seed, instances);
    case Router::shortest_queue: return std::make_unique<LeastLoadedRouter<OutstandingRequests>>();
    case Router::least_tokens: return std::make_unique<LeastLoadedRouter<OutstandingTokens>>();
    case Router::shared_queue: return std::make_unique<SharedQueueRouter>();
    case Router::prefix_affinity: return std::make_unique<PrefixAffinityRouter>(PrefixAffinityOptions{});
    case Router::random: return std::make_unique<RandomRouter>(seed);
    case Router::power_of_two: return std::make_unique<PowerOfTwoRouter>(seed);
  }
  return std::make_unique<RoundRobinRouter>(seed, instances);
}

}  // namespace gw
