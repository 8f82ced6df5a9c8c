// Strict number parsing for input files: the whole text must be a finite number.
#pragma once

#include <optional>
#include <string_view>

namespace gw {

// Parses a finite decimal or scientific number ("1.5", "7e9", " 42 "); surrounding spaces are
// ignored. Returns nullopt for empty text, trailing garbage, NaN or infinities.
std::optional<double> parse_finite_double(std::string_view text);

// As parse_finite_double, and the value must be an integer within [min, max].
std::optional<long long> parse_integer(std::string_view text, long long min, long long max);

// Without surrounding spaces, tabs and carriage returns (inline: readers call it per cell).
inline std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

}  // namespace gw
