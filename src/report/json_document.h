// The JSON every command writes: `schema_version` and `command` beside the result's own keys, as
// text with two-space indentation. One writer, so that the CLI, C++ programs and Python print
// the same bytes for the same result.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gw {

// `body` with {"schema_version": 1, "command": command} added (keys sort, so order is fixed).
nlohmann::json json_document(const std::string& command, nlohmann::json body);

// The document as the CLI prints it, newline-terminated. Invalid UTF-8 (telemetry labels) is
// replaced with U+FFFD, never a failure.
std::string json_text(const nlohmann::json& document);

}  // namespace gw
