// Strict number parsing for input files: the whole text must be a finite number.
#pragma once

#include <optional>
#include <string_view>

namespace gw {

// A count with an optional unit suffix, as people write token counts and context lengths:
// k/K (10^3), M (10^6), B or G (10^9), T (10^12); Ki, Mi, Gi (powers of 1,024): "2T", "500B",
// "8k" (8,000), "128Ki" (131,072), "1.5M". A plain number passes through; nullopt otherwise.
std::optional<double> parse_count(std::string_view text);

// A duration in seconds as people write one: a number with ms, s, m (or min), h or d after it,
// a space between allowed ("500ms", "2 s", "1.5h"); a plain number is seconds. nullopt otherwise.
std::optional<double> parse_seconds(std::string_view text);

// Parses a finite decimal or scientific number ("1.5", "7e9", " 42 "); surrounding spaces are
// ignored. Returns nullopt for empty text, trailing garbage, NaN or infinities.
std::optional<double> parse_finite_double(std::string_view text);

// The common case of telemetry cells ("42", "60.5", "-3.25"): at most 15 significant digits
// and 22 fraction digits, where mantissa / 10^k is correctly rounded (Clinger's fast path), so
// the result equals the general parser's. Anything else goes to parse_finite_double.
inline std::optional<double> parse_decimal(std::string_view text) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* p = text.data();
  const char* end = p + text.size();
  bool negative = p != end && *p == '-';
  if (negative) ++p;
  unsigned long long mantissa = 0;
  int digits = 0, fraction = 0;
  bool dot = false;
  for (; p != end; ++p) {
    char c = *p;
    if (c >= '0' && c <= '9') {
      mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
      ++digits;
      fraction += dot;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (p != end || digits == 0 || digits > 15 || fraction > 22) return parse_finite_double(text);
  double value = static_cast<double>(mantissa);
  if (fraction > 0) value /= kPow10[fraction];
  return negative ? -value : value;
}

// As parse_finite_double, and the value must be an integer within [min, max].
std::optional<long long> parse_integer(std::string_view text, long long min, long long max);

// Without surrounding spaces, tabs and carriage returns (inline: readers call it per cell).
inline std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

}  // namespace gw
