#include "plan/queueing.h"

#include <algorithm>
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

namespace {

// P(Z > x) for a standard normal Z.
double normal_tail(double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); }

// The standard normal's q-quantile, by Newton on its CDF.
double normal_quantile(double q) {
  double z = 0;
  for (int i = 0; i < 60; ++i) {
    double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
    double pdf = std::exp(-z * z / 2) / std::sqrt(2 * M_PI);
    z -= (cdf - q) / std::max(pdf, 1e-300);
  }
  return z;
}

}  // namespace

double poisson_quantile(double mean, double q) {
  if (mean <= 0) return 0;
  return std::max(0.0, std::ceil(mean + normal_quantile(q) * std::sqrt(mean) + 0.5));
}

std::vector<double> answer_gap_sample(const std::vector<double>& outputs, size_t most) {
  std::vector<double> gaps;
  for (double o : outputs)
    if (o >= 2) gaps.push_back(std::floor(o) - 1);
  std::sort(gaps.begin(), gaps.end());
  if (gaps.size() > most && most > 0) {
    std::vector<double> thinned(most);
    for (size_t i = 0; i < most; ++i) thinned[i] = gaps[(2 * i + 1) * gaps.size() / (2 * most)];
    gaps.swap(thinned);
  }
  return gaps;
}

double mean_gap_excess_share(const std::vector<double>& outputs, double q) {
  const std::vector<double> gaps = answer_gap_sample(outputs, 256);
  if (gaps.empty()) return 1;
  const double z = normal_quantile(q);
  if (!(z > 0)) return 1;
  auto tail = [&](double u) {
    double sum = 0;
    for (double m : gaps) sum += normal_tail(u * std::sqrt(m));
    return sum / static_cast<double>(gaps.size());
  };
  // The tail falls as u grows, from 1/2 at 0 to 1 - q at z (where every m is one) or below.
  double low = 0, high = z;
  for (int i = 0; i < 60; ++i) {
    const double u = (low + high) / 2;
    (tail(u) > 1 - q ? low : high) = u;
  }
  return (low + high) / 2 / z;
}

double gamma_mixture_quantile(const std::vector<double>& gaps, double mean, double unit_variance, double q) {
  if (gaps.empty() || !(unit_variance > 0) || !(mean > 0)) return mean;
  // P(X > x) for X gamma with this mean and variance v: X / mean is nearly normal in its cube
  // root, with mean 1 - c and variance c, c = v / (9 mean^2).
  auto tail = [&](double x) {
    double sum = 0;
    for (double m : gaps) {
      const double c = unit_variance / m / (9 * mean * mean);
      sum += normal_tail((std::cbrt(x / mean) - (1 - c)) / std::sqrt(c));
    }
    return sum / static_cast<double>(gaps.size());
  };
  // From the widest member (the shortest answer's gap): any order of gaps will do.
  double low = mean, high = mean + 10 * std::sqrt(unit_variance / *std::min_element(gaps.begin(), gaps.end()));
  for (int i = 0; i < 60 && tail(high) > 1 - q; ++i) high += high - mean;
  // To a part in a million of the bracket: far below what a screen's figure carries.
  for (int i = 0; i < 20; ++i) {
    const double x = (low + high) / 2;
    (tail(x) > 1 - q ? low : high) = x;
  }
  return (low + high) / 2;
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
