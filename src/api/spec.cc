#include "gpuwise/spec.h"

#include "api/handles.h"

namespace gpuwise {

Spec Spec::load(const std::string& path) {
  auto loaded = gw::load_spec(path);
  if (!loaded.ok()) throw gw::public_error(loaded.error());
  return Spec(std::make_shared<const Impl>(Impl{std::move(loaded.value())}));
}

Spec Spec::parse(const std::string& yaml, const std::string& path) {
  auto parsed = gw::parse_spec(yaml, path);
  if (!parsed.ok()) throw gw::public_error(parsed.error());
  return Spec(std::make_shared<const Impl>(Impl{std::move(parsed.value())}));
}

const std::string& Spec::path() const { return impl_->spec.path; }
const std::string& Spec::name() const { return impl_->spec.name; }

std::vector<std::string> Spec::service_names() const {
  std::vector<std::string> names;
  for (const auto& s : impl_->spec.services) names.push_back(s.name);
  return names;
}

std::vector<std::string> Spec::training_names() const {
  std::vector<std::string> names;
  for (const auto& t : impl_->spec.training) names.push_back(t.name);
  return names;
}

}  // namespace gpuwise
