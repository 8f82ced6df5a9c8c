#include "catalog/region_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "core/text.h"

namespace gw {

namespace {

bool begins(const std::string& region, const std::string& prefix) { return to_lower(region).rfind(to_lower(prefix), 0) == 0; }

std::string listed(const std::set<std::string>& names) { return join_list({names.begin(), names.end()}); }

bool all_of_class(const std::string& text, int (*is)(int)) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) { return is(static_cast<unsigned char>(c)) != 0; });
}

// Letters, then digits ("west4"), at least one of each.
bool word_then_number(const std::string& part) {
  const size_t digits = part.find_first_of("0123456789");
  return digits != std::string::npos && digits > 0 && all_of_class(part.substr(0, digits), std::isalpha) &&
         all_of_class(part.substr(digits), std::isdigit);
}

// The cloud whose region names a name is spelled like (AWS us-east-1, GCP us-east1, Azure
// eastus2: each provider's published region list), or "" where none.
std::string spelled_like(const std::string& name) {
  const std::string lower = to_lower(name);
  const std::vector<std::string> parts = split(lower, '-');
  auto one_of = [](const std::string& part, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return part == n; });
  };
  if (parts.size() >= 3 && parts.size() <= 4 && one_of(parts[0], {"us", "eu", "ap", "sa", "ca", "me", "af", "il", "mx"}) &&
      (parts.size() == 3 || parts[1] == "gov") && all_of_class(parts[parts.size() - 2], std::isalpha) &&
      all_of_class(parts.back(), std::isdigit))
    return "aws";
  if (parts.size() == 2 &&
      one_of(parts[0], {"us", "europe", "asia", "australia", "northamerica", "southamerica", "me", "africa"}) &&
      word_then_number(parts[1]))
    return "gcp";
  if (parts.size() == 1 && lower.size() >= 6 &&
      (all_of_class(lower, std::isalpha) || (all_of_class(lower.substr(0, lower.size() - 1), std::isalpha) && std::isdigit(
                                                 static_cast<unsigned char>(lower.back())))))
    return "azure";
  return "";
}

}  // namespace

std::optional<std::string> cloud_name_problem(const Catalog& catalog, const std::string& cloud) {
  std::set<std::string> clouds;
  for (const auto& o : catalog.offerings()) clouds.insert(o.cloud);
  if (clouds.count(cloud)) return std::nullopt;
  const std::string hint = closest_match(cloud, std::vector<std::string>(clouds.begin(), clouds.end()));
  return "'" + cloud + "' is not a cloud in the catalog" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") + "; one of " +
         listed(clouds);
}

std::optional<std::string> region_prefix_problem(const Catalog& catalog, const std::string& prefix,
                                                 const std::vector<std::string>& clouds) {
  auto allowed = [&](const std::string& cloud) { return clouds.empty() || std::count(clouds.begin(), clouds.end(), cloud) > 0; };
  std::set<std::string> all, elsewhere, of_allowed;
  for (const auto& o : catalog.offerings()) {
    all.insert(o.region);
    if (!begins(o.region, prefix)) continue;
    if (allowed(o.cloud)) return std::nullopt;
    elsewhere.insert(o.cloud);
  }
  if (!elsewhere.empty())
    return fmt::format("'{}' begins regions of {} only in the catalog, and the clouds allowed are {}", prefix, listed(elsewhere),
                       listed(std::set<std::string>(clouds.begin(), clouds.end())));
  const std::string cloud = spelled_like(prefix);
  if (!cloud.empty() && allowed(cloud)) {
    std::set<std::string> its;
    for (const auto& o : catalog.offerings())
      if (o.cloud == cloud) its.insert(o.region);
    // A letter off one of its regions is a typo of it (us-eest-1); another number is another
    // region (us-east-2, eastus2).
    auto digits = [](const std::string& text) {
      std::string out;
      for (char c : text)
        if (std::isdigit(static_cast<unsigned char>(c))) out += c;
      return out;
    };
    const bool typo = std::any_of(its.begin(), its.end(), [&](const std::string& r) {
      return edit_distance(to_lower(prefix), to_lower(r)) <= 1 && digits(prefix) == digits(r);
    });
    if (!its.empty() && !typo)
      return fmt::format("'{}' is spelled as {} region, and the catalog holds {}'s {} only (a snapshot of SkyPilot's catalog, "
                         "catalog/skypilot-snapshot): plan in one of those, or add that region's prices with --catalog DIR "
                         "(`gpuwise catalog import` converts SkyPilot's vms.csv)",
                         prefix, cloud == "gcp" ? "a GCP" : cloud == "aws" ? "an AWS" : "an Azure", cloud, listed(its));
  }
  const std::string hint = closest_match(prefix, std::vector<std::string>(all.begin(), all.end()));
  return "'" + prefix + "' begins no region in the catalog" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
         "; `gpuwise catalog offerings` lists them (regions are prefixes: us-east, europe-)";
}

}  // namespace gw
