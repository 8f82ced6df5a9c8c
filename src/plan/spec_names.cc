#include "plan/spec_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/text.h"
#include "plan/quotas.h"

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
  // Quota keys: a cloud (or cloud/region) of the catalog, and a quota family that cloud has
  // (the names quota_family gives its offerings, and AWS's families by instance letter).
  std::map<std::string, std::set<std::string>> families;
  for (const auto& o : catalog.offerings())
    for (Pricing p : {Pricing::on_demand, Pricing::spot}) {
      QuotaFamily f = quota_family(o, p);
      if (!f.family.empty()) families[o.cloud].insert(f.family);
    }
  for (const char* letters : {"p", "g-and-vt", "inf", "trn", "dl", "standard"}) {
    families["aws"].insert(fmt::format("running-on-demand-{}-instances-vcpu", letters));
    families["aws"].insert(fmt::format("all-{}-spot-instance-requests-vcpu", letters));
  }
  for (const auto& [key, amounts] : c.quotas) {
    const std::string cloud = key.substr(0, key.find('/'));
    auto lines = c.quota_lines.find(key);
    auto line_of = [&](const std::string& family) {
      if (lines == c.quota_lines.end()) return 0;
      auto it = lines->second.find(family);
      return it == lines->second.end() ? 0 : it->second;
    };
    const int first_line = amounts.empty() ? 0 : line_of(amounts.begin()->first);
    if (!cloud_set.count(cloud))
      return Error{path, first_line, "constraints.quotas." + key,
                   "'" + cloud + "' is not a cloud in the catalog" + did_you_mean(cloud, clouds)};
    if (key.size() > cloud.size()) {
      const std::string region = key.substr(cloud.size() + 1);
      std::vector<std::string> cloud_regions;
      for (const auto& o : catalog.offerings())
        if (o.cloud == cloud && std::find(cloud_regions.begin(), cloud_regions.end(), o.region) == cloud_regions.end())
          cloud_regions.push_back(o.region);
      if (std::find(cloud_regions.begin(), cloud_regions.end(), region) == cloud_regions.end())
        return Error{path, first_line, "constraints.quotas." + key,
                     "'" + region + "' is not a " + cloud + " region in the catalog" + did_you_mean(region, cloud_regions)};
    }
    const auto known = families.find(cloud);
    if (known == families.end()) {
      return Error{path, first_line, "constraints.quotas." + key,
                   cloud + " has no quotas gpuwise checks (quotas are read for aws, gcp and azure)"};
    }
    std::vector<std::string> names(known->second.begin(), known->second.end());
    for (const auto& [family, amount] : amounts) {
      if (known->second.count(family)) continue;
      return Error{path, line_of(family), "constraints.quotas." + key + "." + family,
                   "'" + family + "' is not a " + cloud + " quota family gpuwise knows" + did_you_mean(family, names) +
                       " (the names are the cloud's own: AWS running-on-demand-p-instances-vcpu, GCP NVIDIA_L4_GPUS, "
                       "Azure standardNCADSA100v4Family)"};
    }
  }
  for (const auto& [key, model] : spec.models) {
    if (!model.measured) continue;
    auto named = catalog.accelerator_named(model.measured->accelerator);
    if (!named.ok()) return Error{path, model.line, "models." + key + ".service_time.accelerator", named.error().message};
  }
  return std::nullopt;
}

}  // namespace gw
