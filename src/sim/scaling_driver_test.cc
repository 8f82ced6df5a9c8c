// The scaling driver alone: which slots change at a scrape, the warm pool, what it observes, and
// when a steady window is replayed.
#include "sim/scaling_driver.h"

#include <gtest/gtest.h>

namespace gw::sim_detail {
namespace {

std::vector<ReplicaState> slots(std::initializer_list<Life> lives) {
  std::vector<ReplicaState> replicas;
  for (Life life : lives) {
    ReplicaState r;
    r.index = replicas.size();
    r.life = life;
    replicas.push_back(std::move(r));
  }
  return replicas;
}

TEST(ScalingDriver, MoreReplicasWakeDrainingSlotsBeforeStartingOffOnes) {
  auto replicas = slots({Life::ready, Life::off, Life::draining, Life::off, Life::starting});
  std::vector<ReplicaLoad> loads(replicas.size());
  ScaleActions a = ScalingDriver::plan(4, replicas, loads);
  EXPECT_EQ(a.current, 2);
  EXPECT_EQ(a.wake, std::vector<int>({2}));
  EXPECT_EQ(a.start, std::vector<int>({1}));
  EXPECT_TRUE(a.cancel.empty() && a.drain.empty());
  EXPECT_TRUE(ScalingDriver::plan(2, replicas, loads).start.empty());  // as many as wanted: nothing moves
}

TEST(ScalingDriver, FewerReplicasCancelTheNewestStartsThenDrainTheLeastLoaded) {
  auto replicas = slots({Life::ready, Life::ready, Life::starting, Life::ready, Life::starting});
  std::vector<ReplicaLoad> loads(replicas.size());
  loads[0].outstanding = 5;
  loads[1].outstanding = 2;
  loads[3].outstanding = 2;
  ScaleActions a = ScalingDriver::plan(1, replicas, loads);
  EXPECT_EQ(a.current, 5);
  EXPECT_EQ(a.cancel, std::vector<int>({4, 2}));
  EXPECT_EQ(a.drain, std::vector<int>({1, 3}));  // the busiest (0) keeps serving; ties go to the first
  EXPECT_EQ(ScalingDriver::plan(0, replicas, loads).drain.size(), 3u);
}

// Replicas of two slots each (lanes across nodes): counted, started, cancelled and drained whole.
TEST(ScalingDriver, ReplicasOfSeveralSlotsMoveWhole) {
  auto replicas = slots({Life::ready, Life::ready, Life::off, Life::off, Life::starting, Life::starting, Life::ready, Life::ready});
  std::vector<ReplicaLoad> loads(replicas.size());
  loads[0].outstanding = 1;
  loads[1].outstanding = 4;  // replica 0 holds 5
  loads[6].outstanding = 3;  // replica 3 holds 3
  ScaleActions up = ScalingDriver::plan(4, replicas, loads, 2);
  EXPECT_EQ(up.current, 3);
  EXPECT_EQ(up.start, std::vector<int>({2, 3}));
  ScaleActions down = ScalingDriver::plan(1, replicas, loads, 2);
  EXPECT_EQ(down.cancel, std::vector<int>({4, 5}));
  EXPECT_EQ(down.drain, std::vector<int>({6, 7}));  // the replica holding fewer requests in all
}

TEST(ScalingDriver, AWarmNodeStartsFasterAndIsReplacedToKeepThePoolFull) {
  ScalingOptions s;
  s.start_s = 180;
  s.warm_start_s = 40;
  s.warm_pool = 1;
  ScalingDriver driver(s);
  EXPECT_EQ(driver.warm_nodes(), 1);
  bool refill = false;
  EXPECT_EQ(driver.start_delay(refill), 40);
  EXPECT_TRUE(refill);
  EXPECT_TRUE(driver.provisioning());
  EXPECT_EQ(driver.start_delay(refill), 180);  // the refill is not ready yet
  EXPECT_FALSE(refill);
  driver.node_ready();
  EXPECT_FALSE(driver.provisioning());
  EXPECT_EQ(driver.warm_nodes(), 1);
  driver.keep_node_warm();  // the pool is full: a stopped replica's node is let go
  EXPECT_EQ(driver.warm_nodes(), 1);
}

TEST(ScalingDriver, ObservesDutyCycleQueueAndRatesOverTheInterval) {
  ScalingOptions s;
  s.interval_s = 10;
  s.decide = [](const ScaleObservation& o) { return o.ready * 3; };
  s.max_replicas = 4;
  ScalingDriver driver(s);
  auto replicas = slots({Life::ready, Life::ready, Life::starting});
  replicas[0].stats.busy_s = 5;  // busy half of the interval
  replicas[1].busy = true;       // busy throughout, a step in progress since 0
  replicas[1].step_started = 0;
  replicas[1].waiting = {1, 2, 3};
  SimTallies tallies;
  tallies.admitted = 100;
  tallies.completed = 80;
  tallies.in_flight = 20;
  ScaleObservation o = driver.observe(10, replicas, 4, tallies);
  EXPECT_EQ(o.ready, 2);
  EXPECT_EQ(o.starting, 1);
  EXPECT_EQ(o.waiting, 7);
  EXPECT_EQ(o.in_service, 13);
  EXPECT_DOUBLE_EQ(o.busy_fraction, 0.75);
  EXPECT_DOUBLE_EQ(o.arrival_rps, 10);
  EXPECT_DOUBLE_EQ(o.completion_rps, 8);
  EXPECT_EQ(driver.desired(o, 20), 4);  // 6, clamped to max_replicas
  tallies.admitted = 150;
  EXPECT_DOUBLE_EQ(driver.observe(20, replicas, 0, tallies).arrival_rps, 5);  // since the last scrape
  s.decide = [](const ScaleObservation&) { return 0; };
  EXPECT_EQ(ScalingDriver(s).desired(o, 1), 1);  // a request in the system wakes a pool at zero
}

// Arrivals at a constant 10 per second up to t = 10,000 s.
class SteadyArrivals final : public ArrivalProcess {
 public:
  std::optional<Arrival> next() override { return std::nullopt; }
  double stationary_until(double) const override { return 10000; }
  double rate_at(double) const override { return 10; }
};

TEST(ScalingDriver, ASteadyWindowIsReplayedAsOftenAsTheRateHolds) {
  ScalingOptions s;
  s.interval_s = 15;
  s.fast_forward = true;
  s.fast_forward_window_s = 600;
  s.fast_forward_requests = 1000;
  s.would_hold = [](const std::vector<ScaleObservation>&) { return true; };
  s.expected_changes = [](const std::vector<ScaleObservation>&, double) { return 0.0; };
  ScalingDriver driver(s);
  SteadyArrivals arrivals;
  std::vector<ReplicaState> replicas = slots({Life::ready, Life::ready});
  SimTallies tallies;
  tallies.in_flight = 12;
  TrafficSpan span;
  std::vector<Replay> replays;
  auto replay = [&](const Replay& r) { replays.push_back(r); };
  for (double t = 0; t <= 600 + 1e-9; t += 15) {
    tallies.admitted = static_cast<long long>(10 * t) + 12;
    tallies.completed = static_cast<long long>(10 * t);
    span.next_arrival_s = t + 0.1;
    driver.consider_fast_forward(t, true, ScaleObservation{}, ScaleSample{}, span, arrivals, tallies, replicas, replay);
  }
  ASSERT_EQ(replays.size(), 1u);
  EXPECT_DOUBLE_EQ(replays[0].length_s, 600);
  EXPECT_EQ(replays[0].times, 15);  // (10,000 - 600.1 - 15) / 600, whole replays
  EXPECT_DOUBLE_EQ(replays[0].per_request, 15);  // the window's own count is the rate's
  EXPECT_TRUE(driver.window().open);
  EXPECT_DOUBLE_EQ(driver.window().start_s, 600);  // a new window opens after the replay

  // A growing backlog is not steady: nothing is replayed.
  ScalingDriver growing(s);
  replays.clear();
  for (double t = 0; t <= 600 + 1e-9; t += 15) {
    tallies.admitted = static_cast<long long>(10 * t) + 12;
    tallies.completed = static_cast<long long>(8 * t);
    tallies.in_flight = tallies.admitted - tallies.completed;
    growing.consider_fast_forward(t, true, ScaleObservation{}, ScaleSample{}, span, arrivals, tallies, replicas, replay);
  }
  EXPECT_TRUE(replays.empty());
}

}  // namespace
}  // namespace gw::sim_detail
