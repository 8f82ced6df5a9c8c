#include "plan/spec_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "catalog/region_names.h"
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
  for (size_t i = 0; i < c.clouds.size(); ++i)
    if (auto why = cloud_name_problem(catalog, c.clouds[i])) return Error{path, line_at(c.cloud_lines, i), "constraints.clouds", *why};
  // Regions are prefixes ("us-east", "europe-"): each must begin some allowed offering's region.
  for (size_t i = 0; i < c.regions.size(); ++i)
    if (auto why = region_prefix_problem(catalog, c.regions[i], c.clouds))
      return Error{path, line_at(c.region_lines, i), "constraints.regions", *why};
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
    if (auto why = cloud_name_problem(catalog, cloud)) return Error{path, first_line, "constraints.quotas." + key, *why};
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
                   "'" + family + "' is not a quota family gpuwise knows on " + cloud + did_you_mean(family, names) +
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
