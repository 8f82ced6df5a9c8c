// Owning GPUs against renting them, line by line: the purchase over a straight-line life less
// its resale value, networking bought with it, the cost of the capital tied up (a capital
// recovery payment), power (watts x utilization x PUE x $/kWh), colocation per provisioned kW
// and staff; against on-demand at the utilization, reserved and spot; the break-even
// utilization and month; and a hybrid of an owned baseline with cloud bursts for a demand
// curve (the exact mix, owned units priced like a commitment).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "plan/pricing_mix.h"
#include "spec/spec.h"  // BuyVsRentTerms

namespace gw {

// A GPU server's power per watt of its GPUs' TDP: an 8-GPU HGX/DGX server draws far more than
// its GPUs (CPUs, memory, NICs, NVSwitches, fans). DGX H100: 10.2 kW maximum for 8 x 700 W
// GPUs = 1.82x (DGX A100: 6.5 kW for 8 x 400 W = 2.03x; the lower is used).
inline constexpr double kServerWattsPerGpuWatt = 10.2 / 5.6;
inline constexpr const char* kServerWattsSource =
    "NVIDIA DGX H100 datasheet: system power ~10.2 kW max with 8 x 700 W H100 SXM (DGX A100: 6.5 kW with 8 x 400 W)";

struct BuyVsRentInput : BuyVsRentTerms {
  double utilization = 0.5;        // share of hours the GPUs are busy
  std::vector<DemandInterval> demand;  // optional: GPUs by hour, for the hybrid
};

// One line of what owning costs per month.
struct CostLine {
  std::string name;
  double usd_per_month = 0;
  std::string formula;  // with the figures
  bool varies_with_utilization = false;
};

struct BuyVsRentReport {
  std::vector<CostLine> owned_lines;       // they sum to owned_usd_per_month
  double owned_usd_per_month = 0;
  double owned_usd_per_gpu_hour = 0;       // the same per GPU-hour, busy or not
  double running_usd_per_month = 0;        // power, colocation, staff (or the lump): paid monthly
  double capital_usd = 0;                  // paid up front: the purchase and networking
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
