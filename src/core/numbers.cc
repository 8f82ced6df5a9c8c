#include "core/numbers.h"

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

}  // namespace gw
