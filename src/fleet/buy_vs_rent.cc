#include "fleet/buy_vs_rent.h"

#include <cmath>
#include <limits>
#include <fmt/format.h>

#include "core/formatting.h"
#include "core/money.h"

namespace gw {

// Defaults a spec can override (read 2026-12-01): typical figures, not this team's.
//  pue 1.5: Uptime Institute Global Data Center Survey 2023, industry average 1.58.
//  usd_per_kwh 0.08: US EIA Electric Power Monthly, average industrial retail price 2023-2024 (about 8 cents).
//  colocation 180 $/kW-month: CBRE North America Data Center Trends, wholesale 250-500 kW asking rents (about $180).
//  networking 10% of the GPUs' price, staff $35 per GPU-month (one $200k/year engineer per about 500 GPUs),
//  cost of capital 8%/year, resale 15% after the life: assumptions of this tool, each said in the report.

Result<BuyVsRentReport> buy_vs_rent(const BuyVsRentInput& in) {
  if (in.gpus < 1 || !(in.purchase_usd > 0) || !(in.on_demand_usd_per_gpu_hour > 0) || !(in.life_years > 0) ||
      (in.overhead_fraction && *in.overhead_fraction < 0) || in.utilization < 0 || in.utilization > 1)
    return Error{"", 0, "fleet.buy_vs_rent", "needs gpus >= 1, a purchase price, an on-demand price, a life, utilization in [0, 1]"};
  if (!in.overhead_fraction && !(in.watts_per_gpu > 0))
    return Error{"", 0, "fleet.buy_vs_rent.accelerator", "power needs the GPUs' watts: name the accelerator (its TDP) or give watts_per_gpu"};
  if (in.resale_fraction < 0 || in.resale_fraction >= 1 || in.cost_of_capital < 0 || in.pue < 1)
    return Error{"", 0, "fleet.buy_vs_rent", "resale_fraction in [0, 1), cost_of_capital >= 0 and pue >= 1"};
  BuyVsRentReport r;
  const double months = in.life_years * 12;
  const double hours = kHoursPerMonth;
  const bool lump = in.overhead_fraction.has_value();
  const double networking_usd = lump ? 0 : in.purchase_usd * in.networking_fraction;
  r.capital_usd = in.purchase_usd + networking_usd;
  const double resale_usd = in.purchase_usd * in.resale_fraction;
  // Capital recovery: the level monthly payment that repays the capital less the resale's
  // present value at the cost of capital; above straight-line depreciation it is the interest.
  const double i = in.cost_of_capital / 12;
  const double recovered = r.capital_usd - resale_usd / std::pow(1 + i, months);
  const double payment = i > 0 ? recovered * i / (1 - std::pow(1 + i, -months)) : recovered / months;
  const double depreciation = (r.capital_usd - resale_usd) / months;
  auto line = [&](std::string name, double usd, std::string formula, bool varies = false) {
    r.owned_lines.push_back({std::move(name), usd, std::move(formula), varies});
  };
  line("purchase", in.purchase_usd / months, fmt::format("${} over {:.0f} months", format_number(in.purchase_usd, 0), months));
  if (resale_usd > 0)
    line("resale value", -resale_usd / months,
         fmt::format("{:.0f}% of the purchase recovered after {:.3g} years", in.resale_fraction * 100, in.life_years));
  if (networking_usd > 0)
    line("networking", networking_usd / months, fmt::format("{:.0f}% of the purchase (fabric, switches) over the life", in.networking_fraction * 100));
  if (payment - depreciation > 0)
    line("cost of capital", payment - depreciation,
         fmt::format("{:.1f}%/year on ${} tied up (capital recovery payment ${}/month less depreciation)",
                     in.cost_of_capital * 100, format_number(r.capital_usd, 0), format_number(payment, 0)));
  double power_per_utilization = 0;
  if (lump) {
    const double overhead = in.purchase_usd * *in.overhead_fraction / months;
    line("overhead", overhead, fmt::format("{:.0f}% of the purchase over the life for power, cooling, networking, storage, staff "
                                           "(one lump, as the spec gives it)", *in.overhead_fraction * 100));
    r.running_usd_per_month = overhead;
  } else {
    const double it_kw = in.gpus * in.watts_per_gpu / 1000;
    power_per_utilization = it_kw * in.pue * hours * in.usd_per_kwh;
    const double power = power_per_utilization * in.utilization;
    line("power", power, fmt::format("{} GPUs x {:.0f} W x {:.0f}% busy x PUE {:.2f} x ${:.3f}/kWh x 730 h", in.gpus, in.watts_per_gpu,
                                     in.utilization * 100, in.pue, in.usd_per_kwh), true);
    const double colocation = it_kw * in.colocation_usd_per_kw_month;
    line("colocation", colocation, fmt::format("{:.2f} kW provisioned x ${:.0f}/kW-month", it_kw, in.colocation_usd_per_kw_month));
    const double staff = in.gpus * in.staff_usd_per_gpu_month;
    line("staff", staff, fmt::format("{} GPUs x ${:.0f}/GPU-month", in.gpus, in.staff_usd_per_gpu_month));
    r.running_usd_per_month = power + colocation + staff;
  }
  for (const auto& l : r.owned_lines) r.owned_usd_per_month += l.usd_per_month;
  r.owned_usd_per_gpu_hour = r.owned_usd_per_month / (in.gpus * hours);
  r.on_demand_usd_per_month = in.gpus * hours * in.utilization * in.on_demand_usd_per_gpu_hour;
  if (in.reserved_1y_usd_per_gpu_hour) r.reserved_1y_usd_per_month = in.gpus * hours * *in.reserved_1y_usd_per_gpu_hour;
  if (in.reserved_3y_usd_per_gpu_hour) r.reserved_3y_usd_per_month = in.gpus * hours * *in.reserved_3y_usd_per_gpu_hour;
  if (in.spot_usd_per_gpu_hour) r.spot_usd_per_month = in.gpus * hours * in.utilization * *in.spot_usd_per_gpu_hour;
  // Owning costs fixed + power x u; renting costs rent x u: equal at u = fixed / (rent - power).
  const double fixed = r.owned_usd_per_month - power_per_utilization * in.utilization;
  const double rent_per_utilization = in.gpus * hours * in.on_demand_usd_per_gpu_hour;
  r.break_even_utilization = rent_per_utilization > power_per_utilization ? fixed / (rent_per_utilization - power_per_utilization)
                                                                           : std::numeric_limits<double>::infinity();
  // Cash: the capital up front, running costs monthly, against renting the busy hours monthly.
  double monthly_gap = r.on_demand_usd_per_month - r.running_usd_per_month;
  if (monthly_gap > 0) r.break_even_months = r.capital_usd / monthly_gap;

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
  for (const auto& l : r.owned_lines)
    a.push_back(fmt::format("owning, {}: ${}/month = {}", l.name, format_number(l.usd_per_month, 0), l.formula));
  if (!lump)
    a.push_back("power counts busy hours at the server's watts per GPU (the GPU's TDP x 1.82 for the rest of an HGX server when "
                "the accelerator is named; watts_per_gpu as given otherwise; idle draw left out); colocation bills the provisioned IT kW; defaults for PUE (1.5, Uptime Institute 2023 survey: "
                "1.58 average), power ($0.08/kWh, US EIA industrial average), colocation ($180/kW-month, CBRE wholesale asking "
                "rents), networking (10%), staff ($35/GPU-month), cost of capital (8%) and resale (15%) are overridable");
  a.push_back(fmt::format("renting on demand pays only busy hours: {} GPUs x 730 h x {:.0f}% x ${:.3g}", in.gpus, in.utilization * 100,
                          in.on_demand_usd_per_gpu_hour));
  a.push_back("reserved capacity is paid every hour; spot fits interruptible work only (checkpointed training, batch)");
  a.push_back("break-even utilization: owning's fixed lines / (GPUs x 730 h x on-demand - power at full use); break-even "
              "month: the capital paid up front / (monthly rent - monthly running costs), resale and interest left out");
  if (!in.demand.empty())
    a.push_back("hybrid: owned GPUs sized to the demand curve by the exact mix (own unit k while its hourly cost of ownership is "
                "below on-demand for the hours demand reaches k); the rest rented on demand");
  return r;
}

}  // namespace gw
