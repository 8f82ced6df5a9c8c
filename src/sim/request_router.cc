#include "sim/request_router.h"

#include "core/text.h"

namespace gw {

std::string_view router_name(Router router) {
  switch (router) {
    case Router::round_robin: return "round-robin";
    case Router::shortest_queue: return "join-shortest-queue";
    case Router::least_tokens: return "least-outstanding-tokens";
    case Router::shared_queue: return "shared-queue";
  }
  return "round-robin";
}

std::optional<Router> parse_router(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "round-robin") return Router::round_robin;
  if (name == "join-shortest-queue" || name == "jsq") return Router::shortest_queue;
  if (name == "least-outstanding-tokens") return Router::least_tokens;
  if (name == "shared-queue") return Router::shared_queue;
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

}  // namespace

std::unique_ptr<RequestRouter> make_request_router(Router router) {
  switch (router) {
    case Router::round_robin: return std::make_unique<RoundRobinRouter>();
    case Router::shortest_queue: return std::make_unique<LeastLoadedRouter<OutstandingRequests>>();
    case Router::least_tokens: return std::make_unique<LeastLoadedRouter<OutstandingTokens>>();
    case Router::shared_queue: return std::make_unique<SharedQueueRouter>();
  }
  return std::make_unique<RoundRobinRouter>();
}

}  // namespace gw
