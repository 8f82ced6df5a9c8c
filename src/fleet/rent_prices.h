// The rent side of buy versus rent from the catalog, where the spec names the accelerator and
// leaves its prices out: what renting that GPU costs on the clouds and regions the spec allows.
#pragma once

#include "catalog/catalog.h"
#include "core/error.h"
#include "spec/spec.h"

namespace gw {

// The terms with on-demand (and, where the spec gives none, reserved and spot) prices per
// GPU-hour of the cheapest offering of the accelerator with nodes of min(gpus, 8) GPUs or more
// (a cluster is rented as whole nodes; any size where no such node exists), `rent_source`
// saying which. Terms whose on-demand price is given come back as they are.
Result<BuyVsRentSpec> with_catalog_rent_prices(const Catalog& catalog, const Constraints& constraints, const BuyVsRentSpec& terms,
                                               const std::string& path);

}  // namespace gw
