// The names a spec gives that only the catalog can check: clouds, accelerators to include or
// exclude, the accelerator a measured service time was taken on. A name the catalog does not
// have is an error naming file, line and field, with the closest name it does have.
#pragma once

#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "core/error.h"
#include "spec/spec.h"

namespace gw {

std::optional<Error> check_spec_names(const Spec& spec, const Catalog& catalog, const std::string& path);

}  // namespace gw
