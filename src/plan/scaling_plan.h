// Autoscaling policies compared on a service's time-varying traffic: the plan's best
// configuration as the replica, each policy simulated request by request over the traffic
// (trace, measured rates or a daily/weekly profile) with Kubernetes mechanics, and the cheapest
// policy that meets the SLO recommended. Costs are replica-hours billed (starting, serving,
// draining and warm nodes) at the plan's price per replica.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "k8s/cron_windows.h"
#include "plan/cold_start.h"
#include "plan/inference.h"
#include "plan/verify.h"
#include "sim/autoscaler.h"
#include "sim/simulator.h"

namespace gw {

struct PolicyOutcome {
  std::string name;
  std::string signal;             // what it scales on, in words
  double target = 0;              // in the signal's unit
  int min_replicas = 0, max_replicas = 0;
  double replica_hours = 0;       // billed nodes x hours
  double gpu_hours = 0;
  double usd = 0;                 // over the simulated span, as billed: a reserved floor every hour, the rest burst
  double reserved_replicas = 0;   // replicas priced at the plan's reserved rate around the clock (0: none reserved)
  double burst_replica_hours = 0; // replica-hours above that floor, at the burst rate
  double usd_per_month = 0;       // scaled to 730 hours
  std::optional<double> weekend_usd;  // Saturday and Sunday, when the traffic is a weekly profile
  double slo_attainment = 0;
  bool meets_slo = false;
  bool below_min_replicas = false;  // scales under the service's min_replicas (scale-to-zero): never recommended then
  long long requests = 0, cold_starts = 0, held_requests = 0, scale_events = 0;
  long long timed_out = 0;        // given up by their clients before service started (traffic.client_timeout_s)
  double latency_p99_s = 0, ttft_p99_s = 0;
  double mean_ready = 0;
  int peak_ready = 0;
  double fast_forwarded_s = 0;    // of the span, replayed from steady windows (ScalingPlanOptions::exact)
  // `scheduled`: replicas by hour of the traffic's clock (24 or 168), each asked for this long
  // before its hour (ScalerConfig::schedule); empty for the other policies.
  std::vector<int> schedule;
  double schedule_lead_s = 0;
  std::vector<ScaleSample> series;
  // A disaggregated layout's pools (prefill, then decode), each on its own scaler: its target,
  // counts and bill (the fields above are their sums; target is the prefill pool's).
  struct Pool {
    std::string role;
    double target = 0;
    int min_replicas = 0, max_replicas = 0, peak_ready = 0;
    double mean_ready = 0, replica_hours = 0, usd = 0;
    std::vector<int> schedule;  // `scheduled`: the pool's replicas by hour, asked schedule_lead_s ahead
  };
  std::vector<Pool> pools;
};

struct ScalingReport {
  std::string service;
  PlanOption plan;                // the replica type and its peak-provisioned count
  double usd_per_replica_hour = 0;        // at the plan's pricing
  // A reserved or committed plan pays its reservation every hour whether replicas run or not:
  // each policy reserves its floor (min replicas) and bursts above it at this rate (on demand).
  bool reserved = false;
  double burst_usd_per_replica_hour = 0;
  int service_min_replicas = 1;            // the availability floor plan enforces
  int gpus_per_replica = 1;
  double duration_s = 0;          // simulated span
  std::string traffic;            // where the demand came from
  bool hourly_profile = false;    // the traffic runs on an hourly curve (what `scheduled` follows)
  double weights_gib = 0, model_load_s = 0, start_s = 0, warm_start_s = 0;
  double capacity_rps_per_replica = 0;  // at the utilization limit
  // A disaggregated layout (plan.decode): its prefill and decode pools, priced each by its
  // replicas' GPUs; empty for one pool.
  struct Pool {
    std::string role;
    int tensor_parallel = 1, gpus_per_replica = 1;
    int peak_replicas = 0;  // the plan's count at peak
    double usd_per_replica_hour = 0, burst_usd_per_replica_hour = 0;
  };
  std::vector<Pool> pools;
  std::vector<PolicyOutcome> policies;
  // The outcome of the policy of this name; null when it was not run.
  const PolicyOutcome* policy(const std::string& name) const {
    for (const auto& p : policies)
      if (p.name == name) return &p;
    return nullptr;
  }
  int recommended = -1;           // index into policies; -1 when none meets the SLO
  std::vector<std::string> assumptions;
};

// Autoscaled runs and hourly demand curves cover at most this span (a year and a day).
constexpr double kMaxTrafficSpanS = 366 * 86400.0;

// Spans up to a day are simulated request by request unless asked otherwise: the answer is the
// exact one where that costs seconds to minutes; a week is where replaying steady stretches pays.
constexpr double kExactSpanS = 86400;

struct ScalingPlanOptions {
  const Calibration* calibration = nullptr;
  uint64_t seed = 1;
  double duration_s = 0;          // 0: the traffic's own span (trace, series, 24 h or 168 h profile; 1 h flat)
  int shapes = 0;                 // replica layouts to compare; 0: the spec's scaling.shapes
  int jobs = 0;                   // policies simulated at once (0: one per core); the same answer for any
  // Spans longer than kExactSpanS replay steady stretches (pool settled, rate holding, load
  // neither growing nor shrinking) from a window of >= 10 minutes and 20,000 requests instead
  // of simulating them (ScalingOptions::fast_forward); PolicyOutcome says how much. `exact`
  // simulates every request of any span; `fast_forward` replays on shorter spans too.
  bool exact = false;
  bool fast_forward = false;
  // Run `scheduled` too wherever the traffic runs on an hourly curve (a profile, or a peak above
  // the average), named or not; skipped on other traffic.
  bool scheduled_on_hourly_traffic = false;
  // Weigh disaggregated prefill and decode pools as `gpuwise plan` does: scaled as a layout of
  // their own where the plan picks them, the spec's deployment asks for them, or more layouts are
  // asked for than one-pool ones fill. Off: one-pool layouts only (plan_scaling).
  bool pools = true;
  // Called from the threads that simulate the policies (at once when jobs > 1).
  std::function<void(const std::string& policy, long long admitted)> on_progress;
};


// Policies on up to `shapes` replica layouts: the one-pool plan's, then the next cheapest distinct
// accelerator / tensor-parallel layouts, each at the fewest replicas the simulation accepts at
// peak (a pool of small replicas can follow demand more closely than one of large replicas), and
// disaggregated pools where ScalingPlanOptions::pools says.
struct ScalingStudy {
  std::vector<ScalingReport> shapes;  // the one-pool plan's layout first
  int best_shape = -1;                // whose recommended policy costs least; -1 when none meets the SLO
  int plan_shape = 0;                 // the layout `gpuwise plan` picks: the pools' where it picks them
};
Result<ScalingStudy> study_scaling(const Catalog& catalog, const Spec& spec, const ServiceSpec& service,
                                   const ScalingPlanOptions& options);

// The policies on one replica layout: a plan option the simulation verified at peak (its replicas
// are the static count), simulated with the verification's replica options.
Result<ScalingReport> scale_layout(const Catalog& catalog, const Spec& spec, const ServiceSpec& service,
                                   const ScalingPlanOptions& options, const PlanOption& replica, const VerifyOptions& verify);

// Where the spec's deployment splits prefill and decode into pools, what the one-pool layouts'
// reports add: that the disaggregated pools are a layout of their own in the study (or why
// none is). Empty for any other deployment.
std::string disaggregated_deployment_note(const ServiceSpec& service, const PlanOption* pools);

// The scheduled policy's schedule: every minute of its day or week at the count the simulated
// scaler asked then (its lead is whole minutes); as KEDA cron triggers, the runs above its floor.
std::vector<int> schedule_by_minute(const PolicyOutcome& scheduled);
std::vector<CronWindow> schedule_windows(const PolicyOutcome& scheduled);

// The one-pool plan's layout alone (planned and verified with default options).
Result<ScalingReport> plan_scaling(const Catalog& catalog, const Spec& spec, const ServiceSpec& service,
                                   const ScalingPlanOptions& options);

}  // namespace gw
