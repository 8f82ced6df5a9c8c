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
// The preset a Hugging Face model id names ("meta-llama/Llama-3.1-70B-Instruct" ->
// "llama-3.1-70b": fine-tune suffixes dropped), or "" when none does.
std::string preset_for_hub_id(const std::string& id);
Result<ModelArch> resolve_model(const std::string& name_or_path);

}  // namespace gw
