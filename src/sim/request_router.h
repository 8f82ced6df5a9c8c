// How arrivals are spread over serving replicas: round robin, join the shortest queue, least
// outstanding tokens, one shared queue that idle replicas pull from (M/G/c, classic
// replicas only), prefix affinity (SGLang's cache-aware router: the replica holding most of
// the prompt's prefix unless the load is out of balance), uniformly at random (a Kubernetes
// Service: kube-proxy picks one ready endpoint at random per connection), or the power of two
// choices (the vLLM Router's power_of_two: the fewer requests in flight of two ready replicas
// drawn at random). A router sees only each replica's
// load (and, for prefix affinity, what it has cached of the request), so a new policy is one
// class here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

namespace gw {

enum class Router { round_robin, shortest_queue, least_tokens, shared_queue, prefix_affinity, random, power_of_two };

std::string_view router_name(Router router);
std::optional<Router> parse_router(std::string_view text);

// What a router sees of one replica.
struct ReplicaLoad {
  bool ready = false;             // serving and taking new work
  long long outstanding = 0;      // requests routed to it and not yet completed or handed on
  double outstanding_tokens = 0;  // their prompt and output tokens
  // Prefix affinity only, filled for the request being routed: the share of its prompt's
  // blocks the replica has cached from the first, and the blocks it caches in all.
  double prefix_match = 0;
  double cached_blocks = 0;
};

// SGLang's cache-aware router's defaults (sgl-router CacheAwareConfig: cache_threshold 0.5,
// balance_abs_threshold 32, balance_rel_threshold 1.0001; read 2026-12-04).
struct PrefixAffinityOptions {
  double cache_threshold = 0.5;     // a match above this share of the prompt routes to its holder
  double balance_abs_threshold = 32;  // out of balance: most minus fewest outstanding above this
  double balance_rel_threshold = 1.0001;  // ... and most above this times the fewest
};

// route()'s answers besides a replica index.
inline constexpr int kSharedQueue = -1;    // queue it where any idle replica takes it
inline constexpr int kNoReplicaReady = -2; // hold it until a replica is ready

class RequestRouter {
 public:
  virtual ~RequestRouter() = default;
  // The replica for the next request (an index into loads), kSharedQueue, or kNoReplicaReady.
  // ready_count is how many of loads are ready. A router may keep state across calls (the
  // round-robin position), so each simulation owns its own.
  virtual int route(std::span<const ReplicaLoad> loads, int ready_count) = 0;
  // Whether it reads ReplicaLoad::prefix_match and cached_blocks (filled per request).
  virtual bool reads_prefixes() const { return false; }
};

// seed: the random routers' draws (the same seed, the same choices). instances: how many copies
// of the router deal the requests, each request to one of them at random (a Service in front of a
// router Deployment spreads its clients so); for round robin each copy keeps its own position,
// all starting at the first replica. Other policies are modelled as one router.
std::unique_ptr<RequestRouter> make_request_router(Router router, uint64_t seed = 0, int instances = 1);

}  // namespace gw
