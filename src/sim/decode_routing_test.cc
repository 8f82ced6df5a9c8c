// Disaggregated serving: which decode replica takes a prompt's KV: the one holding the fewest
// tokens, or the vLLM Router's own draw (round_robin, power_of_two, random), as it picks both
// halves (plan's decode_routing_as_deployed says which). Every request is served either way, every decode replica takes
// a share, the same seed draws the same replicas, and a policy that cannot choose decode
// replicas (a shared queue, prefix affinity) is refused.
#include <gtest/gtest.h>

#include <vector>

#include "core/random.h"
#include "sim/disaggregated_replica_test.h"
#include "sim/simulator.h"

namespace gw {
namespace {

// Poisson arrivals of 600 prompt and 60 answer tokens, 200 of them at 20 per second.
class DecodeRoutingArrivals final : public ArrivalProcess {
 public:
  explicit DecodeRoutingArrivals(uint64_t seed) : rng_(seed) {}
  std::optional<Arrival> next() override {
    if (count_++ >= 200) return std::nullopt;
    now_ += rng_.exponential(1.0 / 20);
    return Arrival{now_, 600, 60};
  }

 private:
  Rng rng_;
  double now_ = 0;
  int count_ = 0;
};

// Two prefill replicas, three decode replicas.
std::vector<ReplicaConfig> two_prefill_three_decode() {
  ReplicaConfig c = testing_support::disaggregated_llm_replica(1e11);
  ReplicaConfig prefill = c, decode = c;
  prefill.role = ReplicaRole::prefill;
  decode.role = ReplicaRole::decode;
  return {prefill, prefill, decode, decode, decode};
}

SimResult run_decode_routing(Router router, Router decode_router) {
  DecodeRoutingArrivals arrivals(5);
  SimOptions o = testing_support::checked_sim_options();
  o.router = router;
  o.decode_router = decode_router;
  auto r = simulate(arrivals, two_prefill_three_decode(), o);
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.ok() ? r.value() : SimResult{};
}

std::vector<long long> decode_requests(const SimResult& r) {
  std::vector<long long> out;
  for (size_t i = 2; i < r.replicas.size(); ++i) out.push_back(r.replicas[i].requests);
  return out;
}

TEST(DecodeRouting, TheRoutersDrawServesEveryRequestOnEveryDecodeReplica) {
  for (Router router : {Router::least_tokens, Router::power_of_two, Router::random, Router::round_robin}) {
    const SimResult r = run_decode_routing(router, router);
    EXPECT_EQ(r.requests, 200) << router_name(router);
    ASSERT_EQ(r.replicas.size(), 5u);
    for (long long served : decode_requests(r)) EXPECT_GT(served, 0) << router_name(router);
  }
  // The same seed, the same draws; the draw differs from the fewest-tokens choice.
  const SimResult a = run_decode_routing(Router::power_of_two, Router::power_of_two);
  const SimResult b = run_decode_routing(Router::power_of_two, Router::power_of_two);
  EXPECT_EQ(decode_requests(a), decode_requests(b));
  EXPECT_EQ(a.ttft.quantile(0.99), b.ttft.quantile(0.99));
  const SimResult fewest = run_decode_routing(Router::power_of_two, Router::least_tokens);
  EXPECT_NE(decode_requests(a), decode_requests(fewest));
}

TEST(DecodeRouting, PoliciesThatCannotPickADecodeReplicaAreRefused) {
  for (Router decode_router : {Router::shared_queue, Router::prefix_affinity}) {
    DecodeRoutingArrivals arrivals(5);
    SimOptions o = testing_support::checked_sim_options();
    o.decode_router = decode_router;
    auto r = simulate(arrivals, two_prefill_three_decode(), o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().field, "decode_router");
  }
}

}  // namespace
}  // namespace gw
