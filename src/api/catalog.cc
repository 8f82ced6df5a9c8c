#include "gpuwise/catalog.h"

#include "api/handles.h"

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

}  // namespace gpuwise
