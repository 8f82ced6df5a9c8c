// The mix question (`gpuwise mix DEMAND`): reserved (1-year, 3-year), on-demand and spot units for
// a demand curve (a CSV of timestamp,units[,interruptible_units], or a spec whose service's plan
// turns its traffic into replicas per hour), exact, with the saving against all on demand.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "plan/pricing_mix.h"
#include "report/document.h"
#include "report/table.h"

namespace gw {

// What `gpuwise mix` takes; errors name its options ("--on-demand").
struct MixOptions {
  std::string demand;             // a demand CSV, or a spec (.yaml, .yml)
  std::string offering, service;  // catalog prices of this instance type; the spec's service (default: the first)
  std::optional<double> on_demand, reserved_1y, reserved_3y, spot;  // USD per unit-hour, over the catalog's
  double horizon_months = 36;
  uint64_t seed = 1;              // the spec's plan check and its arrivals
};

struct MixResult {
  std::string demand, unit = "unit", source;
  std::vector<DemandInterval> intervals;
  MixPrices prices;
  PricingMix mix;
  double saving_usd_per_month = 0;  // against all on demand
};

Result<MixResult> mix_question(const Catalog& catalog, const MixOptions& options);

nlohmann::json to_json(const MixResult& result);

struct MixReport {
  std::string summary;  // the demand, the mix and its cost, one line each
  Table levels;         // per unit of demand: hours busy, cost reserved or not, the choice
  std::string text;     // summary, table and (explain) the assumptions
  Document document;
};
MixReport mix_report(const MixResult& result, bool explain);

}  // namespace gw
