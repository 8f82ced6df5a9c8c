#include "core/formatting.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace gw {

std::string format_number(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  std::string digits = fmt::format("{:.{}f}", std::fabs(value), decimals);
  size_t dot = digits.find('.');
  std::string integer = digits.substr(0, dot);
  std::string fraction = dot == std::string::npos ? "" : digits.substr(dot);
  std::string grouped;
  for (size_t i = 0; i < integer.size(); ++i) {
    if (i > 0 && (integer.size() - i) % 3 == 0) grouped += ',';
    grouped += integer[i];
  }
  return (value < 0 && std::stod(digits) != 0 ? "-" : "") + grouped + fraction;
}

std::string format_gib(double bytes) { return format_number(bytes / (1024.0 * 1024.0 * 1024.0), 2); }

std::string format_usd(double usd) {
  if (!std::isfinite(usd)) return "-";
  double magnitude = std::fabs(usd);
  const char* sign = usd < 0 ? "-" : "";  // -$500.00, as accountants write a credit
  if (magnitude > 0 && magnitude < 0.01) return fmt::format("{}${:.2g}", sign, magnitude);  // $0.00031 per 1k
  return sign + ("$" + format_number(magnitude, magnitude < 10 ? 3 : 2));
}

std::string format_count(double value) {
  double magnitude = std::fabs(value);
  if (magnitude >= 1e12) return fmt::format("{:.2f}T", value / 1e12);
  if (magnitude >= 1e9) return fmt::format("{:.2f}B", value / 1e9);
  if (magnitude >= 1e6) return fmt::format("{:.1f}M", value / 1e6);
  if (magnitude >= 1e3) return fmt::format("{:.1f}k", value / 1e3);
  return fmt::format("{:.0f}", value);
}

}  // namespace gw
