#include "fleet/rent_prices.h"

#include <fmt/format.h>

#include <algorithm>

namespace gw {

Result<BuyVsRentSpec> with_catalog_rent_prices(const Catalog& catalog, const Constraints& constraints, const BuyVsRentSpec& terms,
                                               const std::string& path) {
  BuyVsRentSpec out = terms;
  if (terms.on_demand_usd_per_gpu_hour > 0) {
    out.rent_source = "rent prices given";
    return out;
  }
  auto named = catalog.accelerator_named(terms.accelerator);
  if (!named.ok()) return Error{path, terms.accelerator_line, "fleet.buy_vs_rent.accelerator", named.error().message};
  OfferingFilter filter;
  filter.accelerators = {named.value()->name};
  filter.clouds = constraints.clouds;
  filter.regions = constraints.regions;
  filter.complete_prices_only = true;  // the host VM is rented with the GPUs
  const int node_gpus = std::min(terms.gpus, 8);
  const Offering* best = nullptr;
  bool whole_nodes = false;
  for (const Offering* o : catalog.select(filter)) {
    if (!o->on_demand_usd_per_hour || o->accelerator_count <= 0) continue;
    const bool big_enough = o->accelerator_count >= node_gpus;
    const double per_gpu = *o->on_demand_usd_per_hour / o->accelerator_count;
    if (!best || (big_enough && !whole_nodes) ||
        (big_enough == whole_nodes && per_gpu < *best->on_demand_usd_per_hour / best->accelerator_count)) {
      best = o;
      whole_nodes = big_enough;
    }
  }
  if (!best)
    return Error{path, terms.line, "fleet.buy_vs_rent.on_demand_usd_per_gpu_hour",
                 fmt::format("no offering of {} with an on-demand price in the clouds and regions the spec allows: give the rent "
                             "price per GPU-hour",
                             named.value()->name)};
  const double gpus = best->accelerator_count;
  out.on_demand_usd_per_gpu_hour = *best->on_demand_usd_per_hour / gpus;
  std::string source = fmt::format(
      "rent prices per GPU-hour from {} {} {} ({} x {}, ${:.4g}/h on demand), the catalog's cheapest {}{} ({}, {}): on demand ${:.3g}",
      best->cloud, best->region, best->instance_type, best->accelerator_count, best->accelerator, *best->on_demand_usd_per_hour,
      best->accelerator, whole_nodes && node_gpus > 1 ? fmt::format(" in nodes of {} GPUs or more", node_gpus) : "", best->source,
      best->as_of, out.on_demand_usd_per_gpu_hour);
  if (!out.reserved_1y_usd_per_gpu_hour && best->reserved_1y_usd_per_hour) {
    out.reserved_1y_usd_per_gpu_hour = *best->reserved_1y_usd_per_hour / gpus;
    source += fmt::format(", reserved 1-year ${:.3g}", *out.reserved_1y_usd_per_gpu_hour);
  }
  if (!out.reserved_3y_usd_per_gpu_hour && best->reserved_3y_usd_per_hour) {
    out.reserved_3y_usd_per_gpu_hour = *best->reserved_3y_usd_per_hour / gpus;
    source += fmt::format(", reserved 3-year ${:.3g}", *out.reserved_3y_usd_per_gpu_hour);
  }
  if ((out.reserved_1y_usd_per_gpu_hour || out.reserved_3y_usd_per_gpu_hour) && best->reserved_is_assumption)
    source += " (reserved at the cloud's assumed commitment discount, not a quoted price)";
  if (!out.spot_usd_per_gpu_hour && best->spot_usd_per_hour) {
    out.spot_usd_per_gpu_hour = *best->spot_usd_per_hour / gpus;
    source += fmt::format(", spot ${:.3g}", *out.spot_usd_per_gpu_hour);
  }
  out.rent_source = source + "; give on_demand_usd_per_gpu_hour (and reserved_*, spot_*) for what your account pays";
  return out;
}

}  // namespace gw
