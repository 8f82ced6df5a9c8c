// How arrivals are spread over serving replicas: round robin, join the shortest queue, least
// outstanding tokens, or one shared queue that idle replicas pull from (M/G/c, classic
// replicas only). A router sees only each replica's load, so a new policy is one class here.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>

namespace gw {

enum class Router { round_robin, shortest_queue, least_tokens, shared_queue };

std::string_view router_name(Router router);
std::optional<Router> parse_router(std::string_view text);

// What a router sees of one replica.
struct ReplicaLoad {
  bool ready = false;             // serving and taking new work
  long long outstanding = 0;      // requests routed to it and not yet completed or handed on
  double outstanding_tokens = 0;  // their prompt and output tokens
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
};

std::unique_ptr<RequestRouter> make_request_router(Router router);

}  // namespace gw
