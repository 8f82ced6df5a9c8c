#include "fleet/buy_vs_rent.h"

#include <cmath>
#include <fmt/format.h>

#include "core/money.h"

namespace gw {

Result<BuyVsRentReport> buy_vs_rent(const BuyVsRentInput& in) {
  if (in.gpus < 1 || !(in.purchase_usd > 0) || !(in.on_demand_usd_per_gpu_hour > 0) || !(in.life_years > 0) ||
      in.overhead_fraction < 0 || in.utilization < 0 || in.utilization > 1)
    return Error{"", 0, "fleet.buy_vs_rent", "needs gpus >= 1, a purchase price, an on-demand price, a life, utilization in [0, 1]"};
  BuyVsRentReport r;
  const double months = in.life_years * 12;
  r.owned_usd_per_month = in.purchase_usd * (1 + in.overhead_fraction) / months;
  r.overhead_usd_per_month = in.purchase_usd * in.overhead_fraction / months;
  r.owned_usd_per_gpu_hour = r.owned_usd_per_month / (in.gpus * kHoursPerMonth);
  r.on_demand_usd_per_month = in.gpus * kHoursPerMonth * in.utilization * in.on_demand_usd_per_gpu_hour;
  if (in.reserved_1y_usd_per_gpu_hour) r.reserved_1y_usd_per_month = in.gpus * kHoursPerMonth * *in.reserved_1y_usd_per_gpu_hour;
  if (in.reserved_3y_usd_per_gpu_hour) r.reserved_3y_usd_per_month = in.gpus * kHoursPerMonth * *in.reserved_3y_usd_per_gpu_hour;
  if (in.spot_usd_per_gpu_hour) r.spot_usd_per_month = in.gpus * kHoursPerMonth * in.utilization * *in.spot_usd_per_gpu_hour;
  r.break_even_utilization = r.owned_usd_per_month / (in.gpus * kHoursPerMonth * in.on_demand_usd_per_gpu_hour);
  // Cash: the purchase up front, overhead monthly, against renting the busy hours monthly.
  double monthly_gap = r.on_demand_usd_per_month - r.overhead_usd_per_month;
  if (monthly_gap > 0) r.break_even_months = in.purchase_usd / monthly_gap;

  std::vector<std::pair<std::string, double>> options = {{"own", r.owned_usd_per_month}, {"on-demand", r.on_demand_usd_per_month}};
  if (r.reserved_1y_usd_per_month) options.emplace_back("reserved-1y", *r.reserved_1y_usd_per_month);
  if (r.reserved_3y_usd_per_month) options.emplace_back("reserved-3y", *r.reserved_3y_usd_per_month);
  if (r.spot_usd_per_month) options.emplace_back("spot (interruptible work only)", *r.spot_usd_per_month);
  double best = 1e300;
  for (const auto& [name, usd] : options)
    if (usd < best) best = usd, r.cheapest = name;

  if (!in.demand.empty()) {
    // Owned GPUs behave like a commitment paid every hour of their life: the exact mix applies.
    MixPrices prices;
    prices.on_demand = in.on_demand_usd_per_gpu_hour;
    prices.reserved_3y = r.owned_usd_per_gpu_hour;
    prices.horizon_months = 36;  // owned_usd_per_gpu_hour is already per hour of the life
    auto mix = optimize_pricing_mix(in.demand, prices);
    if (!mix.ok()) return mix.error();
    r.hybrid_owned_gpus = mix.value().reserved_3y;
    r.hybrid_cloud_gpu_hours_per_month = mix.value().on_demand_unit_hours * kHoursPerMonth / mix.value().hours;
    r.hybrid_usd_per_month = mix.value().usd_per_month;
  }

  auto& a = r.assumptions;
  a.push_back(fmt::format("owning: ${:.0f} purchase x (1 + {:.0f}% overhead for power, cooling, networking, storage, staff) over "
                          "{:.3g} years straight-line = ${:.0f}/month, ${:.3g} per GPU-hour busy or idle",
                          in.purchase_usd, in.overhead_fraction * 100, in.life_years, r.owned_usd_per_month, r.owned_usd_per_gpu_hour));
  a.push_back(fmt::format("renting on demand pays only busy hours: {} GPUs x 730 h x {:.0f}% x ${:.3g}", in.gpus, in.utilization * 100,
                          in.on_demand_usd_per_gpu_hour));
  a.push_back("reserved capacity is paid every hour; spot fits interruptible work only (checkpointed training, batch)");
  a.push_back("break-even utilization: owning per month / (GPUs x 730 h x on-demand); break-even month: purchase / "
              "(monthly rent - monthly overhead)");
  if (!in.demand.empty())
    a.push_back("hybrid: owned GPUs sized to the demand curve by the exact mix (own unit k while its hourly cost of ownership is "
                "below on-demand for the hours demand reaches k); the rest rented on demand");
  return r;
}

}  // namespace gw
