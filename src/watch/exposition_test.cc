#include "watch/exposition.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace gw {
namespace {

AuditRun fleet_with_hostile_labels() {
  AuditRun run;
  AuditReport& r = run.report;
  SeriesReport s;
  s.id = "gpu=0,Hostname=node-a";
  s.labels = {{"Hostname", "node-a"}, {"namespace", "ml"}, {"pod", "evil\"pod\nname\\<script>alert(1)</script>"}};
  s.accelerator = "A100-80GB";
  s.usd_per_month = 730 * 2.0;
  s.mean_util_pct = 20;
  s.idle_fraction = 0.5;
  s.peak_memory_bytes = 8e9;
  s.coverage_hours = 48;
  r.series.push_back(s);
  s.id = "gpu=1,Hostname=node-a";
  s.labels = {{"Hostname", "node-a"}, {"team", "search"}};
  s.util_measured = false;  // memory samples only: no duty cycle exported
  r.series.push_back(s);
  r.findings.push_back({"idle", "gpu=0,Hostname=node-a", "idle half the time", 730.0, "scale to zero at night", "high"});
  r.findings.push_back({"healthy", "gpu=1,Hostname=node-a", "", 0, "", "high"});
  r.fleet_usd_per_month = 2 * 730 * 2.0;
  r.recoverable_usd_per_month = 730;
  r.gpus = 2;
  r.attribution.push_back({"ml", 1460, 20, 1, std::vector<double>(168, -1)});
  r.attribution.back().hour_of_week_idle_ratio[9] = 0.25;  // Monday 09:00
  r.hour_of_week_idle_ratio.assign(168, -1);
  r.hour_of_week_idle_usd_per_hour.assign(168, 0);
  r.hour_of_week_idle_ratio[33] = 0.5;  // Tuesday 09:00
  r.hour_of_week_idle_usd_per_hour[33] = 2;
  return run;
}

TEST(WatchExposition, HostileLabelsAreEscapedAndEveryLineParses) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  AuditRun run = fleet_with_hostile_labels();
  WatchHealth health;
  health.now_s = 1000;
  health.last_success_s = 940;
  health.refreshes_ok = 3;
  health.window_s = 7 * 86400;
  const std::string text = watch_exposition(&run, "7d", "namespace", health);
  // One sample per line: the newline inside the pod's name never reaches the output raw.
  EXPECT_NE(text.find("pod=\"evil\\\"pod\\nname\\\\<script>alert(1)</script>\""), std::string::npos) << text;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    ASSERT_NE(end, std::string::npos) << "the exposition ends with a line feed";
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) continue;
    ASSERT_EQ(line.rfind("gpuwise_", 0), 0u) << line;
    // Quotes balance once escaped ones are skipped, and a value follows the labels.
    int quotes = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\') {
        ++i;
        continue;
      }
      if (line[i] == '"') ++quotes;
    }
    EXPECT_EQ(quotes % 2, 0) << line;
    EXPECT_NE(line.find(' '), std::string::npos) << line;
  }
  EXPECT_NE(text.find("gpuwise_gpu_cost_usd_per_hour{gpu=\"gpu=0,Hostname=node-a\",hostname=\"node-a\",namespace=\"ml\""),
            std::string::npos);
  EXPECT_NE(text.find("gpuwise_gpu_idle_cost_usd_per_hour{"), std::string::npos);
  EXPECT_NE(text.find("gpuwise_watch_data_age_seconds 60\n"), std::string::npos);
  EXPECT_NE(text.find("gpuwise_group_cost_usd_per_hour{group_by=\"namespace\",group=\"ml\",window=\"7d\"} 2\n"), std::string::npos);
  // The idle heat map: only the hours with data, the fleet's and the group's.
  EXPECT_NE(text.find("gpuwise_fleet_idle_by_hour_of_week_ratio{weekday=\"2-Tue\",hour=\"09\",window=\"7d\"} 0.5\n"), std::string::npos);
  EXPECT_NE(text.find("gpuwise_fleet_idle_cost_by_hour_of_week_usd_per_hour{weekday=\"2-Tue\",hour=\"09\",window=\"7d\"} 2\n"),
            std::string::npos);
  EXPECT_EQ(text.find("gpuwise_fleet_idle_by_hour_of_week_ratio{weekday=\"1-Mon\""), std::string::npos);
  EXPECT_NE(text.find("gpuwise_group_idle_by_hour_of_week_ratio{weekday=\"1-Mon\",hour=\"09\",group_by=\"namespace\",group=\"ml\","
                      "window=\"7d\"} 0.25\n"),
            std::string::npos);
  // No duty cycle for the series without one; no recoverable dollars for a healthy GPU.
  EXPECT_EQ(text.find("gpuwise_gpu_duty_cycle_ratio{gpu=\"gpu=1"), std::string::npos);
  EXPECT_EQ(text.find("kind=\"healthy\",scope"), std::string::npos);
}

// Prometheus' own linter on the exposition: names, units, HELP and TYPE, counters' _total.
TEST(WatchExposition, PromtoolFindsNothingToLint) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) GTEST_FAIL() << "promtool is required (scripts/bootstrap installs it)";
  AuditRun run = fleet_with_hostile_labels();
  WatchHealth health;
  const auto file = std::filesystem::temp_directory_path() / fmt::format("gpuwise_exposition_{}.prom", ::getpid());
  std::ofstream(file) << watch_exposition(&run, "7d", "namespace", health);
  const auto log = file.string() + ".log";
  const int status = std::system(fmt::format("promtool check metrics < {} > {} 2>&1", file.string(), log).c_str());
  std::ifstream in(log);
  std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << said;
  EXPECT_EQ(said, "") << said;
  std::filesystem::remove(file);
  std::filesystem::remove(log);
}

}  // namespace
}  // namespace gw
