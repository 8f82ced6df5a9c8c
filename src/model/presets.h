// Named models shipped in the embedded catalog (catalog/models/*.json), and resolution of a
// MODEL argument: a preset name or a path to a config.json.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "model/model_arch.h"

namespace gw {

std::vector<std::string> preset_names();
Result<ModelArch> load_preset(const std::string& name);
// A path (contains '/' or ends in .json, or names an existing file) or a preset name.
Result<ModelArch> resolve_model(const std::string& name_or_path);

}  // namespace gw
