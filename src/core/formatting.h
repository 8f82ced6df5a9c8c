// Numbers for people, the same in every writer: thousands separators and fixed decimals, dollars
// (three significant decimals under $10, "-$" for credits), GiB, and counts with suffixes.
#pragma once

#include <string>

namespace gw {

// "-" for a missing (non-finite) value.
std::string format_number(double value, int decimals);
std::string format_gib(double bytes);
std::string format_usd(double usd);
std::string format_count(double value);  // 8.03B, 124.4M, 12.3k

}  // namespace gw
