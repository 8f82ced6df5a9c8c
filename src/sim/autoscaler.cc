#include "sim/autoscaler.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

double Autoscaler::metric(const ScaleObservation& o) const {
  const ScalerConfig& c = config_;
  switch (c.policy) {
    case ScalePolicy::static_peak: return 0;
    case ScalePolicy::cpu: {
      double per_replica_rps = o.ready > 0 ? o.completion_rps / o.ready : 0;
      return c.cpu.utilization_pct(o.busy_fraction, per_replica_rps);
    }
    case ScalePolicy::duty_cycle: return o.busy_fraction * 100;
    case ScalePolicy::queue_depth: return static_cast<double>(o.waiting + o.in_service);
    case ScalePolicy::concurrency: return static_cast<double>(o.in_service);
  }
  return 0;
}

double Autoscaler::ratio(const ScaleObservation& o, int current) const {
  const ScalerConfig& c = config_;
  if (c.policy == ScalePolicy::static_peak) return 1;
  if (c.policy == ScalePolicy::cpu || c.policy == ScalePolicy::duty_cycle) return metric(o) / c.target;
  return current > 0 ? metric(o) / (c.target * current) : 2;
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
    case ScalePolicy::cpu:
    case ScalePolicy::duty_cycle: return utilization(metric(o));
    case ScalePolicy::queue_depth:
    case ScalePolicy::concurrency: return average_value(metric(o));
  }
  return current;
}

int Autoscaler::scheduled(double traffic_time_s) const {
  const std::vector<int>& s = config_.schedule;
  if (s.empty()) return 0;
  const auto hour_of = [](double t) { return static_cast<long long>(std::floor(std::max(0.0, t) / 3600)); };
  int most = 0;
  for (long long h = hour_of(traffic_time_s); h <= hour_of(traffic_time_s + config_.schedule_lead_s); ++h)
    most = std::max(most, s[static_cast<size_t>(h % static_cast<long long>(s.size()))]);
  return most;
}

double Autoscaler::schedule_holds_until(double traffic_time_s) const {
  const std::vector<int>& s = config_.schedule;
  if (s.empty()) return 1e18;
  // The hours counted change when the time, or the time plus the lead, enters a new hour: the
  // first such moment whose count differs (none over two rounds of the schedule: never).
  const double lead = config_.schedule_lead_s;
  const auto next_hour = [](double t) { return (std::floor(std::max(0.0, t) / 3600) + 1) * 3600; };
  const int now = scheduled(traffic_time_s);
  double at = traffic_time_s;
  for (size_t boundary = 0; boundary < 4 * s.size() + 2; ++boundary) {
    at = std::min(next_hour(at), next_hour(at + lead) - lead);
    if (scheduled(at) != now) return at;
  }
  return 1e18;
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
  int desired = std::clamp(std::max(raw_desired(o, current), scheduled(o.traffic_time_s)), floor, c.max_replicas);

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

double Autoscaler::expected_changes(const std::vector<ScaleObservation>& window, double scrapes_ahead) const {
  const ScalerConfig& c = config_;
  if (c.policy == ScalePolicy::static_peak) return 0;
  if (window.size() < 8) return std::numeric_limits<double>::infinity();
  const int current = window.back().ready + window.back().starting;
  std::vector<double> ratios;
  ratios.reserve(window.size());
  for (const auto& o : window) ratios.push_back(ratio(o, current));
  const double n = static_cast<double>(ratios.size());
  double mean = 0;
  for (double r : ratios) mean += r;
  mean /= n;
  double variance = 0, lagged = 0;
  for (size_t i = 0; i < ratios.size(); ++i) {
    variance += (ratios[i] - mean) * (ratios[i] - mean);
    if (i > 0) lagged += (ratios[i] - mean) * (ratios[i - 1] - mean);
  }
  const double sd = std::sqrt(variance / (n - 1));
  // Successive scrapes are correlated (a queue outlives a scrape interval): a run of k of them
  // is as likely as k (1 - rho) / (1 + rho) independent ones.
  const double rho = variance > 0 ? std::clamp(lagged / variance, 0.0, 0.95) : 0;
  // The share of scrapes whose ratio lies beyond `threshold` (above or below), for a normal
  // metric with the window's mean and spread.
  auto beyond = [&](double threshold, bool above) {
    if (sd <= 0) return (above ? mean > threshold : mean < threshold) ? 1.0 : 0.0;
    const double z = (threshold - mean) / sd;
    return above ? 0.5 * std::erfc(z / std::sqrt(2.0)) : 0.5 * std::erfc(-z / std::sqrt(2.0));
  };
  const double interval = std::max(window.back().interval_s, 1e-6);
  auto run_of = [&](double stabilization_s) {
    const double scrapes = std::floor(stabilization_s / interval) + 1;  // all in the window must agree
    return std::max(1.0, scrapes * (1 - rho) / (1 + rho));
  };
  // Up: one scrape past the tolerance, if the window lets it through; down: every scrape in the
  // scale-down window below both the tolerance and one replica fewer.
  const double up = current < c.max_replicas ? std::pow(beyond(1 + c.tolerance, true), run_of(c.scale_up_window_s)) : 0;
  // The schedule is a floor too, while it holds (no stretch is replayed past its changes).
  const int floor = std::max({1, c.min_replicas, scheduled(window.back().traffic_time_s)});
  const double low = std::min(1 - c.tolerance, (current - 1.0) / std::max(current, 1));
  const double down = current > floor ? std::pow(beyond(low, false), run_of(c.scale_down_window_s)) : 0;
  return scrapes_ahead * (up + down);
}

bool Autoscaler::would_hold(const std::vector<ScaleObservation>& again) const {
  Autoscaler copy = *this;
  for (const ScaleObservation& o : again)
    if (copy.decide(o) != o.ready + o.starting) return false;
  return true;
}

}  // namespace gw
