// The audit counts only what was measured: impossible values skipped and counted, gaps not
// taken for coverage, DCGM names understood in every reader, OpenMetrics timestamps in seconds
// and a warning instead of a quiet zero when the unit looks wrong.
#include <fmt/format.h>

#include <unistd.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <filesystem>
#include <fstream>

#include "audit/audit.h"
#include "telemetry/aggregate.h"
#include "telemetry/readers.h"

namespace gw {
namespace {

std::string write_truth_file(const std::string& name, const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() / ("gpuwise_truth_" + std::to_string(::getpid()) + "_" + name)).string();
  std::ofstream(path) << text;
  return path;
}

struct Read {
  TelemetryAggregator aggregator;
  ReadStats stats;
};

std::unique_ptr<Read> read_truth(const std::string& path, ReadOptions options = {}) {
  auto r = std::make_unique<Read>();
  auto error = read_telemetry(path, options, [&](const TelemetrySample& s) { r->aggregator.add(s); }, r->stats);
  EXPECT_FALSE(error) << (error ? error->to_string() : "");
  return r;
}

// The kinds of finding an audit of the samples gives, whatever their coverage.
std::set<std::string> finding_kinds(const TelemetryAggregator& aggregator) {
  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  options.min_coverage_hours = 0;
  auto report = run_audit(aggregator, catalog, options);
  EXPECT_TRUE(report.ok()) << report.error().to_string();
  std::set<std::string> kinds;
  if (report.ok())
    for (const auto& f : report.value().findings) kinds.insert(f.kind);
  return kinds;
}

const SeriesAggregate& only_series(const Read& r) {
  EXPECT_EQ(r.aggregator.series().size(), 1u);
  return r.aggregator.series().begin()->second;
}

// 100 one-second samples averaging 2.97%, a 58-minute gap, then a row reading 250 %.
std::string smi_with_gap_and_a_bad_row() {
  std::string text = "timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n";
  for (int i = 0; i < 100; ++i)
    text += fmt::format("2026/11/30 10:{:02d}:{:02d}.000, 0, NVIDIA A100-SXM4-80GB, {} %, 1024 MiB, 81920 MiB\n", i / 60,
                        i % 60, i % 100 < 97 ? 3 : 2);
  text += "2026/11/30 10:59:39.000, 0, NVIDIA A100-SXM4-80GB, 250 %, 1024 MiB, 81920 MiB\n";
  return text;
}

TEST(TelemetryTruth, ImpossibleValuesAreSkippedAndGapsAreNotCoverage) {
  auto r = read_truth(write_truth_file("gap.csv", smi_with_gap_and_a_bad_row()));
  const SeriesAggregate& a = only_series(*r);
  EXPECT_NEAR(a.mean_util(), 2.97, 1e-9);
  EXPECT_EQ(a.util_samples, 100);
  EXPECT_EQ(a.out_of_range, 1);
  EXPECT_EQ(r->stats.skipped.at("out of range: utilization outside 0-100%"), 1);
  EXPECT_EQ(a.gaps(), 1);
  EXPECT_NEAR(a.gap_hours(), (59 * 60 + 39 - 99) / 3600.0, 1e-6);
  // 99 one-second intervals, the gap counted as 3 s (3x the median spacing), the last sample's 1 s.
  EXPECT_NEAR(a.coverage_hours(), 103.0 / 3600, 1e-6);
}

TEST(TelemetryTruth, ASeriesOfMostlyImpossibleValuesIsABadExporter) {
  std::string text = "timestamp, index, name, utilization.gpu [%], memory.used [MiB]\n";
  for (int i = 0; i < 50; ++i)
    text += fmt::format("2026/11/30 10:00:{:02d}.000, 0, NVIDIA A100-SXM4-80GB, {} %, -5 MiB\n", i, i < 40 ? 400 : 10);
  auto r = read_truth(write_truth_file("bad.csv", text));
  EXPECT_TRUE(finding_kinds(r->aggregator).count("bad_exporter"));
}

TEST(TelemetryTruth, DcgmNamesInALongCsvReadLikeNvidiaSmi) {
  std::string smi = "timestamp, index, name, utilization.gpu [%], memory.used [MiB]\n";
  std::string dcgm = "timestamp,series,metric,value\n";
  for (int i = 0; i < 120; ++i) {
    int util = (i * 37) % 100;
    int mib = 1000 + 10 * i;
    smi += fmt::format("2026/11/30 10:{:02d}:{:02d}.000, 0, A100, {} %, {} MiB\n", i / 60, i % 60, util, mib);
    std::string t = fmt::format("2026-11-30T10:{:02d}:{:02d}Z", i / 60, i % 60);
    dcgm += fmt::format("{},gpu0,DCGM_FI_DEV_GPU_UTIL,{}\n{},gpu0,DCGM_FI_DEV_FB_USED,{}\n", t, util, t, mib);
  }
  auto a = read_truth(write_truth_file("same.csv", smi));
  auto b = read_truth(write_truth_file("same_long.csv", dcgm));
  const SeriesAggregate& x = only_series(*a);
  const SeriesAggregate& y = only_series(*b);
  EXPECT_EQ(b->stats.skipped.count("unknown metric"), 0u);
  EXPECT_EQ(x.util_samples, y.util_samples);
  EXPECT_DOUBLE_EQ(x.mean_util(), y.mean_util());
  EXPECT_DOUBLE_EQ(x.memory_peak, y.memory_peak);
  EXPECT_NEAR(x.coverage_hours(), y.coverage_hours(), 1e-9);
}

TEST(TelemetryTruth, OpenMetricsTimestampsAreSecondsAndAWrongUnitIsSaid) {
  std::string smi = "timestamp, index, name, utilization.gpu [%]\n";
  std::string open_metrics = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
  const double start_s = 1764496800;  // 2025-11-30T10:00:00Z
  for (int i = 0; i < 7200; i += 60) {
    int util = 40 + i % 50;
    smi += fmt::format("2025/11/30 {:02d}:{:02d}:00.000, 0, A100, {} %\n", 10 + i / 3600, (i / 60) % 60, util);
    open_metrics += fmt::format("DCGM_FI_DEV_GPU_UTIL{{gpu=\"0\"}} {} {:.3f}\n", util, start_s + i);
  }
  open_metrics += "# EOF\n";
  auto a = read_truth(write_truth_file("om_smi.csv", smi));
  std::string om_path = write_truth_file("om.txt", open_metrics);
  auto b = read_truth(om_path);
  const SeriesAggregate& x = only_series(*a);
  const SeriesAggregate& y = only_series(*b);
  EXPECT_DOUBLE_EQ(x.mean_util(), y.mean_util());
  EXPECT_NEAR(x.coverage_hours(), y.coverage_hours(), 1e-9);
  EXPECT_NEAR(y.coverage_hours(), 2.0, 1e-6);
  EXPECT_TRUE(b->stats.warnings.empty());
  // Read as milliseconds, the same samples span 7 seconds in 1970: said, not a quiet zero.
  ReadOptions ms;
  ms.timestamp_unit = TimestampUnit::milliseconds;
  auto c = read_truth(om_path, ms);
  ASSERT_EQ(c->stats.warnings.size(), 1u);
  EXPECT_NE(c->stats.warnings[0].find("--timestamp-unit s"), std::string::npos) << c->stats.warnings[0];
}

// An independent computation (a plain loop over the rows, times sorted) of every series' mean,
// idle share, coverage, gaps and out-of-range count, against the audit of the same rows written
// in time order, shuffled and reversed: the same figures, whatever the order of the rows.
TEST(TelemetryTruth, EverySeriesMatchesAReferenceWhateverTheRowOrder) {
  struct Row {
    double time_s;
    std::string series;
    double value;
  };
  std::vector<Row> rows;
  std::mt19937_64 random(20261201);
  const double start_s = 1764460800;
  for (int g = 0; g < 24; ++g) {
    const double spacing_s = std::array<double, 4>{1, 10, 60, 300}[g % 4];
    const int samples = 2000 + g * 50;
    double t = start_s + g * 37;
    for (int i = 0; i < samples; ++i) {
      double value = std::uniform_int_distribution<int>(0, 99)(random) < 40 ? 2 : 30 + (i * 7 + g) % 70;
      if (std::uniform_int_distribution<int>(0, 199)(random) == 0) value = g % 2 ? 250 : -3;  // not a measurement
      rows.push_back({t, fmt::format("gpu{:02d}", g), value});
      // Now and then a gap of 10 to 100 spacings (never near the 3x cap).
      t += std::uniform_int_distribution<int>(0, 299)(random) == 0 ? spacing_s * std::uniform_int_distribution<int>(10, 100)(random)
                                                                    : spacing_s;
    }
  }
  // The reference.
  struct Reference {
    double sum = 0, n = 0, idle = 0, bad = 0;
    std::vector<double> times;
  };
  std::map<std::string, Reference> reference;
  for (const auto& r : rows) {
    Reference& x = reference[r.series];
    x.times.push_back(r.time_s);  // a bad value was still scraped
    if (r.value < 0 || r.value > 100) {
      ++x.bad;
      continue;
    }
    x.sum += r.value;
    x.n += 1;
    x.idle += r.value < 5;
  }
  auto write_rows = [&](const std::string& name, std::vector<Row> ordered) {
    std::string text = "timestamp,series,metric,value\n";
    for (const auto& r : ordered) text += fmt::format("{:.0f},{},DCGM_FI_DEV_GPU_UTIL,{}\n", r.time_s, r.series, r.value);
    return write_truth_file(name, text);
  };
  std::vector<Row> shuffled = rows;
  std::shuffle(shuffled.begin(), shuffled.end(), random);
  std::vector<Row> reversed(rows.rbegin(), rows.rend());
  for (const auto& [name, ordered] : {std::pair{"sorted.csv", rows}, std::pair{"shuffled.csv", shuffled}, std::pair{"reversed.csv", reversed}}) {
    std::string path = write_rows(name, ordered);
    std::string out = path + ".json";
    ASSERT_EQ(std::system(fmt::format("'{}' audit '{}' --accelerator A100-80GB --format json -q -o '{}'", GPUWISE_BINARY, path, out).c_str()), 0);
    std::ifstream in(out);
    auto json = nlohmann::json::parse(in);
    ASSERT_EQ(json["series"].size(), reference.size()) << name;
    for (const auto& series : json["series"]) {
      std::string id = series["labels"]["series"].get<std::string>();
      Reference& x = reference.at(id);
      std::vector<double> times = x.times;
      std::sort(times.begin(), times.end());
      std::vector<double> intervals;
      for (size_t i = 1; i < times.size(); ++i) intervals.push_back(times[i] - times[i - 1]);
      std::vector<double> sorted_intervals = intervals;
      std::nth_element(sorted_intervals.begin(), sorted_intervals.begin() + static_cast<long>(sorted_intervals.size() / 2), sorted_intervals.end());
      const double median_s = sorted_intervals[sorted_intervals.size() / 2];
      double covered_s = median_s, gap_s = 0;
      long long gaps = 0;
      for (double interval : intervals) {
        covered_s += std::min(interval, 3 * median_s);
        if (interval > 3 * median_s) {
          ++gaps;
          gap_s += interval;
        }
      }
      EXPECT_NEAR(series["mean_util_pct"].get<double>(), x.sum / x.n, 1e-9) << name << " " << id;
      EXPECT_NEAR(series["idle_fraction"].get<double>(), x.idle / x.n, 1e-12) << name << " " << id;
      EXPECT_NEAR(series["coverage_hours"].get<double>(), covered_s / 3600, 1e-9) << name << " " << id;
      EXPECT_EQ(series["gaps"].get<long long>(), gaps) << name << " " << id;
      EXPECT_NEAR(series["gap_hours"].get<double>(), gap_s / 3600, 1e-9) << name << " " << id;
      EXPECT_EQ(series["out_of_range_samples"].get<double>(), x.bad) << name << " " << id;
    }
  }
}

// Memory above what the device holds is no measurement: against the series' own total (skipped
// and counted), and against the accelerator's VRAM (a bad_exporter finding, no right-sizing).
TEST(TelemetryTruth, MemoryAboveTheDeviceIsOutOfRange) {
  std::string text = "timestamp, index, name, utilization.gpu [%], memory.total [MiB], memory.used [MiB]\n";
  for (int i = 0; i < 60; ++i)
    text += fmt::format("2026/11/30 10:{:02d}:00.000, 0, NVIDIA A100-SXM4-80GB, 50 %, 81920 MiB, {} MiB\n", i,
                        i == 30 ? 200000 : 12000);
  auto r = read_truth(write_truth_file("over_total.csv", text));
  const SeriesAggregate& a = only_series(*r);
  EXPECT_EQ(a.out_of_range, 1);
  EXPECT_DOUBLE_EQ(a.memory_peak, 12000.0 * 1024 * 1024);
  // No total in the data: the accelerator's 80 GiB judges a 120 GiB peak.
  std::string no_total = "timestamp, index, name, utilization.gpu [%], memory.used [MiB]\n";
  for (int i = 0; i < 60; ++i)
    no_total += fmt::format("2026/11/30 10:{:02d}:00.000, 0, NVIDIA A100-SXM4-80GB, 50 %, {} MiB\n", i, i == 30 ? 122880 : 12000);
  auto b = read_truth(write_truth_file("over_vram.csv", no_total));
  std::set<std::string> kinds = finding_kinds(b->aggregator);
  EXPECT_TRUE(kinds.count("bad_exporter"));
  EXPECT_FALSE(kinds.count("vram_oversized"));
}

}  // namespace
}  // namespace gw
