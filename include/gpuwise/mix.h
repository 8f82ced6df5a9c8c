// gpuwise::mix: reserved (1-year, 3-year), on-demand and spot units for a demand curve, exact
// (an integer program), with the saving against all on demand. The question `gpuwise mix DEMAND`
// answers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gpuwise/answer.h"
#include "gpuwise/catalog.h"

namespace gpuwise {

struct MixQuery {
  std::string demand;    // a CSV of timestamp,units[,interruptible_units], or a spec (.yaml)
  std::string offering;  // priced from this instance type; empty: the spec's plan (or given prices)
  std::string service;   // the spec's service; empty: the first
  // USD per unit-hour, over the catalog's prices.
  std::optional<double> on_demand, reserved_1y, reserved_3y, spot;
  double horizon_months = 36;
  std::uint64_t seed = 1;
};

// Throws gpuwise::Error for a demand it cannot read or prices it cannot find.
Answer mix(const Catalog& catalog, const MixQuery& query);

}  // namespace gpuwise
