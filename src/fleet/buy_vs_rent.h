// Owning GPUs against renting them: purchase plus overhead (power, cooling, networking,
// storage, staff) over a straight-line life, against on-demand at the utilization, reserved and
// spot; the break-even utilization and month; and a hybrid of an owned baseline with cloud
// bursts for a demand curve (the exact mix, owned units priced like a commitment).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "plan/pricing_mix.h"
#include "spec/spec.h"  // BuyVsRentTerms

namespace gw {

struct BuyVsRentInput : BuyVsRentTerms {
  double utilization = 0.5;        // share of hours the GPUs are busy
  std::vector<DemandInterval> demand;  // optional: GPUs by hour, for the hybrid
};

struct BuyVsRentReport {
  double owned_usd_per_month = 0;          // (purchase x (1 + overhead)) / life months
  double owned_usd_per_gpu_hour = 0;       // the same per GPU-hour, busy or not
  double overhead_usd_per_month = 0;
  double on_demand_usd_per_month = 0;      // busy hours only
  std::optional<double> reserved_1y_usd_per_month, reserved_3y_usd_per_month, spot_usd_per_month;
  double break_even_utilization = 0;       // on-demand costs as much as owning above this
  std::optional<double> break_even_months; // cash: purchase + overhead to date = rent to date
  std::string cheapest;
  // Hybrid (with a demand curve).
  std::optional<int> hybrid_owned_gpus;
  double hybrid_cloud_gpu_hours_per_month = 0;
  double hybrid_usd_per_month = 0;
  std::vector<std::string> assumptions;
};

Result<BuyVsRentReport> buy_vs_rent(const BuyVsRentInput& input);

}  // namespace gw
