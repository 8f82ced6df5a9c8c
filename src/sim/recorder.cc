#include "sim/recorder.h"

namespace gw::sim_detail {

namespace {

template <typename T>
std::vector<T> every_other(const std::vector<T>& series) {
  std::vector<T> kept;
  kept.reserve(series.size() / 2 + 1);
  for (size_t i = 0; i < series.size(); i += 2) kept.push_back(series[i]);
  return kept;
}

}  // namespace

void Recorder::mark(const Mark& m) {
  last_mark_ = m;
  if (m.admitted % mark_stride_ != 0) return;
  push_mark(m);
}

void Recorder::push_mark(const Mark& m) {
  marks_.push_back(m);
  if (marks_.size() >= kMaxMarks) {
    marks_ = every_other(marks_);
    mark_stride_ *= 2;
  }
}

void Recorder::keep_sample(const TimeSample& s) {
  samples_.push_back(s);
  next_sample_s_ = s.time_s + sample_interval_s_;
  if (static_cast<int>(samples_.size()) >= 2 * timeseries_points_) {
    samples_ = every_other(samples_);
    sample_interval_s_ *= 2;
  }
}

void Recorder::record_scale(const ScaleSample& s) {
  ++scale_ticks_;
  if (scale_ticks_ % scale_stride_ != 0) return;
  scale_series_.push_back(s);
  if (scale_series_.size() >= kMaxScaleSamples) {
    scale_series_ = every_other(scale_series_);
    scale_stride_ *= 2;
  }
}

}  // namespace gw::sim_detail
