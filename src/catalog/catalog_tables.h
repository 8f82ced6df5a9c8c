// The catalog as people and programs read it: accelerators and offerings as JSON objects
// (schemas/catalog.schema.json) and as tables (`gpuwise catalog accelerators | offerings`).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "report/table.h"

namespace gw {

nlohmann::json to_json(const Accelerator& accelerator);
// With the price at `pricing` beside all four.
nlohmann::json to_json(const Offering& offering, Pricing pricing);

// Accelerators by name (none: all) with at least min_vram_gib; an Error naming the closest
// name for one the catalog lacks (field "--accelerator").
Result<std::vector<const Accelerator*>> select_accelerators(const Catalog& catalog, const std::vector<std::string>& names,
                                                            double min_vram_gib);

// `gpuwise catalog offerings`'s filters, as its options spell them; errors name the option.
struct OfferingSelection {
  std::vector<std::string> clouds, regions, accelerators;  // comma lists allowed in each entry
  std::string geo, pricing = "on-demand";
  double min_vram_gib = 0;
  std::optional<double> max_usd_per_hour;
  bool spot = false;  // only offerings with a spot price, sorted by it
  int limit = 0;      // 0: all
};
struct SelectedOfferings {
  std::vector<const Offering*> offerings;  // cheapest first at `pricing`
  Pricing pricing = Pricing::on_demand;
};
Result<SelectedOfferings> select_offerings(const Catalog& catalog, const OfferingSelection& selection);

// explain: each row's source and date (offerings: and notes).
Table accelerators_table(const std::vector<const Accelerator*>& accelerators, bool explain);
// *any_assumed: a committed price came from the labelled per-cloud discount assumption (starred).
Table offerings_table(const Catalog& catalog, const std::vector<const Offering*>& offerings, Pricing pricing, bool explain,
                      bool* any_assumed);

}  // namespace gw
