#include "sim/autoscaler.h"

#include <algorithm>
#include <cmath>

namespace gw {

std::string_view scale_policy_name(ScalePolicy policy) {
  switch (policy) {
    case ScalePolicy::static_peak: return "static-peak";
    case ScalePolicy::cpu: return "cpu";
    case ScalePolicy::queue_depth: return "queue-depth";
    case ScalePolicy::duty_cycle: return "gpu-duty-cycle";
    case ScalePolicy::concurrency: return "concurrency";
  }
  return "static-peak";
}

double CpuModel::utilization_pct(double busy_fraction, double requests_per_s) const {
  double used_cores = driver_cores_when_busy * busy_fraction + cpu_ms_per_request / 1e3 * requests_per_s;
  return std::min(100.0, idle_pct + 100.0 * used_cores / std::max(1, cores));
}

int Autoscaler::raw_desired(const ScaleObservation& o, int current) {
  const ScalerConfig& c = config_;
  auto utilization = [&](double metric) {
    last_metric_ = metric;
    if (o.ready == 0) return current;
    double ratio = metric / c.target;
    if (std::abs(ratio - 1) <= c.tolerance) return current;
    return static_cast<int>(std::ceil(ratio * o.ready - 1e-9));
  };
  auto average_value = [&](double total) {
    last_metric_ = o.ready > 0 ? total / o.ready : total;
    double ratio = current > 0 ? total / (c.target * current) : 2;
    if (current > 0 && std::abs(ratio - 1) <= c.tolerance) return current;
    return static_cast<int>(std::ceil(total / c.target - 1e-9));
  };
  switch (c.policy) {
    case ScalePolicy::static_peak: return c.static_replicas;
    case ScalePolicy::cpu: {
      double per_replica_rps = o.ready > 0 ? o.completion_rps / o.ready : 0;
      return utilization(c.cpu.utilization_pct(o.busy_fraction, per_replica_rps));
    }
    case ScalePolicy::duty_cycle: return utilization(o.busy_fraction * 100);
    case ScalePolicy::queue_depth: return average_value(static_cast<double>(o.waiting + o.in_service));
    case ScalePolicy::concurrency: return average_value(static_cast<double>(o.in_service));
  }
  return current;
}

int Autoscaler::decide(const ScaleObservation& o) {
  const ScalerConfig& c = config_;
  int current = o.ready + o.starting;
  if (!seen_) {
    seen_ = true;
    last_request_s_ = o.time_s;
    // The pool has been running at its initial size: the scrape before this one recommended that
    // count, so the scale-down window holds it as a running deployment's HPA would.
    recommendations_.emplace_back(o.time_s - std::max(o.interval_s, 1e-6), current);
  }
  if (o.arrival_rps > 0 || o.waiting + o.in_service > 0) last_request_s_ = o.time_s;
  if (c.policy == ScalePolicy::static_peak) return c.static_replicas;
  // Scale to zero: no request for the keep-alive; any request wakes the pool (activation).
  if (c.min_replicas == 0) {
    if (o.time_s - last_request_s_ >= c.keep_alive_s) {
      recommendations_.clear();
      return 0;
    }
  }
  int floor = std::max(1, c.min_replicas);
  int desired = std::clamp(raw_desired(o, current), floor, c.max_replicas);

  // Stabilization windows: scale up to the lowest and down to the highest recommendation seen.
  recommendations_.emplace_back(o.time_s, desired);
  double keep = std::max(c.scale_up_window_s, c.scale_down_window_s);
  while (!recommendations_.empty() && recommendations_.front().first < o.time_s - keep) recommendations_.pop_front();
  int up = desired, down = desired;
  for (auto [time, value] : recommendations_) {
    if (time >= o.time_s - c.scale_up_window_s) up = std::min(up, value);
    if (time >= o.time_s - c.scale_down_window_s) down = std::max(down, value);
  }
  int result = current;
  if (result < up) result = up;
  if (result > down) result = down;

  // Step limits per period.
  if (result > current) {
    int limit = std::max(current + c.scale_up_pods,
                         static_cast<int>(std::ceil(current * (1 + c.scale_up_percent / 100) - 1e-9)));
    result = std::min(result, limit);
  } else if (result < current) {
    int limit = static_cast<int>(std::floor(current * (1 - c.scale_down_percent / 100) + 1e-9));
    result = std::max(result, limit);
  }
  return std::clamp(result, floor, c.max_replicas);
}

}  // namespace gw
