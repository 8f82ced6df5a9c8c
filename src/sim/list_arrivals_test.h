// For the simulator's tests: requests arriving as listed (times, prompt and answer tokens).
#pragma once

#include <utility>
#include <vector>

#include "sim/arrivals.h"

namespace gw::testing_support {

class ListArrivals final : public ArrivalProcess {
 public:
  explicit ListArrivals(std::vector<Arrival> arrivals) : arrivals_(std::move(arrivals)) {}
  std::optional<Arrival> next() override {
    if (next_ >= arrivals_.size()) return std::nullopt;
    return arrivals_[next_++];
  }

 private:
  std::vector<Arrival> arrivals_;
  size_t next_ = 0;
};

}  // namespace gw::testing_support
