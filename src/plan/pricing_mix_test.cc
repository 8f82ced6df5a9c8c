// The pricing mix against brute force on random demand curves (every count of 1-year and
// 3-year units), the closed form on a hand-made curve, and the issue's worked prices.
#include "plan/pricing_mix.h"

#include <gtest/gtest.h>
#include <random>

namespace gw {
namespace {

TEST(PricingMix, ClosedFormReservesWhileTheShareOfHoursExceedsThePriceRatio) {
  // 100 hours: 2 units always, a 3rd for 70 hours, a 4th for 50, a 5th for 10.
  std::vector<DemandInterval> demand = {{10, 5, 0}, {40, 4, 0}, {20, 3, 0}, {30, 2, 0}};
  MixPrices prices;
  prices.on_demand = 4.0;
  prices.reserved_1y = 2.5;  // ratio 0.625: levels with share > 0.625 are reserved (1, 2, 3 at 0.70)
  prices.horizon_months = 12;
  auto mix = optimize_pricing_mix(demand, prices);
  ASSERT_TRUE(mix.ok());
  EXPECT_EQ(mix.value().reserved_1y, 3);
  EXPECT_EQ(mix.value().reserved_3y, 0);
  EXPECT_DOUBLE_EQ(mix.value().levels[3].firm_hour_share, 0.5);
  // On-demand: the 4th unit for 50 h and the 5th for 10 h.
  EXPECT_DOUBLE_EQ(mix.value().on_demand_unit_hours, 60);
  EXPECT_DOUBLE_EQ(mix.value().usd, 3 * 2.5 * 100 + 60 * 4.0);
  EXPECT_DOUBLE_EQ(mix.value().all_on_demand_usd, 4.0 * (10 * 5 + 40 * 4 + 20 * 3 + 30 * 2));
}

TEST(PricingMix, TheIssuesPricesOverThreeYearsAndOne) {
  std::vector<DemandInterval> demand;
  // A week: 6 units at night, 14 by day on weekdays, 8 at weekends; 4 units of batch work at night.
  for (int day = 0; day < 7; ++day)
    for (int h = 0; h < 24; ++h) {
      bool night = h < 7 || h >= 22;
      double firm = night ? 6 : day < 5 ? 14 : 8;
      demand.push_back({1, firm, night ? 4.0 : 0.0});
    }
  MixPrices prices;
  prices.on_demand = 4.0;
  prices.reserved_1y = 2.5;
  prices.reserved_3y = 1.8;
  prices.spot = 1.2;
  auto three = optimize_pricing_mix(demand, prices);
  ASSERT_TRUE(three.ok());
  // 3-year at $1.80 over 168 h = $302.40 a level. Levels 1-8 carry firm demand in at least 105 h
  // ($420 on demand). Levels 9-10: firm for the 75 weekday hours ($300) plus the night's batch
  // work for 63 h ($75.60 on spot) = $375.60: reserved. Levels 11-14: $300 on demand: not.
  EXPECT_EQ(three.value().reserved_3y, 10);
  EXPECT_DOUBLE_EQ(three.value().levels[8].usd_if_not_reserved, 4.0 * 75 + 1.2 * 63);
  EXPECT_DOUBLE_EQ(three.value().levels[10].usd_if_not_reserved, 4.0 * 75);
  EXPECT_DOUBLE_EQ(three.value().spot_unit_hours, 0);  // the night's batch work fits on idle reserved units
  EXPECT_EQ(three.value().reserved_1y, 0);
  EXPECT_LT(three.value().usd, three.value().all_on_demand_usd);
  prices.horizon_months = 12;  // a 3-year term for one year's need costs 3 x $1.80 = $5.40 an hour
  auto one = optimize_pricing_mix(demand, prices);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one.value().reserved_3y, 0);
  EXPECT_GT(one.value().reserved_1y, 0);
  EXPECT_GT(one.value().spot_unit_hours, 0);
}

TEST(PricingMix, EqualsBruteForceOnRandomCurves) {
  std::mt19937_64 random(42);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<DemandInterval> demand;
    int intervals = 1 + static_cast<int>(random() % 40);
    for (int i = 0; i < intervals; ++i) {
      DemandInterval d;
      d.hours = 0.25 + static_cast<double>(random() % 100) / 10;
      d.firm_units = static_cast<double>(random() % 1200) / 100;  // fractional: rounds up
      d.interruptible_units = random() % 3 == 0 ? static_cast<double>(random() % 600) / 100 : 0;
      demand.push_back(d);
    }
    MixPrices prices;
    prices.on_demand = 1 + static_cast<double>(random() % 400) / 100;
    if (random() % 4) prices.reserved_1y = prices.on_demand * static_cast<double>(random() % 110) / 100;
    if (random() % 4) prices.reserved_3y = prices.on_demand * static_cast<double>(random() % 110) / 100;
    if (random() % 2) prices.spot = prices.on_demand * static_cast<double>(random() % 120) / 100;
    prices.horizon_months = std::vector<double>{6, 12, 24, 36, 48}[random() % 5];
    auto mix = optimize_pricing_mix(demand, prices);
    ASSERT_TRUE(mix.ok()) << mix.error().message;
    double best = 1e300;
    for (int n1 = 0; n1 <= 20; ++n1)
      for (int n3 = 0; n3 <= 20; ++n3) {
        if ((n1 && !prices.reserved_1y) || (n3 && !prices.reserved_3y)) continue;
        best = std::min(best, mix_cost(demand, prices, n1, n3));
      }
    EXPECT_NEAR(mix.value().usd, best, 1e-9 * best + 1e-9) << "trial " << trial;
  }
}

TEST(PricingMix, BadPricesAreErrors) {
  std::vector<DemandInterval> demand = {{1, 1, 0}};
  MixPrices prices;
  EXPECT_FALSE(optimize_pricing_mix(demand, prices).ok());  // no on-demand price
  prices.on_demand = 4;
  prices.spot = -1;
  auto r = optimize_pricing_mix(demand, prices);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "spot");
  EXPECT_FALSE(optimize_pricing_mix({}, MixPrices{4, std::nullopt, std::nullopt, std::nullopt, 36}).ok());
}

}  // namespace
}  // namespace gw
