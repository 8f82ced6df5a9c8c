// Each router's choice on hand-made loads: round robin skips replicas that are not ready and
// keeps its place between calls; the least-loaded routers take the first of equals.
#include "sim/request_router.h"

#include <gtest/gtest.h>

#include <cmath>
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

// kube-proxy's random choice: ready replicas only, each as often (within 5 standard deviations
// over 30,000 draws), and the same seed draws the same replicas.
TEST(RequestRouter, RandomSpreadsEvenlyOverReadyReplicasOnly) {
  std::vector<ReplicaLoad> loads = {{true, 50, 0}, {false, 0, 0}, {true, 0, 0}, {true, 0, 0}};
  auto router = make_request_router(Router::random, 7);
  std::vector<int> counts(4, 0);
  std::vector<int> first_draws;
  const int draws = 30000;
  for (int i = 0; i < draws; ++i) {
    const int r = router->route(loads, 3);
    ASSERT_GE(r, 0);
    ++counts[static_cast<size_t>(r)];
    if (i < 20) first_draws.push_back(r);
  }
  EXPECT_EQ(counts[1], 0);
  const double expected = draws / 3.0, sd = std::sqrt(draws * (1.0 / 3) * (2.0 / 3));
  for (size_t i : {0u, 2u, 3u}) EXPECT_NEAR(counts[i], expected, 5 * sd) << "replica " << i;
  auto again = make_request_router(Router::random, 7);
  for (int expected_pick : first_draws) EXPECT_EQ(again->route(loads, 3), expected_pick);
  loads = {{false, 0, 0}};
  EXPECT_EQ(router->route(loads, 0), kNoReplicaReady);
}

// The vLLM Router's power_of_two: of two distinct ready replicas drawn at random, the one with
// fewer requests in flight. With three ready at 10, 5 and 0 in flight, the busiest never wins,
// the idlest wins whenever drawn (2 of the 3 pairs), the middle one in the third pair; of two,
// always the lesser; one alone takes everything.
TEST(RequestRouter, PowerOfTwoTakesTheLesserOfTwoDrawn) {
  std::vector<ReplicaLoad> loads = {{true, 10, 0}, {true, 5, 0}, {false, 0, 0}, {true, 0, 99999}};
  auto router = make_request_router(Router::power_of_two, 11);
  std::vector<int> counts(4, 0);
  const int draws = 30000;
  for (int i = 0; i < draws; ++i) ++counts[static_cast<size_t>(router->route(loads, 3))];
  EXPECT_EQ(counts[0], 0);
  EXPECT_EQ(counts[2], 0);
  const double sd = std::sqrt(draws * (1.0 / 3) * (2.0 / 3));
  EXPECT_NEAR(counts[3], draws * 2.0 / 3, 5 * sd);
  EXPECT_NEAR(counts[1], draws / 3.0, 5 * sd);
  loads[3].ready = false;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(router->route(loads, 2), 1);
  loads[1].ready = false;
  EXPECT_EQ(router->route(loads, 1), 0);
  loads[0].ready = false;
  EXPECT_EQ(router->route(loads, 0), kNoReplicaReady);
}

// Two copies of a round-robin router (the vLLM Router's two replicas behind their Service), each
// request to one at random: each copy deals its own turns from the first replica, so the merged
// stream repeats a replica back to back an eighth of the time over four (the other copy drawn,
// half the time, standing on the replica just dealt, a quarter) where one copy never does;
// every replica still takes a quarter; the same seed, the same draws.
TEST(RequestRouter, RoundRobinCopiesDealTheirOwnTurns) {
  std::vector<ReplicaLoad> loads(4, ReplicaLoad{true, 0, 0});
  auto one = make_request_router(Router::round_robin, 5, 1);
  auto two = make_request_router(Router::round_robin, 5, 2);
  std::vector<int> counts(4, 0);
  std::vector<int> picks;
  int one_repeats = 0, two_repeats = 0, last_one = -1, last_two = -1;
  const int draws = 40000;
  for (int i = 0; i < draws; ++i) {
    const int a = one->route(loads, 4), b = two->route(loads, 4);
    one_repeats += a == last_one;
    two_repeats += b == last_two;
    last_one = a;
    last_two = b;
    ++counts[static_cast<size_t>(b)];
    if (i < 50) picks.push_back(b);
  }
  EXPECT_EQ(one_repeats, 0);
  const double eighth = draws / 8.0, sd = std::sqrt(draws * (1.0 / 8) * (7.0 / 8));
  EXPECT_NEAR(two_repeats, eighth, 5 * sd);
  for (int c : counts) EXPECT_NEAR(c, draws / 4, draws / 40);
  auto again = make_request_router(Router::round_robin, 5, 2);
  for (int expected_pick : picks) EXPECT_EQ(again->route(loads, 4), expected_pick);
}

TEST(RequestRouter, NamesRoundTrip) {
  for (Router r : {Router::round_robin, Router::shortest_queue, Router::least_tokens, Router::shared_queue,
                   Router::prefix_affinity, Router::random, Router::power_of_two})
    EXPECT_EQ(parse_router(router_name(r)), r);
  EXPECT_EQ(parse_router("JSQ"), Router::shortest_queue);
  EXPECT_EQ(parse_router("power_of_two"), Router::power_of_two);
  EXPECT_FALSE(parse_router("least-loaded"));
}

}  // namespace
}  // namespace gw
