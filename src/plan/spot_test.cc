#include "plan/spot.h"

#include <cmath>
#include <gtest/gtest.h>

namespace gw {
namespace {

SpotRunInputs inputs(double interval_s) {
  SpotRunInputs in;
  in.checkpoint_s = 60;
  in.restart_s = 300;
  in.interval_s = interval_s;
  in.work_s = 100 * interval_s;  // whole segments, as Daly's formula assumes
  in.preemptions_per_hour = 1.0 / 3.0;
  in.spot_usd_per_hour = 10;
  in.on_demand_usd_per_hour = 30;
  return in;
}

TEST(Spot, MonteCarloMatchesDalysClosedForm) {
  for (double interval : {900.0, 1800.0, 3600.0}) {
    SpotRunInputs in = inputs(interval);
    double expected = expected_wall_time_s(in.work_s, interval, in.checkpoint_s, in.restart_s, 3 * 3600.0);
    SpotOutcome o = simulate_spot(in, SpotPolicy::spot_only, 4000, 42);
    EXPECT_NEAR(o.mean_time_s, expected, expected * 0.02) << interval;
    EXPECT_GT(o.mean_preemptions, 0);
    EXPECT_NEAR(o.mean_usd, o.mean_time_s / 3600 * 10, 1e-6 * o.mean_usd);  // billed while running
  }
}

TEST(Spot, DalysIntervalMinimizesTheSimulatedTime) {
  const double delta = 60, mtbf = 3 * 3600.0;
  double daly = daly_interval_s(delta, mtbf);
  EXPECT_NEAR(young_interval_s(delta, mtbf), std::sqrt(2 * delta * mtbf), 1e-9);
  EXPECT_GT(daly, 0);
  auto mean_time = [&](double interval) {
    SpotRunInputs in = inputs(interval);
    in.work_s = 200 * 3600.0;  // the same work for every interval
    return simulate_spot(in, SpotPolicy::spot_only, 3000, 7).mean_time_s;
  };
  double at_daly = mean_time(daly);
  EXPECT_LT(at_daly, mean_time(daly / 3));
  EXPECT_LT(at_daly, mean_time(daly * 3));
}

TEST(Spot, DeadlineAwareFallsBackToOnDemand) {
  SpotRunInputs in = inputs(1800);
  in.work_s = 48 * 3600.0;
  in.preemptions_per_hour = 2;  // a hostile market
  in.deadline_s = 60 * 3600.0;
  SpotOutcome spot = simulate_spot(in, SpotPolicy::spot_only, 500, 3);
  SpotOutcome aware = simulate_spot(in, SpotPolicy::deadline_aware, 500, 3);
  SpotOutcome on_demand = simulate_spot(in, SpotPolicy::on_demand_only, 1, 3);
  EXPECT_LT(spot.deadline_met_fraction, 0.5);
  EXPECT_GT(aware.deadline_met_fraction, 0.95);
  EXPECT_GT(aware.on_demand_share, 0);
  EXPECT_LT(aware.mean_usd, on_demand.mean_usd * 1.2);
}

TEST(Spot, ReplaysARealAvailabilityTrace) {
  auto trace = load_spot_trace(std::string(GPUWISE_SOURCE_DIR) + "/examples/spot-traces/aws-2023-02-15_p3.2xlarge_us-east-1c.json");
  ASSERT_TRUE(trace.ok()) << trace.error().to_string();
  EXPECT_EQ(trace.value().available.size(), 20158u);
  EXPECT_DOUBLE_EQ(trace.value().gap_s, 195);
  SpotRunInputs in = inputs(1800);
  in.work_s = 24 * 3600.0;
  in.trace = &trace.value();
  SpotOutcome o = simulate_spot(in, SpotPolicy::spot_only, 300, 5);
  EXPECT_GT(o.mean_preemptions, 1);  // capacity comes and goes in this zone
  EXPECT_GT(o.mean_time_s, in.work_s);
  EXPECT_GT(o.p90_time_s, o.mean_time_s * 0.9);
  auto bad = load_spot_trace(std::string(GPUWISE_SOURCE_DIR) + "/README.md");
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace gw
