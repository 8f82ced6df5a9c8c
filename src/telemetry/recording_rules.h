// The recording rules gpuwise asks a user's Prometheus to evaluate, so that an audit over weeks
// of a large fleet needs no subqueries: each GPU's idle flag (duty cycle below the audit's idle
// threshold) recorded once a minute. An hour's fresh minutes are then the count of the flag's
// samples and its idle minutes their sum, plain range functions over a recorded series, instead
// of the minute-step subqueries `count_over_time(x[1h:1m])` and `count_over_time((x < 5)[1h:1m])`
// that dominate a push-down's time (`gpuwise audit --prometheus URL --use-recording-rules`).
#pragma once

#include <string>

namespace gw {

// The recorded series: DCGM_FI_DEV_GPU_UTIL < bool 5 with every label of the GPU's series.
inline constexpr const char* kIdleRuleName = "gpuwise:DCGM_FI_DEV_GPU_UTIL:idle";
// The rules' evaluation interval, seconds: one flag a minute, the subqueries' own step.
inline constexpr double kIdleRuleIntervalS = 60;

// A Prometheus rule file (rule_files: in prometheus.yml, or a Thanos/Mimir ruler) holding the
// group; the text says how to install and backfill it.
std::string recording_rules_yaml();

}  // namespace gw
