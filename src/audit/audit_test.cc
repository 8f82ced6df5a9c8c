#include "audit/audit.h"
#include "core/money.h"

#include <cmath>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <map>
#include <optional>

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

// A nightly job on a T4 (4 hours a night for a week, busy at 60%), a GPU that only recorded
// memory, and a short log: priced for the hours that ran, no mean for a metric never sampled,
// a p95 never above the peak, and the flag that lowers the data bar named.
TelemetryAggregator nightly_and_memory_only(int nights, double hours_per_night) {
  static std::vector<std::pair<std::string, Labels>> ids;
  ids.clear();
  ids.reserve(4);
  ids.emplace_back("nightly", Labels{{"gpu", "nightly"}, {"model", "Tesla T4"}});
  ids.emplace_back("memory", Labels{{"gpu", "memory"}, {"model", "Tesla T4"}});
  TelemetryAggregator aggregator;
  TelemetrySample sample;
  for (int night = 0; night < nights; ++night)
    for (double t = 0; t < hours_per_night * 3600; t += 60) {
      sample.time_s = 1700000000 + night * 86400.0 + 2 * 3600 + t;
      sample.series = &ids[0].first;
      sample.labels = &ids[0].second;
      sample.metric = Metric::gpu_util_pct;
      sample.value = 60;
      aggregator.add(sample);
      sample.metric = Metric::memory_used_bytes;
      sample.value = (4.0 + std::fmod(t, 7.0)) * 1024 * 1024 * 1024;
      aggregator.add(sample);
      sample.series = &ids[1].first;
      sample.labels = &ids[1].second;
      aggregator.add(sample);
    }
  return aggregator;
}

TEST(Audit, JobsOnAScheduleArePricedForTheHoursTheyRan) {
  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  options.usd_per_gpu_hour = 0.35;
  options.min_coverage_hours = 24;  // a week of 4-hour nights has 28
  auto report = run_audit(nightly_and_memory_only(7, 4), catalog, options);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  const SeriesReport* nightly = nullptr;
  const SeriesReport* memory = nullptr;
  for (const auto& s : report.value().series) (s.id.find("nightly") != std::string::npos ? nightly : memory) = &s;
  ASSERT_TRUE(nightly && memory);
  // 28 hours of a 6 day 4 hour log: 19.4% of the month, about $50, not $255.50 for 730 hours.
  const double span_h = 6 * 24 + 4 - 1.0 / 60;
  EXPECT_NEAR(nightly->billed_share, nightly->coverage_hours / span_h, 1e-9);
  EXPECT_NEAR(nightly->usd_per_month, 0.35 * 730 * nightly->coverage_hours / span_h, 1e-6);
  EXPECT_LT(nightly->usd_per_month, 60);
  EXPECT_GT(nightly->usd_per_month, 40);
  for (const auto& f : report.value().findings) {
    if (f.scope.find("nightly") != std::string::npos) {
      EXPECT_LE(f.waste_usd_per_month, nightly->usd_per_month + 1e-9);
    }
  }
  // Memory only: measured as such, judged on nothing it did not measure.
  EXPECT_FALSE(memory->util_measured);
  EXPECT_EQ(report.value().underused_gpus, 0);
  for (const auto& f : report.value().findings) {
    if (f.scope.find("memory") != std::string::npos) {
      EXPECT_EQ(f.kind, "insufficient_data") << f.evidence;
    }
  }
  EXPECT_LE(memory->p95_memory_bytes, memory->peak_memory_bytes);
  EXPECT_LE(nightly->p95_memory_bytes, nightly->peak_memory_bytes);
  // Busy while it runs: the cost of a run, and a run elsewhere where it is at least 10% cheaper
  // (a T4 at 60% on the catalog's prices: an L4 or newer part runs it faster for less).
  bool per_run = false;
  std::string nightly_findings;
  for (const auto& f : report.value().findings)
    if (f.scope.find("nightly") != std::string::npos) {
      nightly_findings += f.kind + ": " + f.evidence + "\n";
      per_run |= f.evidence.find("per run on T4") != std::string::npos;
      if (f.kind == "cheaper_per_run") {
        EXPECT_GT(f.waste_usd_per_month, 0);
        EXPECT_LE(f.waste_usd_per_month, nightly->usd_per_month);
      }
    }
  EXPECT_TRUE(per_run) << nightly_findings;
  // A VM kept up between runs: priced around the clock when asked.
  options.always_on = true;
  auto always = run_audit(nightly_and_memory_only(7, 4), catalog, options);
  ASSERT_TRUE(always.ok());
  for (const auto& s : always.value().series) EXPECT_NEAR(s.usd_per_month, 0.35 * 730, 1e-6) << s.id;
  // One 4-hour night: too little data, and the flag that lowers the bar is named.
  options.always_on = false;
  auto short_log = run_audit(nightly_and_memory_only(1, 4), catalog, options);
  ASSERT_TRUE(short_log.ok());
  bool named = false;
  for (const auto& f : short_log.value().findings) named |= f.recommendation.find("--min-coverage-hours") != std::string::npos;
  EXPECT_TRUE(named);
}

