// Demand curves for `gpuwise mix` (timestamp,units[,interruptible_units]), read and then
// optimized with every price given, so the level tables and the cost pass see what parsed.
#include "fuzz_input.h"
#include "plan/pricing_mix.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto demand = gw::load_demand_csv(gw::fuzz::write_input(data, size, "demand.csv"));
  if (!demand.ok()) return 0;
  gw::MixPrices prices;
  prices.on_demand = 4.0;
  prices.reserved_1y = 2.5;
  prices.reserved_3y = 1.8;
  prices.spot = 1.2;
  prices.horizon_months = 24;
  (void)gw::optimize_pricing_mix(demand.value(), prices);
  return 0;
}
