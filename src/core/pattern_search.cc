#include "core/pattern_search.h"

#include <algorithm>
#include <cmath>

namespace gw {

void pattern_search(std::vector<double>& x, const std::vector<std::pair<double, double>>& bounds,
                    const std::function<double(const std::vector<double>&)>& loss) {
  double best = loss(x), step = 0.5;
  while (step > 1e-3) {
    bool improved = false;
    for (size_t i = 0; i < x.size(); ++i) {
      for (double sign : {1.0, -1.0}) {
        std::vector<double> y = x;
        y[i] = std::clamp(x[i] * std::exp(sign * step), bounds[i].first, bounds[i].second);
        double value = loss(y);
        if (value < best) {
          best = value;
          x = y;
          improved = true;
        }
      }
    }
    if (!improved) step /= 2;
  }
}

double log_ratio_squared(double predicted, double measured) {
  double r = std::log(std::max(predicted, 1e-12) / measured);
  return r * r;
}

}  // namespace gw
