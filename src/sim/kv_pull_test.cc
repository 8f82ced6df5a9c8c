// KV pulled between steps (kv_pull.cc), traced by hand: one prefill replica and one decode
// replica, 1e5 B of KV per token over 1e9 B/s links each way, 1 ms per pull for the call; steps
// of 0.010 s + 1e-4 s per decoding sequence + 2e-5 s per prompt token (LinearStepTimer).
#include <gtest/gtest.h>

#include "sim/disaggregated_replica_test.h"
#include "sim/list_arrivals_test.h"

namespace gw {
namespace {

using testing_support::checked_sim_options;
using testing_support::ListArrivals;

// The two replicas; the decode one in `lanes` pipeline stages (one pool of blocks).
std::vector<ReplicaConfig> pulling_pair(int lanes) {
  ReplicaConfig c = testing_support::disaggregated_llm_replica(1e9);
  c.kv_pulled_between_steps = true;
  c.kv_pull_call_s = 0.001;
  ReplicaConfig prefill = c, decode = c;
  prefill.role = ReplicaRole::prefill;
  decode.role = ReplicaRole::decode;
  decode.pipeline_lanes = lanes;
  decode.lanes_share_kv = lanes > 1;
  std::vector<ReplicaConfig> replicas{prefill};
  for (int lane = 0; lane < lanes; ++lane) replicas.push_back(decode);
  return replicas;
}

// A (100-token prompt, 20 tokens) is prefilled in 0.012 s; the idle decode replica pulls its 1e7
// B (0.010 s + the call) until 0.023, then decodes in steps of 0.0101 s: 0.0331 ... 0.0634. B
// (100, 5) arrives at 0.05, its prompt done at 0.062; the decode replica pulls it when its step
// ends, 0.0634 to 0.0744, with no step meanwhile; then B's 4 tokens in steps of two sequences
// (0.0102 s, to 0.1152), and A's last 11 alone: 0.2263. Streamed behind the prefill instead, the
// KV reaches the decode replica at 0.0145 and 0.0645 and stops none of its steps: A is done at
// 0.2068, 0.0195 s sooner (0.0085 s of A's own transfer, and the 0.011 s spent pulling B).
TEST(KvPull, TheDecodeReplicaStepsNoneWhileItPulls) {
  ListArrivals arrivals({{0, 100, 20}, {0.05, 100, 5}});
  auto r = simulate(arrivals, pulling_pair(1), checked_sim_options());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const SimResult& out = r.value();
  EXPECT_EQ(out.requests, 2);
  EXPECT_EQ(out.kv_transfers, 2);
  EXPECT_NEAR(out.kv_pull_stall_s, 0.011 + 0.011, 1e-9);
  EXPECT_NEAR(out.kv_transfer_wait.mean(), (0.011 + (0.0744 - 0.062)) / 2, 1e-9);
  EXPECT_NEAR(out.latency.max(), 0.2263, 1e-9);
  EXPECT_NEAR(out.latency.mean(), (0.2263 + 0.1152 - 0.05) / 2, 1e-9);
  EXPECT_EQ(out.replicas[1].steps, 19);

  std::vector<ReplicaConfig> streamed = pulling_pair(1);
  for (ReplicaConfig& c : streamed) c.kv_pulled_between_steps = false;
  ListArrivals again({{0, 100, 20}, {0.05, 100, 5}});
  auto s = simulate(again, streamed, checked_sim_options());
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(s.value().kv_pull_stall_s, 0);
  EXPECT_NEAR(s.value().latency.max(), 0.2068, 1e-9);
}

// The decode replica in two pipeline stages: A decodes on the first lane (0.00505 s a stage).
// B's KV goes to the idle second lane at 0.062, but the pull waits for A's micro-batch in flight
// (the engine's workers take calls in order): A's step ends at 0.0634, the pull runs to 0.0744,
// and A's next step, on stage 1 only after it, ends at 0.0845 where it would have at 0.0735.
TEST(KvPull, AStagedReplicasPullWaitsForTheMicroBatchInFlight) {
  ListArrivals arrivals({{0, 100, 20}, {0.05, 100, 5}});
  auto r = simulate(arrivals, pulling_pair(2), checked_sim_options());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const SimResult& out = r.value();
  EXPECT_EQ(out.requests, 2);
  EXPECT_NEAR(out.kv_pull_stall_s, 0.011 + (0.0744 - 0.062), 1e-9);
  EXPECT_GT(out.replicas[1].stage_wait_s, 0.0744 - 0.0634 - 1e-9) << "A's lane waited at the stages for the pull";
}

// A request whose KV waits on a busy lane is pulled by whichever lane's step ends first and
// joins that lane's micro-batch (DistServe's engine is one for all its micro-batches): every
// request is pulled once, and the lanes' steps together account for every token.
TEST(KvPull, EveryRequestIsPulledOnceWhicheverLaneEndsFirst) {
  std::vector<Arrival> list;
  for (int i = 0; i < 40; ++i) list.push_back({i * 0.007, 100 + 10.0 * (i % 5), 10 + 3.0 * (i % 4)});
  ListArrivals arrivals(list);
  auto r = simulate(arrivals, pulling_pair(2), checked_sim_options());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const SimResult& out = r.value();
  EXPECT_EQ(out.requests, 40);
  EXPECT_EQ(out.kv_transfers, 40);
  EXPECT_EQ(out.kv_transfer_wait.count(), 40u) << "one pull each";
  EXPECT_GT(out.kv_pull_stall_s, 40 * 0.011 - 1e-9);  // each pull's transfer and call, at least
}

}  // namespace
}  // namespace gw
