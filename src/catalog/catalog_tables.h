// The catalog as people and programs read it: accelerators and offerings as JSON objects
// (schemas/catalog.schema.json) and as tables (`gpuwise catalog accelerators | offerings`).
#pragma once

#include <nlohmann/json.hpp>
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

// explain: each row's source and date (offerings: and notes).
Table accelerators_table(const std::vector<const Accelerator*>& accelerators, bool explain);
// *any_assumed: a committed price came from the labelled per-cloud discount assumption (starred).
Table offerings_table(const Catalog& catalog, const std::vector<const Offering*>& offerings, Pricing pricing, bool explain,
                      bool* any_assumed);

}  // namespace gw
