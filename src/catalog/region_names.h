// Whether the clouds and region prefixes a user names select offerings of the catalog, and when
// they do not, why in words they can act on: a misspelt cloud, a region of a cloud they did not
// allow, or a real region (by its provider's spelling) the catalog's snapshot does not hold.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"

namespace gw {

// nullopt where some offering is on `cloud`.
std::optional<std::string> cloud_name_problem(const Catalog& catalog, const std::string& cloud);
// nullopt where some offering of `clouds` (all where empty) has a region that begins with
// `prefix` (case aside).
std::optional<std::string> region_prefix_problem(const Catalog& catalog, const std::string& prefix,
                                                 const std::vector<std::string>& clouds);

}  // namespace gw
