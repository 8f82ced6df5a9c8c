#include "core/random.h"

#include <cmath>

namespace gw {

double Rng::uniform() {
  // 53 random bits, never 0 or 1.
  return (static_cast<double>(engine_() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double Rng::exponential(double mean) { return -mean * std::log(uniform()); }

double Rng::normal() {
  if (have_spare_) {
    have_spare_ = false;
    return spare_;
  }
  double u = uniform(), v = uniform();
  double r = std::sqrt(-2.0 * std::log(u));
  spare_ = r * std::sin(2 * M_PI * v);
  have_spare_ = true;
  return r * std::cos(2 * M_PI * v);
}

double Rng::gamma(double shape, double scale) {
  if (shape < 1) return gamma(shape + 1, scale) * std::pow(uniform(), 1.0 / shape);
  double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9 * d);
  while (true) {
    double x = normal(), v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
  }
}

}  // namespace gw
