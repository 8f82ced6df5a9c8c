// What a run records as it goes, each series bounded whatever the run's length: requests in the
// system at arrivals (marks, which the overload test reads), queue depth and KV use over time
// (samples), and the autoscaled pool at each scrape. When a series fills, every other point is
// kept and points come half as often: a chart needs the shape, not every event. Internal to src/sim.
#pragma once

#include <vector>

#include "sim/simulator.h"

namespace gw::sim_detail {

// Requests in the system when one arrived, on the traffic's clock.
struct Mark {
  double time_s = 0;
  long long in_flight = 0, admitted = 0, timed_out = 0;
};

class Recorder {
 public:
  static constexpr size_t kMaxMarks = 1024;
  static constexpr size_t kMaxScaleSamples = 4096;

  // timeseries_points: the samples wanted (0: none); up to twice as many are kept.
  explicit Recorder(int timeseries_points) : timeseries_points_(timeseries_points) {}

  // The mark at an arrival: the latest is always kept, every stride-th (by admissions) in the series.
  void mark(const Mark& m);
  void push_mark(const Mark& m);
  void set_last_mark(const Mark& m) { last_mark_ = m; }
  const Mark& last_mark() const { return last_mark_; }
  const std::vector<Mark>& marks() const { return marks_; }

  bool sample_due(double time_s) const { return timeseries_points_ > 0 && time_s >= next_sample_s_; }
  void keep_sample(const TimeSample& s);
  const std::vector<TimeSample>& samples() const { return samples_; }

  void record_scale(const ScaleSample& s);
  const std::vector<ScaleSample>& scale_series() const { return scale_series_; }

 private:
  int timeseries_points_;
  std::vector<Mark> marks_;
  Mark last_mark_;
  long long mark_stride_ = 1;
  std::vector<TimeSample> samples_;
  double next_sample_s_ = 0, sample_interval_s_ = 1.0;
  std::vector<ScaleSample> scale_series_;
  long long scale_ticks_ = 0, scale_stride_ = 1;
};

}  // namespace gw::sim_detail
