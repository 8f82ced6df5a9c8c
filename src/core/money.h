// Money over time: every monthly figure in gpuwise is an hourly one over this many hours (365
// days x 24 / 12 = 730, the convention cloud price lists use).
#pragma once

namespace gw {

inline constexpr double kHoursPerMonth = 730;

}  // namespace gw
