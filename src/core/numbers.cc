#include "core/numbers.h"

#include <span>
#include <utility>

#include <cmath>
#include <fast_float/fast_float.h>

namespace gw {

std::optional<double> parse_finite_double(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  if (text.front() == '+') text.remove_prefix(1);
  double value = 0;
  auto [end, error] = fast_float::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::optional<long long> parse_integer(std::string_view text, long long min, long long max) {
  auto value = parse_finite_double(text);
  if (!value || *value != std::floor(*value)) return std::nullopt;
  if (*value < static_cast<double>(min) || *value > static_cast<double>(max)) return std::nullopt;
  return static_cast<long long>(*value);
}

namespace {

// A number with one of `suffixes` after it (the first that ends the text: longer ones first where
// one ends another), scaled by it; blanks around the text are ignored.
std::optional<double> parse_with_suffixes(std::string_view text, std::span<const std::pair<std::string_view, double>> suffixes) {
  text = trim(text);
  for (const auto& [suffix, scale] : suffixes) {
    if (text.size() <= suffix.size() || text.substr(text.size() - suffix.size()) != suffix) continue;
    auto value = parse_finite_double(text.substr(0, text.size() - suffix.size()));
    if (!value) return std::nullopt;
    return *value * scale;
  }
  return parse_finite_double(text);
}

}  // namespace

std::optional<double> parse_count(std::string_view text) {
  static constexpr std::pair<std::string_view, double> kSuffixes[] = {
      {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"k", 1e3}, {"K", 1e3},
      {"M", 1e6},     {"B", 1e9},        {"G", 1e9},           {"T", 1e12}};
  return parse_with_suffixes(text, kSuffixes);
}

std::optional<double> parse_seconds(std::string_view text) {
  // Longest first: "ms" before "s", "min" before "m".
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"ms", 1e-3}, {"min", 60.0}, {"s", 1.0}, {"m", 60.0}, {"h", 3600.0}, {"d", 86400.0}};
  return parse_with_suffixes(text, kUnits);
}

}  // namespace gw
