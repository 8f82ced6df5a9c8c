// Autoscaling policies as Kubernetes runs them: a metric scraped every interval, the HPA
// algorithm (desired = ceil(current x metric / target) for utilizations, ceil(total / target) for
// KEDA-style average values), a tolerance, stabilization windows, step limits, and scale to zero
// after a keep-alive with no requests. The CPU policy reads a CPU model of a GPU-bound server, so
// its failure to see GPU load is what the simulation shows.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/simulator.h"

namespace gw {

enum class ScalePolicy { static_peak, cpu, queue_depth, duty_cycle, concurrency };
std::string_view scale_policy_name(ScalePolicy policy);

// CPU of a replica whose work is on the GPU: the serving process drives the GPU from one busy
// core while a step runs, plus per-request work (HTTP, tokenization) and an idle floor.
struct CpuModel {
  int cores = 8;
  double idle_pct = 3;                  // of the whole replica
  double driver_cores_when_busy = 1.0;  // a core spinning on kernel launches while the GPU works
  double cpu_ms_per_request = 5;        // tokenization, HTTP, (de)serialization
  double utilization_pct(double busy_fraction, double requests_per_s) const;
};

struct ScalerConfig {
  ScalePolicy policy = ScalePolicy::queue_depth;
  double target = 1;              // cpu, duty_cycle: percent; queue_depth, concurrency: per replica
  int min_replicas = 1;           // 0 allows scale to zero
  int max_replicas = 100;
  int static_replicas = 1;        // static_peak
  double tolerance = 0.1;         // HPA: no change while |metric/target - 1| <= this
  double scale_up_window_s = 0;   // stabilization: the lowest recommendation over this window
  double scale_down_window_s = 300;  // stabilization: the highest recommendation over this window
  int scale_up_pods = 4;          // HPA default: per period, the larger of these two
  double scale_up_percent = 100;
  double scale_down_percent = 100;
  double period_s = 15;           // step limits apply per this period
  double keep_alive_s = 300;      // scale to zero after this long with no request (min 0 only)
  // A schedule beside the metric (KEDA's cron trigger): replicas by hour of the traffic's clock
  // (24 or 168 entries, repeating), each hour's count asked for schedule_lead_s before the hour
  // so that its replicas serve when it begins; the HPA takes the larger of schedule and metric.
  // Empty: none.
  std::vector<int> schedule;
  double schedule_lead_s = 0;
  CpuModel cpu;
};

class Autoscaler {
 public:
  explicit Autoscaler(ScalerConfig config) : config_(std::move(config)) {}
  int decide(const ScaleObservation& o);
  // The metric the policy reads, as the scaler saw it last (for reports).
  double last_metric() const { return last_metric_; }
  // Whether, fed these observations after the ones it has seen, it would keep each one's count
  // (ready + starting) every time. Asked of a copy: this scaler is unchanged. What lets a
  // simulation replay a steady stretch: the stretch's observations, again.
  bool would_hold(const std::vector<ScaleObservation>& again) const;
  // How many times the count would change over `scrapes_ahead` more scrapes like those of
  // `window` (the latest last, its count the current one): the window's metric, over its
  // target, taken as normal with the window's mean, spread and lag-1 correlation; a change
  // needs one scrape past the tolerance (up) or every scrape of the scale-down window low
  // (down). 0 for a fixed pool; infinite for a window of fewer than 8 scrapes.
  double expected_changes(const std::vector<ScaleObservation>& window, double scrapes_ahead) const;
  // The schedule's count at a traffic time (the most of the hours from then to the lead ahead),
  // and the traffic time until which that count holds; 0 and for ever without a schedule.
  int scheduled(double traffic_time_s) const;
  double schedule_holds_until(double traffic_time_s) const;

 private:
  int raw_desired(const ScaleObservation& o, int current);
  double metric(const ScaleObservation& o) const;              // in the policy's unit
  double ratio(const ScaleObservation& o, int current) const;  // metric over target (per replica for averages)
  ScalerConfig config_;
  std::deque<std::pair<double, int>> recommendations_;  // (time, desired) within the windows
  double last_request_s_ = 0;
  double last_metric_ = 0;
  bool seen_ = false;
};

}  // namespace gw
