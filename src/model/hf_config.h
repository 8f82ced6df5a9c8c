// Reads a Hugging Face config.json (or gpuwise's generic-model JSON) into a ModelArch.
#pragma once

#include <string>
#include <string_view>

#include "core/error.h"
#include "model/model_arch.h"

namespace gw {

// text: the file's contents; file: its path, for error messages (file, line, field).
Result<ModelArch> parse_model_config(std::string_view text, const std::string& file);

// Reads and parses a config file from disk.
Result<ModelArch> load_model_config(const std::string& path);

}  // namespace gw
