// Request arrival processes for the simulator: Poisson, gamma renewal with a coefficient of
// variation (bursts), a rate curve (non-homogeneous Poisson by thinning), a two-state
// Markov-modulated Poisson process, a measured rate series, and trace replay with time and rate scaling (streamed).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/random.h"
#include "spec/spec.h"
#include "trace/rate_series.h"
#include "trace/request_trace.h"

namespace gw {

struct Arrival {
  Arrival() = default;
  Arrival(double time, double input, double output) : time_s(time), input_tokens(input), output_tokens(output) {}
  double time_s = 0;
  double input_tokens = 0;
  double output_tokens = 0;
  // The prompt's blocks by chain hash (prefix caching), of prefix_block_tokens each, or ending
  // at prefix_block_ends (tokens from the prompt's start) when those are given; empty when the
  // traffic does not say.
  std::vector<unsigned long long> prefix_block_ids;
  int prefix_block_tokens = 0;
  std::vector<double> prefix_block_ends;
};

class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  // The next arrival, in time order; nullopt when the process ends (traces) or on error.
  virtual std::optional<Arrival> next() = 0;
  virtual std::optional<Error> error() const { return std::nullopt; }
  // The time up to which the process keeps, from time_s on, the rate it has at time_s with
  // independent increments (Poisson, renewal, an hourly curve's run of equal hours): a
  // simulation may skip ahead within that span. time_s itself where it does not (traces,
  // measured series, MMPP).
  virtual double stationary_until(double time_s) const { return time_s; }
  // The mean arrival rate at time_s where stationary_until allows a skip (requests/s).
  virtual double rate_at(double time_s) const { (void)time_s; return 0; }
  // Moves the process's clock on by `seconds` without drawing the arrivals in between (only
  // within the span stationary_until allows): the next arrival comes `seconds` later.
  virtual void skip(double seconds) { (void)seconds; }
};

// Token counts drawn from the service's distributions (empirical samples), shared by the
// synthetic processes.
class TokenSampler {
 public:
  TokenSampler(TokenDistribution input, TokenDistribution output, Rng& rng)
      : input_(std::move(input)), output_(std::move(output)), rng_(rng) {}
  void fill(Arrival& arrival);

 private:
  TokenDistribution input_, output_;
  Rng& rng_;
};

struct ArrivalOptions {
  std::string process = "poisson";  // poisson, gamma, mmpp, curve, trace
  double rate_rps = 1;              // mean rate (poisson, gamma, curve base)
  double cv = 1;                    // gamma: coefficient of variation of inter-arrival times
  std::vector<double> profile;      // curve: hourly factors (24 or 168) of rate_rps
  double mmpp_high_rps = 0, mmpp_low_rps = 0, mmpp_high_mean_s = 60, mmpp_low_mean_s = 300;
  std::string trace_path;
  TraceFormat trace_format = TraceFormat::automatic;
  double time_scale = 1;  // trace: divide gaps by this (2 = twice as fast)
  std::optional<RateSeries> rates;  // series: a measured rate curve, replayed once
};

std::unique_ptr<ArrivalProcess> make_arrivals(const ArrivalOptions& options, const ServiceSpec& service, Rng& rng);

}  // namespace gw
