#include "telemetry/recording_rules.h"

#include <fmt/format.h>

#include "telemetry/aggregate.h"

namespace gw {

std::string recording_rules_yaml() {
  return fmt::format(
      "# gpuwise recording rules: each GPU's idle flag (dcgm-exporter's duty cycle below {0}%), once a\n"
      "# minute, so `gpuwise audit --prometheus URL --use-recording-rules` reads an hour's fresh and\n"
      "# idle minutes as count_over_time and sum_over_time of one recorded series instead of\n"
      "# minute-step subqueries. Add this file to rule_files: in prometheus.yml (or load it into a\n"
      "# Thanos or Mimir ruler). Hours from before the rule existed are asked by subqueries as usual;\n"
      "# to backfill them instead:\n"
      "#   promtool tsdb create-blocks-from rules --start=2026-01-01T00:00:00Z --url=http://localhost:9090 \\\n"
      "#     --output-dir=blocks this-file.yml   # then move blocks/* into Prometheus's data folder\n"
      "# and check that each whole 2-hour block holds 120 samples per GPU (promtool tsdb list blocks): promtool\n"
      "# evaluates a group at an offset into each minute hashed from its name and the file's path as\n"
      "# given, and where that lands in a minute's last second each block loses its last evaluation\n"
      "# (an unscraped minute to the audit); name the file otherwise and backfill again.\n"
      "groups:\n"
      "  - name: gpuwise\n"
      "    interval: {1:.0f}s\n"
      "    rules:\n"
      "      - record: {2}\n"
      "        expr: DCGM_FI_DEV_GPU_UTIL < bool {0}\n",
      kIdleUtilPct, kIdleRuleIntervalS, kIdleRuleName);
}

}  // namespace gw
