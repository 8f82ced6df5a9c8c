// A derivative-free minimiser for small fits over positive parameters (efficiencies, launch
// times): each parameter is moved by a factor in turn, the factor halved when no move helps.
#pragma once

#include <functional>
#include <utility>
#include <vector>

namespace gw {

void pattern_search(std::vector<double>& x, const std::vector<std::pair<double, double>>& bounds,
                    const std::function<double(const std::vector<double>&)>& loss);

// (log(predicted / measured))^2: the loss of a fit that weighs a 10% miss alike at any size.
double log_ratio_squared(double predicted, double measured);

}  // namespace gw
