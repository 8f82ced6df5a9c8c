// Colour for people at a terminal: bold headlines, red for what cannot be met, green for the
// answer. Off when stdout is not a terminal, when writing a file, for machine formats, and
// whenever NO_COLOR is set (https://no-color.org).
#pragma once

#include <string>
#include <string_view>

namespace gw {

enum class Style { bold, good, bad, warn };

// The decision, from its inputs (tested without a terminal).
bool colour_wanted(bool stdout_is_terminal, const char* no_color_env, bool to_file, std::string_view format);
// Whether this process should colour its stdout for the given output settings.
bool colour_wanted_here(bool to_file, std::string_view format);

std::string paint(std::string_view text, Style style, bool on);

}  // namespace gw
