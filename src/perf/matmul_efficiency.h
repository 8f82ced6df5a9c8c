// What share of its dense 16-bit peak a part's matmuls reach where that is measured: the Maximum
// Achievable Matmul FLOPS (MAMF) of one benchmark run the same way on each part, so parts can be
// compared with one another (the operator factors fitted on one part carry to another at the
// ratio of their shares).
#pragma once

#include <optional>
#include <string_view>

namespace gw {

// MAMF / dense bf16 peak, or nullopt where the part was not measured by that table.
std::optional<double> measured_matmul_share(std::string_view accelerator);

}  // namespace gw
