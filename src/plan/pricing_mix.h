// The pricing mix for a demand curve: how many units to reserve (1-year or 3-year), how many
// unit-hours to buy on demand for bursts, and how many to run on spot (interruptible work only).
// Exact: a unit level k is worth reserving when its reserved price over the span is below what
// it would otherwise cost, on-demand for the hours firm demand reaches k plus spot for the hours
// interruptible work stacked on top reaches it. That cost falls with k, so the optimum reserves
// levels 1..K: the closed form "reserve while the share of hours with demand >= k exceeds the
// reserved-to-on-demand price ratio", extended to interruptible work.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace gw {

struct DemandInterval {
  double hours = 1;
  double firm_units = 0;           // must run (serving): reserved or on-demand
  double interruptible_units = 0;  // may run on spot, or on reserved units firm demand leaves idle
};

struct MixPrices {
  double on_demand = 0;                 // USD per unit-hour
  std::optional<double> reserved_1y;    // effective USD per unit-hour, paid for every hour of the term
  std::optional<double> reserved_3y;
  std::optional<double> spot;
  double horizon_months = 36;           // how long the demand curve holds; a term past it is paid anyway
};

struct MixLevel {
  int unit = 0;                  // k
  double firm_hour_share = 0;    // share of hours with firm demand >= k
  double stacked_hour_share = 0; // share of hours with firm + interruptible >= k
  double usd_if_not_reserved = 0;
  double usd_if_reserved = 0;
  std::string choice;            // reserved-1y, reserved-3y, on-demand/spot
};

struct PricingMix {
  int reserved_1y = 0, reserved_3y = 0;
  double on_demand_unit_hours = 0, spot_unit_hours = 0, reserved_unit_hours = 0;
  double reserved_used_unit_hours = 0;  // reserved hours that carried work
  double hours = 0;                     // the curve's span
  double usd = 0, all_on_demand_usd = 0;  // over the span
  double usd_per_month = 0, all_on_demand_usd_per_month = 0;
  double reserved_1y_effective = 0, reserved_3y_effective = 0;  // per unit-hour over the horizon
  double peak_units = 0;
  std::vector<MixLevel> levels;
  std::vector<std::string> assumptions;
};

// Effective hourly price of a commitment over the horizon: terms are bought whole.
double effective_reserved_price(double usd_per_hour, double term_months, double horizon_months);

Result<PricingMix> optimize_pricing_mix(const std::vector<DemandInterval>& demand, const MixPrices& prices);

// The cost of a given mix over the curve (for tests and what-ifs): reserved units serve firm
// demand first, then interruptible work; the rest goes on demand (firm) or spot (interruptible).
double mix_cost(const std::vector<DemandInterval>& demand, const MixPrices& prices, int reserved_1y, int reserved_3y);

// A demand CSV: timestamp,units[,interruptible_units] (column names configurable by position:
// the first three columns). Each row holds until the next; the last for the median gap.
Result<std::vector<DemandInterval>> load_demand_csv(const std::string& path);

}  // namespace gw