// GPUs attached to a VM (GCP's N1 + T4) are priced apart from it: --host-usd-per-hour adds the
// VM, shared by the GPUs on each host.
TEST(Audit, TheHostVmIsSharedByItsGpus) {
  static std::vector<std::pair<std::string, Labels>> ids;
  ids = {{"a", Labels{{"gpu", "0"}, {"hostname", "h1"}}}, {"b", Labels{{"gpu", "1"}, {"hostname", "h1"}}},
         {"c", Labels{{"gpu", "0"}, {"hostname", "h2"}}}};
  TelemetryAggregator aggregator;
  TelemetrySample sample;
  for (auto& [id, labels] : ids)
    for (double t = 0; t < 2 * 86400; t += 300) {
      sample.series = &id;
      sample.labels = &labels;
      sample.time_s = 1700000000 + t;
      sample.metric = Metric::gpu_util_pct;
      sample.value = 90;
      aggregator.add(sample);
    }
  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  options.usd_per_gpu_hour = 0.35;
  options.host_usd_per_hour = 0.38;
  auto report = run_audit(aggregator, catalog, options);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  for (const auto& s : report.value().series) {
    bool shared = false;
    for (const auto& [k, v] : s.labels) shared |= k == "hostname" && v == "h1";
    EXPECT_NEAR(s.usd_per_month, (0.35 + 0.38 / (shared ? 2 : 1)) * 730, 1e-6) << s.id;
  }
  EXPECT_NEAR(report.value().fleet_usd_per_month, (3 * 0.35 + 2 * 0.38) * 730, 1e-6);
}

// A peak over the device's memory: where the device was only the user's --accelerator and a
// bigger device of its vendor holds the peak, the finding says the GPU that ran is likely
// another and names some; where no device holds it, or the telemetry named the device, the
// exporter's unit is the suspect.
std::string bad_exporter_advice(double peak_gib, const std::string& given_accelerator, const std::string& model_label) {
  static std::vector<std::pair<std::string, Labels>> ids;
  ids = {{"g", model_label.empty() ? Labels{{"gpu", "0"}} : Labels{{"gpu", "0"}, {"model", model_label}}}};
  TelemetryAggregator aggregator;
  TelemetrySample sample;
  sample.series = &ids[0].first;
  sample.labels = &ids[0].second;
  for (double t = 0; t < 2 * 86400; t += 300) {
    sample.time_s = 1700000000 + t;
    sample.metric = Metric::gpu_util_pct;
    sample.value = 40;
    aggregator.add(sample);
    sample.metric = Metric::memory_used_bytes;
    sample.value = peak_gib * 1024 * 1024 * 1024;
    aggregator.add(sample);
  }
  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  options.accelerator = given_accelerator;
  auto report = run_audit(aggregator, catalog, options);
  if (!report.ok()) return "error: " + report.error().to_string();
  for (const auto& f : report.value().findings)
    if (f.kind == "bad_exporter") return f.recommendation;
  return "";
}

