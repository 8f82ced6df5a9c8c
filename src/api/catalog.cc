#include "gpuwise/catalog.h"

#include "api/handles.h"
#include "catalog/catalog_tables.h"
#include "report/json_document.h"

namespace gpuwise {

Catalog Catalog::embedded() {
  auto loaded = gw::Catalog::embedded();
  if (!loaded.ok()) throw gw::public_error(loaded.error());
  return Catalog(std::make_shared<const Impl>(Impl{std::move(loaded.value())}));
}

void Catalog::apply_overrides(const std::string& folder) {
  // Copy on write: results and other handles keep the data they were made with.
  auto changed = std::make_shared<Impl>(*impl_);
  if (auto error = changed->catalog.apply_overrides(folder)) throw gw::public_error(*error);
  impl_ = std::move(changed);
}

std::size_t Catalog::accelerator_count() const { return impl_->catalog.accelerators().size(); }
std::size_t Catalog::offering_count() const { return impl_->catalog.offerings().size(); }

std::string Catalog::accelerators_json(const std::vector<std::string>& names, double min_vram_gib) const {
  auto shown = gw::value_or_throw(gw::select_accelerators(impl_->catalog, names, min_vram_gib));
  nlohmann::json list = nlohmann::json::array();
  for (const auto* a : shown) list.push_back(gw::to_json(*a));
  return gw::json_text(gw::json_document("catalog accelerators", {{"accelerators", list}}));
}

std::string Catalog::offerings_json(const OfferingFilter& filter) const {
  gw::OfferingSelection selection;
  selection.clouds = filter.clouds;
  selection.regions = filter.regions;
  selection.accelerators = filter.accelerators;
  selection.geo = filter.geo;
  selection.pricing = filter.pricing;
  selection.min_vram_gib = filter.min_vram_gib;
  selection.max_usd_per_hour = filter.max_usd_per_hour;
  selection.limit = filter.limit;
  auto chosen = gw::value_or_throw(gw::select_offerings(impl_->catalog, selection));
  nlohmann::json list = nlohmann::json::array();
  for (const auto* o : chosen.offerings) list.push_back(gw::to_json(*o, chosen.pricing));
  return gw::json_text(gw::json_document("catalog offerings", {{"offerings", list}, {"count", chosen.offerings.size()}}));
}

}  // namespace gpuwise
