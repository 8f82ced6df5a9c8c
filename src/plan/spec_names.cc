#include "plan/spec_names.h"

#include <algorithm>
#include <set>

#include "core/text.h"

namespace gw {

namespace {

int line_at(const std::vector<int>& lines, size_t i) { return i < lines.size() ? lines[i] : 0; }

std::string did_you_mean(const std::string& name, const std::vector<std::string>& known) {
  std::string hint = closest_match(name, known);
  return hint.empty() ? "" : " (did you mean '" + hint + "'?)";
}

}  // namespace

std::optional<Error> check_spec_names(const Spec& spec, const Catalog& catalog, const std::string& path) {
  const Constraints& c = spec.constraints;
  std::set<std::string> cloud_set;
  for (const auto& o : catalog.offerings()) cloud_set.insert(o.cloud);
  std::vector<std::string> clouds(cloud_set.begin(), cloud_set.end());
  for (size_t i = 0; i < c.clouds.size(); ++i) {
    if (cloud_set.count(c.clouds[i])) continue;
    std::string all;
    for (const auto& name : clouds) all += (all.empty() ? "" : ", ") + name;
    return Error{path, line_at(c.cloud_lines, i), "constraints.clouds",
                 "'" + c.clouds[i] + "' is not a cloud in the catalog" + did_you_mean(c.clouds[i], clouds) + "; one of " + all};
  }
  // Regions are prefixes ("us-east", "europe-"): each must begin some offering's region.
  std::set<std::string> region_set;
  for (const auto& o : catalog.offerings()) region_set.insert(o.region);
  std::vector<std::string> regions(region_set.begin(), region_set.end());
  for (size_t i = 0; i < c.regions.size(); ++i) {
    const std::string& prefix = c.regions[i];
    const std::string lower = to_lower(prefix);
    bool matches = std::any_of(regions.begin(), regions.end(), [&](const std::string& r) { return to_lower(r).rfind(lower, 0) == 0; });
    if (!matches)
      return Error{path, line_at(c.region_lines, i), "constraints.regions",
                   "'" + prefix + "' begins no region in the catalog" + did_you_mean(prefix, regions) +
                       "; `gpuwise catalog offerings` lists them (regions are prefixes: us-east, europe-)"};
  }
  auto check_accelerators = [&](const std::vector<std::string>& names, const std::vector<int>& lines,
                                const std::string& field) -> std::optional<Error> {
    for (size_t i = 0; i < names.size(); ++i) {
      auto named = catalog.accelerator_named(names[i]);
      if (!named.ok()) return Error{path, line_at(lines, i), field, named.error().message};
    }
    return std::nullopt;
  };
  const bool mapping = c.accelerators_as_mapping;
  if (auto e = check_accelerators(c.accelerators_include, c.accelerator_include_lines,
                                  mapping ? "constraints.accelerators.include" : "constraints.accelerators"))
    return e;
  if (auto e = check_accelerators(c.accelerators_exclude, c.accelerator_exclude_lines, "constraints.accelerators.exclude"))
    return e;
  for (const auto& [key, model] : spec.models) {
    if (!model.measured) continue;
    auto named = catalog.accelerator_named(model.measured->accelerator);
    if (!named.ok()) return Error{path, model.line, "models." + key + ".service_time.accelerator", named.error().message};
  }
  return std::nullopt;
}

}  // namespace gw
