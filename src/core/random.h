// Seeded random numbers with distributions written out here, not taken from <random>, whose
// distributions differ between standard libraries: the same seed gives the same run anywhere.
#pragma once

#include <cstdint>
#include <random>

namespace gw {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  double uniform();                       // in (0, 1)
  double exponential(double mean);
  double normal();                        // standard normal (Box-Muller)
  double gamma(double shape, double scale);  // Marsaglia-Tsang
  uint64_t next() { return engine_(); }

 private:
  std::mt19937_64 engine_;  // the engine's output sequence is fixed by the standard
  bool have_spare_ = false;
  double spare_ = 0;
};

}  // namespace gw
