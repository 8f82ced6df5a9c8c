#include "plan/queueing.h"

#include <cmath>
#include <limits>

namespace gw {

double erlang_c(int servers, double a) {
  if (servers <= 0) return 1.0;
  if (a <= 0) return 0.0;
  if (a >= servers) return 1.0;
  // Far more servers than load: the probability of waiting is below 1e-15 (Halfin-Whitt regime
  // with a safety factor of 10 standard deviations).
  if (servers > a + 10.0 * std::sqrt(a) + 30.0) return 0.0;
  // Erlang B by recursion (stable for thousands of servers), then C from B.
  double b = 1.0;
  for (int k = 1; k <= servers; ++k) b = a * b / (k + a * b);
  double rho = a / servers;
  return b / (1.0 - rho * (1.0 - b));
}

double mgc_wait_quantile(int servers, double lambda, double service_s, double cs2, double q) {
  double mu = 1.0 / service_s;
  double capacity = servers * mu;
  if (lambda >= capacity) return std::numeric_limits<double>::infinity();
  double c = erlang_c(servers, lambda / mu);
  if (c <= 1.0 - q) return 0.0;
  double decay = 2.0 * (capacity - lambda) / (1.0 + cs2);
  return std::log(c / (1.0 - q)) / decay;
}

double mgc_mean_wait(int servers, double lambda, double service_s, double cs2) {
  double mu = 1.0 / service_s;
  double capacity = servers * mu;
  if (lambda >= capacity) return std::numeric_limits<double>::infinity();
  return erlang_c(servers, lambda / mu) / (capacity - lambda) * (1.0 + cs2) / 2.0;
}

double poisson_quantile(double mean, double q) {
  if (mean <= 0) return 0;
  // z for the quantile by Newton on the normal CDF.
  double z = 0;
  for (int i = 0; i < 60; ++i) {
    double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
    double pdf = std::exp(-z * z / 2) / std::sqrt(2 * M_PI);
    z -= (cdf - q) / std::max(pdf, 1e-300);
  }
  return std::max(0.0, std::ceil(mean + z * std::sqrt(mean) + 0.5));
}

double small_poisson_quantile(double mean, double q) {
  if (mean <= 0) return 0;
  if (mean > 50) return poisson_quantile(mean, q);
  double term = std::exp(-mean), cdf = term;
  int k = 0;
  while (cdf < q && k < 1000) {
    ++k;
    term *= mean / k;
    cdf += term;
  }
  return k;
}

}  // namespace gw