TEST(Audit, APeakOverTheGivenAcceleratorNamesDevicesThatHoldIt) {
  const std::string given = bad_exporter_advice(36.2, "A10", "");
  EXPECT_NE(given.find("likely not the A10 given (--accelerator): its peak fits A100-40GB"), std::string::npos) << given;
  EXPECT_NE(given.find("exporter's memory unit"), std::string::npos) << given;
  const std::string no_device = bad_exporter_advice(5000, "A10", "");
  EXPECT_EQ(no_device.find("likely not"), std::string::npos) << no_device;
  EXPECT_NE(no_device.find("exporter's memory unit"), std::string::npos) << no_device;
  const std::string labelled = bad_exporter_advice(120, "", "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(labelled.find("likely not"), std::string::npos) << labelled;
  EXPECT_NE(labelled.find("exporter's memory unit"), std::string::npos) << labelled;
}

// Two GPUs at 20%: one holding 5 GiB, whose work can share a GPU, and one holding 60 of its 80
// GiB, whose work cannot (another copy would not fit beside it). Their work fits on two GPUs,
// not the one their duty cycles add up to; each is told the move that works for it.
TEST(Audit, AnUnderusedGpuThatHoldsMostOfItsMemoryIsNotConsolidated) {
  static std::vector<std::pair<std::string, Labels>> ids;
  ids.clear();
  ids.reserve(2);
  ids.emplace_back("small", Labels{{"gpu", "small"}, {"model", "NVIDIA A100-SXM4-80GB"}});
  ids.emplace_back("full", Labels{{"gpu", "full"}, {"model", "NVIDIA A100-SXM4-80GB"}});
  TelemetryAggregator aggregator;
  TelemetrySample sample;
  for (size_t g = 0; g < ids.size(); ++g)
    for (double t = 0; t < 7 * 86400; t += 300) {
      sample.series = &ids[g].first;
      sample.labels = &ids[g].second;
      sample.time_s = 1700000000 + t;
      sample.metric = Metric::gpu_util_pct;
      sample.value = 20;
      aggregator.add(sample);
      sample.metric = Metric::memory_used_bytes;
      sample.value = (g == 0 ? 5.0 : 60.0) * 1024 * 1024 * 1024;
      aggregator.add(sample);
    }
  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  options.usd_per_gpu_hour = 2.0;
  auto report = run_audit(aggregator, catalog, options);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  EXPECT_EQ(report.value().underused_gpus, 2);
  EXPECT_EQ(report.value().underused_fit_on, 2);
  int underused = 0;
  for (const auto& f : report.value().findings) {
    if (f.kind != "underused") continue;  // the small one is also oversized: a smaller GPU holds 5 GiB
    ++underused;
    const bool full = f.scope.find("gpu=full") != std::string::npos;
    EXPECT_EQ(f.recommendation.find("consolidate") != std::string::npos, !full) << f.scope << ": " << f.recommendation;
  }
  EXPECT_EQ(underused, 2);
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
  for (const auto& f : report.value().findings)
    if (f.kind == "underused") {  // 60 of 80 GB in use: no room for another workload's copy
      EXPECT_NE(f.recommendation.find("no room to share"), std::string::npos) << f.recommendation;
      EXPECT_NE(f.evidence.find("60.0 of"), std::string::npos) << f.evidence;
    }
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

// One GPU's samples: `busy` share of minutes at 100% (the rest idle), a memory peak, labels.
TelemetryAggregator one_gpu(const Labels& labels, double busy, double memory_gib, std::optional<double> sm_active = {},
                            std::optional<double> dram_active = {}, double busy_by_day = -1) {
  static std::vector<std::pair<std::string, Labels>> ids;
  ids.reserve(64);
  std::string id;
  for (const auto& [k, v] : labels) id += k + "=" + v + ",";
  ids.emplace_back(id, labels);
  TelemetryAggregator aggregator;
  TelemetrySample sample;
  sample.series = &ids.back().first;
  sample.labels = &ids.back().second;
  const int minutes = 3 * 1440;
  for (int i = 0; i < minutes; ++i) {
    sample.time_s = 1700000000 + 60.0 * i;
    sample.metric = Metric::gpu_util_pct;
    // Busy minutes spread evenly: every hour as busy as the whole (its busiest hour is its mean).
    sample.value = (i % 10) < busy * 10 ? 100 : 0;
    // Or busy by day (09:00-18:00 UTC) and idle by night.
    if (busy_by_day >= 0) {
      const int hour = static_cast<int>(std::fmod(sample.time_s, 86400.0) / 3600);
      sample.value = hour >= 9 && hour < 18 && (i % 10) < busy_by_day * 10 ? 100 : 0;
    }
    aggregator.add(sample);
    sample.metric = Metric::memory_used_bytes;
    sample.value = memory_gib * 1024 * 1024 * 1024;
    aggregator.add(sample);
    for (auto [metric, value] : {std::pair{Metric::sm_active, sm_active}, std::pair{Metric::dram_active, dram_active}}) {
      if (!value) continue;
      sample.metric = metric;
      sample.value = *value;
      aggregator.add(sample);
    }
  }
  return aggregator;
}

// The cheapest whole count of one accelerator, on one cloud's x86_64 hosts (p4de's), whose devices each hold the peak +
// 20% and together carry `load` of the A100's fp16 compute and bandwidth at 70% busy; none
// unless under `under_usd_per_hour` (the test's own arithmetic, from the catalog's rows).
struct AuditMove {
  std::string accelerator;
  int count = 0;
  double usd_per_hour = 0;
};
AuditMove cheapest_move_on(const Catalog& catalog, const Accelerator& from, double peak_gib, double load, const std::string& cloud,
                           double under_usd_per_hour) {
  AuditMove best;
  best.usd_per_hour = under_usd_per_hour;
  for (const auto& c : catalog.accelerators()) {
    auto fp16 = c.peak(Precision::fp16) ? c.peak(Precision::fp16) : c.peak(Precision::bf16);
    if (c.name == from.name || c.memory_gib < peak_gib * 1.2 || !fp16 || c.memory_gb_per_s <= 0) continue;
    double cheapest = 1e300;
    for (const auto& o : catalog.offerings())
      if (o.accelerator == c.name && o.cloud == cloud && cpu_architecture(o) == "x86_64" && o.on_demand_usd_per_hour && o.vcpus > 0 &&
          o.accelerator_count > 0)
        cheapest = std::min(cheapest, *o.on_demand_usd_per_hour / o.accelerator_count);
    if (cheapest > 1e299) continue;
    double need = std::max(load * *from.peak(Precision::fp16) / *fp16, load * from.memory_gb_per_s / c.memory_gb_per_s) / 0.7;
    int count = static_cast<int>(std::ceil(need - 1e-9));
    if (cheapest * count < best.usd_per_hour) best = {c.name, count, cheapest * count};
  }
  return best;
}

// An A100 50% busy with an 11 GiB peak: the move covers memory, compute and bandwidth, with the
// count stated, and no cheaper set of devices in the catalog does all three.
TEST(Audit, RightSizingCoversComputeAndBandwidthWithACount) {
  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  options.offering = "p4de.24xlarge";
  auto report = run_audit(one_gpu({{"gpu", "0"}}, 0.5, 11), catalog, options);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  const Accelerator& a100 = *catalog.find_accelerator("A100-80GB");
  // The price of what runs, per GPU: p4de.24xlarge's on-demand price over its 8 GPUs.
  double running = 0;
  for (const auto& o : catalog.offerings())
    if (o.instance_type == "p4de.24xlarge" && o.on_demand_usd_per_hour)
      running = running == 0 ? *o.on_demand_usd_per_hour / 8 : std::min(running, *o.on_demand_usd_per_hour / 8);
  ASSERT_GT(running, 3.0);
  EXPECT_NEAR(report.value().fleet_usd_per_month, running * kHoursPerMonth, 1e-6);
  EXPECT_EQ(report.value().series.front().price_source, "p4de.24xlarge on demand");
  // Independent: the cheapest set of AWS devices (p4de's cloud) that holds 13.2 GiB each and
  // carries 0.5 of an A100's fp16 compute and bandwidth at 70% busy.
  const AuditMove independent = cheapest_move_on(catalog, a100, 11, 0.5, "aws", running * 0.9);
  const std::string& best = independent.accelerator;
  const int best_count = independent.count;
  const double best_usd = independent.usd_per_hour;
  ASSERT_FALSE(best.empty());
  const Finding* move = nullptr;
  for (const auto& f : report.value().findings)
    if (f.kind == "vram_oversized") move = &f;
  ASSERT_NE(move, nullptr);
  EXPECT_NE(move->recommendation.find(fmt::format("move to {} x {} ", best_count, best)), std::string::npos) << move->recommendation;
  EXPECT_NEAR(move->waste_usd_per_month, (running - best_usd) * kHoursPerMonth, 1e-6);
  EXPECT_GT(best_count, 1);  // half an A100's bandwidth is more than one of the cheaper devices
  // T4s would need ceil(0.5 x 2039/320 / 0.7) = 5: not the one-T4 move that memory alone suggests.
  const Accelerator* t4 = catalog.find_accelerator("T4");
  ASSERT_NE(t4, nullptr);
  EXPECT_EQ(static_cast<int>(std::ceil(0.5 * a100.memory_gb_per_s / t4->memory_gb_per_s / 0.7)), 5);
  // Measured SM and DRAM activity, well under the duty cycle: the same work needs fewer devices.
  auto measured = run_audit(one_gpu({{"gpu", "0"}}, 0.5, 11, 0.1, 0.1), catalog, options);
  ASSERT_TRUE(measured.ok());
  double measured_waste = 0;
  for (const auto& f : measured.value().findings)
    if (f.kind == "vram_oversized") measured_waste = f.waste_usd_per_month;
  EXPECT_GT(measured_waste, move->waste_usd_per_month);
}

// Busy 80% of each working day and idle at night (30% on average), 10 GiB at peak: the move is
// sized for the day's hours, not the mean, and priced on the cloud that runs it, named.
TEST(Audit, RightSizingCarriesTheBusiestHourOnTheCloudThatRuns) {
  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  options.offering = "p4de.24xlarge";
  auto report = run_audit(one_gpu({{"gpu", "0"}}, 0, 10, {}, {}, 0.8), catalog, options);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  const SeriesReport& series = report.value().series.front();
  EXPECT_NEAR(series.mean_util_pct, 30, 0.5);
  const Accelerator& a100 = *catalog.find_accelerator("A100-80GB");
  const double running = report.value().fleet_usd_per_month / kHoursPerMonth;
  // Sized by the mean, a cheaper set of AWS devices would take the work; sized by the day's
  // hours, the one the audit must name (or none).
  const AuditMove by_mean = cheapest_move_on(catalog, a100, 10, 0.3, "aws", running * 0.9);
  const AuditMove by_day = cheapest_move_on(catalog, a100, 10, 0.8, "aws", running * 0.9);
  ASSERT_FALSE(by_mean.accelerator.empty());
  ASSERT_TRUE(by_day.accelerator != by_mean.accelerator || by_day.count != by_mean.count);
  const Finding* move = nullptr;
  for (const auto& f : report.value().findings)
    if (f.kind == "vram_oversized") move = &f;
  if (by_day.accelerator.empty()) {
    EXPECT_EQ(move, nullptr) << move->recommendation;
  } else if (move) {
    EXPECT_NE(move->recommendation.find(fmt::format("move to {} x {} ", by_day.count, by_day.accelerator)), std::string::npos)
        << move->recommendation;
    EXPECT_NE(move->evidence.find("80% in its busiest hour"), std::string::npos) << move->evidence;
  }
  // A GPU half busy every hour with the same memory gets its move, priced and named on AWS: an
  // instance type of the catalog's on that cloud.
  const AuditMove steadily = cheapest_move_on(catalog, a100, 10, 0.5, "aws", running * 0.9);
  ASSERT_FALSE(steadily.accelerator.empty());
  auto steady = run_audit(one_gpu({{"gpu", "0"}}, 0.5, 10), catalog, options);
  ASSERT_TRUE(steady.ok());
  const Finding* steady_move = nullptr;
  for (const auto& f : steady.value().findings)
    if (f.kind == "vram_oversized") steady_move = &f;
  ASSERT_NE(steady_move, nullptr);
  EXPECT_NE(steady_move->recommendation.find(fmt::format("move to {} x {} ", steadily.count, steadily.accelerator)), std::string::npos)
      << steady_move->recommendation;
  const size_t on = steady_move->recommendation.find(" each on aws ");
  ASSERT_NE(on, std::string::npos) << steady_move->recommendation;
  const std::string instance_type = steady_move->recommendation.substr(on + 13, steady_move->recommendation.find(':', on) - on - 13);
  bool known = false;
  for (const auto& o : catalog.offerings()) known |= o.cloud == "aws" && o.instance_type == instance_type && o.accelerator == steadily.accelerator;
  EXPECT_TRUE(known) << instance_type;
}

// Prices from what runs: the series' instance-type label, else (said) the catalog's cheapest.
TEST(Audit, PricesFromTheInstanceThatRuns) {
  Catalog catalog = Catalog::embedded().value();
  AuditOptions options;
  auto labelled = run_audit(one_gpu({{"gpu", "0"}, {"instance_type", "p4de.24xlarge"}}, 0.9, 70), catalog, options);
  ASSERT_TRUE(labelled.ok()) << labelled.error().to_string();
  EXPECT_EQ(labelled.value().series.front().accelerator, "A100-80GB");  // from the instance type
  EXPECT_EQ(labelled.value().series.front().price_source, "p4de.24xlarge on demand");
  EXPECT_EQ(labelled.value().priced_by_fallback, 0);
  auto model_only = run_audit(one_gpu({{"gpu", "0"}, {"model", "NVIDIA A100-SXM4-80GB"}}, 0.9, 70), catalog, options);
  ASSERT_TRUE(model_only.ok());
  EXPECT_EQ(model_only.value().priced_by_fallback, 1);
  EXPECT_NE(model_only.value().series.front().price_source.find("fallback"), std::string::npos);
  EXPECT_GT(labelled.value().fleet_usd_per_month, model_only.value().fleet_usd_per_month);
  options.offering = "no-such-instance";
  auto unknown = run_audit(one_gpu({{"gpu", "0"}}, 0.9, 70), catalog, options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().field, "--offering");
}

}  // namespace
}  // namespace gw
