// Output files appear whole or not at all: written to a temporary file beside the target and
// renamed over it, so an error or a kill never leaves a partial file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace gw {

std::optional<Error> write_file_atomically(const std::string& path, std::string_view contents);

// True when output names the same file as one of inputs (refused: it would destroy an input).
bool same_file(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace gw
