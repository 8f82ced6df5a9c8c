#include "sim/recorder.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gw::sim_detail {
namespace {

TEST(Recorder, MarksStayBoundedAndEvenlySpreadWhileTheLatestIsKept) {
  Recorder recorder(0);
  for (long long i = 1; i <= 1'000'000; ++i) recorder.mark({static_cast<double>(i), i % 7, i, 0});
  const auto& marks = recorder.marks();
  EXPECT_LT(marks.size(), Recorder::kMaxMarks);
  EXPECT_GT(marks.size(), Recorder::kMaxMarks / 4);
  // Spread over the whole run: no gap more than twice another.
  long long widest = 0, narrowest = 1'000'000;
  for (size_t i = 1; i < marks.size(); ++i) {
    widest = std::max(widest, marks[i].admitted - marks[i - 1].admitted);
    narrowest = std::min(narrowest, marks[i].admitted - marks[i - 1].admitted);
  }
  EXPECT_LE(widest, 2 * narrowest);
  EXPECT_LE(marks.front().admitted, widest);
  EXPECT_GE(marks.back().admitted, 1'000'000 - widest);
  EXPECT_EQ(recorder.last_mark().admitted, 1'000'000);
}

TEST(Recorder, SamplesComeAtMostOncePerIntervalAndHalveWhenFull) {
  Recorder recorder(10);
  int kept = 0;
  for (double t = 0; t < 1000; t += 0.25)
    if (recorder.sample_due(t)) {
      recorder.keep_sample({t, 1, 2, 0.5});
      ++kept;
    }
  EXPECT_LT(recorder.samples().size(), 20u);
  EXPECT_GE(recorder.samples().size(), 10u);
  EXPECT_LT(kept, 100);  // the interval doubled as the series filled
  EXPECT_NEAR(recorder.samples().back().time_s, 1000, 1000.0 / 5);
  EXPECT_FALSE(Recorder(0).sample_due(5));  // no series asked for
}

TEST(Recorder, ScaleSeriesKeepsItsShapeOverAYearOfScrapes) {
  Recorder recorder(0);
  for (int i = 0; i < 365 * 24 * 240; ++i) {
    ScaleSample s;
    s.time_s = 15.0 * i;
    s.ready = i % 2;
    recorder.record_scale(s);
  }
  const auto& series = recorder.scale_series();
  EXPECT_LT(series.size(), Recorder::kMaxScaleSamples);
  EXPECT_GT(series.size(), Recorder::kMaxScaleSamples / 4);
  EXPECT_EQ(series.front().time_s, 0);
  EXPECT_GT(series.back().time_s, 0.99 * 15.0 * 365 * 24 * 240);  // to the end of the year
}

}  // namespace
}  // namespace gw::sim_detail
