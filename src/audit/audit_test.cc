#include "audit/audit.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>

namespace gw {
namespace {

// Synthetic fleet: one GPU per behaviour, two weeks of 5-minute samples.
TelemetryAggregator fleet() {
  static std::vector<std::pair<std::string, Labels>> ids;
  TelemetryAggregator aggregator;
  auto add = [&](const std::string& name, const std::string& team, auto util, double memory_gib) {
    ids.emplace_back(name, Labels{{"gpu", name}, {"model", "NVIDIA A100-SXM4-80GB"}, {"team", team}});
    TelemetrySample sample;
    sample.series = &ids.back().first;
    sample.labels = &ids.back().second;
    for (double t = 0; t < 14 * 86400; t += 300) {
      sample.time_s = 1700000000 + t;
      sample.metric = Metric::gpu_util_pct;
      sample.value = util(t);
      aggregator.add(sample);
      sample.metric = Metric::memory_used_bytes;
      sample.value = memory_gib * 1024 * 1024 * 1024;
      aggregator.add(sample);
    }
  };
  ids.reserve(16);
  add("idle", "a", [](double) { return 0.0; }, 1);
  add("underused", "a", [](double) { return 20.0; }, 60);
  add("oversized", "b", [](double) { return 85.0; }, 9);
  add("healthy", "b", [](double) { return 80.0; }, 70);
  add("nights", "b", [](double t) { return std::fmod(t, 86400) < 43200 ? 0.0 : 90.0; }, 70);
  return aggregator;
}

TEST(Audit, FindsEachKindWithDollars) {
  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  options.usd_per_gpu_hour = 2.0;
  options.group_by = "team";
  auto report = run_audit(fleet(), catalog, options);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  std::map<std::string, std::string> kind_of;
  for (const auto& f : report.value().findings) kind_of[f.scope.substr(4, f.scope.find(' ') - 4)] = f.kind;
  EXPECT_EQ(kind_of["idle"], "idle");
  EXPECT_EQ(kind_of["underused"], "underused");
  EXPECT_EQ(kind_of["oversized"], "vram_oversized");
  EXPECT_EQ(kind_of["healthy"], "healthy");
  EXPECT_EQ(kind_of["nights"], "idle_schedule");
  // The idle GPU wastes its whole price: $2 x 730 h.
  const Finding& top = report.value().findings.front();
  EXPECT_EQ(top.kind, "idle");
  EXPECT_NEAR(top.waste_usd_per_month, 1460, 1e-6);
  EXPECT_NEAR(report.value().fleet_usd_per_month, 5 * 1460, 1e-6);
  EXPECT_GT(report.value().recoverable_usd_per_month, 1460);
  EXPECT_LT(report.value().recoverable_usd_per_month, report.value().fleet_usd_per_month);
  EXPECT_EQ(report.value().underused_gpus, 1);
  EXPECT_EQ(report.value().underused_fit_on, 1);  // 20% of one GPU fits on one at 70%
  ASSERT_EQ(report.value().series[0].hour_of_week_util_pct.size(), 168u);
  ASSERT_EQ(report.value().attribution.size(), 2u);
  EXPECT_EQ(report.value().attribution[0].group, "b");  // three GPUs
}

TEST(Audit, StarvedGpusAndCostPerThousandInferences) {
  std::string id = "pod=a";
  Labels labels{{"pod", "a"}};
  TelemetryAggregator aggregator;
  for (double t = 0; t < 40 * 3600; t += 60) {
    TelemetrySample sample;
    sample.series = &id;
    sample.labels = &labels;
    sample.time_s = t;
    sample.value = 25;  // the GPU waits on its input
    aggregator.add(sample);
    sample.metric = Metric::cpu_util_pct;
    sample.value = 95;
    aggregator.add(sample);
    sample.metric = Metric::requests_per_s;
    sample.value = 10;
    aggregator.add(sample);
  }
  AuditOptions options;
  options.usd_per_gpu_hour = 3.6;
  auto report = run_audit(aggregator, Catalog::embedded().value(), options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.value().findings[0].kind, "starved");
  // $3.60 an hour for 36,000 requests an hour: $0.10 per 1k.
  ASSERT_TRUE(report.value().usd_per_1k_inferences.has_value());
  EXPECT_NEAR(*report.value().usd_per_1k_inferences, 0.10, 1e-9);
}

// A GPU at 20% on a host seen through node_exporter: CPU-bound or waiting on storage.
AuditReport starved_by_host(double busy_pct, double iowait_pct, int cpus) {
  static std::string gpu = "gpu=0,hostname=node-a", host = "hostname=node-a";
  static Labels gpu_labels{{"gpu", "0"}, {"hostname", "node-a"}}, host_labels{{"hostname", "node-a"}};
  TelemetryAggregator aggregator;
  for (double t = 0; t < 40 * 3600; t += 60) {
    aggregator.add({&gpu, &gpu_labels, Metric::gpu_util_pct, t, 20});
    aggregator.add({&host, &host_labels, Metric::cpu_util_pct, t, busy_pct + iowait_pct});
    aggregator.add({&host, &host_labels, Metric::cpu_iowait_pct, t, iowait_pct});
  }
  aggregator.add({&host, &host_labels, Metric::host_cpus, 0, static_cast<double>(cpus)});
  AuditOptions options;
  options.usd_per_gpu_hour = 2;
  return run_audit(aggregator, Catalog::embedded().value(), options).value();
}

TEST(Audit, StarvedByTheHostSaysWhetherASmallerHostWouldDo) {
  auto cpu_bound = starved_by_host(90, 2, 8);
  ASSERT_EQ(cpu_bound.series.size(), 1u);  // the host is joined, not audited as a GPU
  ASSERT_EQ(cpu_bound.findings.size(), 1u);
  EXPECT_EQ(cpu_bound.findings[0].kind, "starved");
  EXPECT_NE(cpu_bound.findings[0].recommendation.find("a smaller host would not do"), std::string::npos);
  // 8 CPUs x 90% feed 20%; 70% needs 8 x 0.9 x 3.5 / 0.8 = 31.5 -> 32 CPUs.
  EXPECT_NE(cpu_bound.findings[0].recommendation.find("about 32 CPUs"), std::string::npos) << cpu_bound.findings[0].recommendation;
  EXPECT_NEAR(cpu_bound.findings[0].waste_usd_per_month, 2 * 730 * (1 - 20.0 / 70), 1e-6);

  auto io_bound = starved_by_host(10, 40, 16);
  EXPECT_EQ(io_bound.findings[0].kind, "starved");
  // 16 x 0.1 x 3.5 / 0.8 = 7 CPUs.
  EXPECT_NE(io_bound.findings[0].recommendation.find("a smaller host would do: about 7 CPUs"), std::string::npos)
      << io_bound.findings[0].recommendation;
  ASSERT_TRUE(io_bound.series[0].host_iowait_pct.has_value());
  EXPECT_NEAR(*io_bound.series[0].host_iowait_pct, 40, 1e-9);

  // A quiet host: the GPU is simply under-used.
  EXPECT_EQ(starved_by_host(20, 1, 8).findings[0].kind, "underused");
}

TEST(Audit, ShortDataIsInsufficientNotAFinding) {
  std::string id = "gpu=0";
  Labels labels{{"gpu", "0"}};
  TelemetryAggregator aggregator;
  for (double t = 0; t < 3600; t += 60) {
    TelemetrySample sample;
    sample.series = &id;
    sample.labels = &labels;
    sample.time_s = t;
    aggregator.add(sample);
  }
  AuditOptions options;
  options.usd_per_gpu_hour = 1;
  auto report = run_audit(aggregator, Catalog::embedded().value(), options);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report.value().findings.size(), 1u);
  EXPECT_EQ(report.value().findings[0].kind, "insufficient_data");
  EXPECT_EQ(report.value().recoverable_usd_per_month, 0);
}

}  // namespace
}  // namespace gw
