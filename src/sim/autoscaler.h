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
  CpuModel cpu;
};

class Autoscaler {
 public:
  explicit Autoscaler(ScalerConfig config) : config_(std::move(config)) {}
  int decide(const ScaleObservation& o);
  // The metric the policy reads, as the scaler saw it last (for reports).
  double last_metric() const { return last_metric_; }

 private:
  int raw_desired(const ScaleObservation& o, int current);
  ScalerConfig config_;
  std::deque<std::pair<double, int>> recommendations_;  // (time, desired) within the windows
  double last_request_s_ = 0;
  double last_metric_ = 0;
  bool seen_ = false;
};

}  // namespace gw
