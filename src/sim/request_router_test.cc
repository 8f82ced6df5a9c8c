// Each router's choice on hand-made loads: round robin skips replicas that are not ready and
// keeps its place between calls; the least-loaded routers take the first of equals.
#include "sim/request_router.h"

#include <gtest/gtest.h>

#include <vector>

namespace gw {
namespace {

TEST(RequestRouter, RoundRobinCyclesOverReadyReplicasOnly) {
  auto router = make_request_router(Router::round_robin);
  std::vector<ReplicaLoad> loads = {{true, 9, 0}, {false, 0, 0}, {true, 0, 0}};
  std::vector<int> picks;
  for (int i = 0; i < 4; ++i) picks.push_back(router->route(loads, 2));
  EXPECT_EQ(picks, (std::vector<int>{0, 2, 0, 2}));
  loads[0].ready = loads[2].ready = false;
  EXPECT_EQ(router->route(loads, 0), kNoReplicaReady);
}

TEST(RequestRouter, ShortestQueueTakesTheFewestOutstandingRequestsFirstOfEquals) {
  auto router = make_request_router(Router::shortest_queue);
  std::vector<ReplicaLoad> loads = {{true, 3, 10}, {true, 1, 5000}, {true, 1, 1}, {false, 0, 0}};
  EXPECT_EQ(router->route(loads, 3), 1);
  loads[1].outstanding = 2;
  EXPECT_EQ(router->route(loads, 3), 2);
  EXPECT_EQ(router->route({}, 0), kNoReplicaReady);
}

TEST(RequestRouter, LeastTokensWeighsRequestsByTheirTokens) {
  auto router = make_request_router(Router::least_tokens);
  std::vector<ReplicaLoad> loads = {{true, 1, 4000}, {true, 5, 900}, {false, 0, 0}};
  EXPECT_EQ(router->route(loads, 2), 1);
}

TEST(RequestRouter, SharedQueueQueuesEvenWithNoReplicaReady) {
  auto router = make_request_router(Router::shared_queue);
  std::vector<ReplicaLoad> loads = {{false, 0, 0}};
  EXPECT_EQ(router->route(loads, 0), kSharedQueue);
}

TEST(RequestRouter, PrefixAffinityFollowsTheCacheUnlessTheLoadIsOutOfBalance) {
  auto router = make_request_router(Router::prefix_affinity);
  EXPECT_TRUE(router->reads_prefixes());
  auto load = [](bool ready, long long outstanding, double match, double cached) {
    ReplicaLoad l;
    l.ready = ready;
    l.outstanding = outstanding;
    l.prefix_match = match;
    l.cached_blocks = cached;
    return l;
  };
  // Replica 2 holds 80% of the prompt: it gets it although it is the busiest.
  std::vector<ReplicaLoad> loads = {load(true, 3, 0.1, 50), load(true, 1, 0.0, 10), load(true, 20, 0.8, 90)};
  EXPECT_EQ(router->route(loads, 3), 2);
  // No replica holds more than half of it: the one caching least has most room for it.
  loads[2].prefix_match = 0.5;
  EXPECT_EQ(router->route(loads, 3), 1);
  // Out of balance (34 more than the least loaded, the threshold 32): the least loaded.
  loads[2].prefix_match = 0.9;
  loads[2].outstanding = 35;
  EXPECT_EQ(router->route(loads, 3), 1);
  // A replica that is not ready is never chosen, whatever it holds.
  loads = {load(false, 0, 1.0, 0), load(true, 4, 0.6, 5)};
  EXPECT_EQ(router->route(loads, 1), 1);
  EXPECT_EQ(router->route({}, 0), kNoReplicaReady);
}

TEST(RequestRouter, NamesRoundTrip) {
  for (Router r : {Router::round_robin, Router::shortest_queue, Router::least_tokens, Router::shared_queue,
                   Router::prefix_affinity})
    EXPECT_EQ(parse_router(router_name(r)), r);
  EXPECT_EQ(parse_router("JSQ"), Router::shortest_queue);
  EXPECT_FALSE(parse_router("random"));
}

}  // namespace
}  // namespace gw
