// The utilization audit: findings with dollars attached (idle, idle on a schedule, under-used,
// VRAM oversized, busy but inefficient, insufficient data, healthy), cost attribution by a
// label with a Pareto view, and a summary that leads with what is recoverable.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "telemetry/aggregate.h"

namespace gw {

struct AuditOptions {
  double min_coverage_hours = 30;          // AWS Compute Optimizer's minimum
  std::optional<double> usd_per_gpu_hour;  // overrides the catalog price
  // The host VM's own price per hour, shared by the GPUs on that host (by the hostname or host
  // label): GPUs attached to a VM (GCP's N1 + T4) are priced apart from it.
  std::optional<double> host_usd_per_hour;
  std::string accelerator;                 // when the telemetry does not name the GPU model
  std::string offering;                    // the instance type that runs (p4de.24xlarge): its price, per GPU
                                           // (else each series' instance_type label, else the catalog's cheapest)
  std::string group_by;                    // label to attribute cost to (namespace, team, job, ...)
  double underused_pct = 50;
  double target_util_pct = 70;             // what consolidated GPUs may run at
  double starved_cpu_pct = 80;             // host CPU (not waiting on I/O) above this starves the GPU
  double starved_iowait_pct = 10;          // host CPU time waiting on I/O above this starves the GPU
  double host_cpu_headroom_pct = 80;       // how busy a right-sized host's CPUs may run
  // A series that reports for under this share of the log's span runs on a schedule (a nightly
  // job): its GPU is billed for the hours it reported, extrapolated to a month, unless always_on.
  double scheduled_below_share = 0.9;
  bool always_on = false;                  // price every GPU around the clock (a VM left up between runs)
};

struct Finding {
  std::string kind;       // idle, idle_schedule, starved, underused, vram_oversized, cheaper_per_run, inefficient, insufficient_data,
                          // bad_exporter, healthy
  std::string scope;      // the series or group
  std::string evidence;
  double waste_usd_per_month = 0;
  std::string recommendation;
  std::string confidence;  // high, medium, low
};

struct SeriesReport {
  std::string id;
  Labels labels;
  double mean_util_pct = 0, idle_fraction = 0, peak_memory_bytes = 0, p95_memory_bytes = 0, coverage_hours = 0;
  long long gaps = 0;               // intervals longer than 3x the series' median spacing
  double gap_hours = 0;             // their total length: not counted as observed
  long long out_of_range_samples = 0;
  double usd_per_month = 0;          // over the hours it is billed (billed_share of a 730-hour month)
  double billed_share = 1;           // of the month: 1 around the clock, else the share of the log it reported
  bool util_measured = true;         // false: memory samples only, no duty cycle (mean_util_pct means nothing)
  std::optional<double> usd_per_1k_inferences;  // when request rates are given
  std::optional<double> mean_sm_active, mean_tensor_active, mean_dram_active, mean_power_w;
  std::string price_source;                      // "p4de.24xlarge on demand", "given", or the catalog fallback
  std::optional<double> host_cpu_util_pct, host_iowait_pct;  // the host's CPU (own samples or node_exporter's)
  std::optional<int> host_cpus;
  std::vector<double> hour_of_week_util_pct;     // 168 values, Monday 00:00 first; -1 without data
  // The busiest of those hours that hold at least half the median hour's samples (a lone sample
  // at the log's edge is no hour's load); the mean where none does.
  double busiest_hour_util_pct = 0;
  std::string accelerator;
};

struct Attribution {
  std::string group;
  double usd_per_month = 0;
  double mean_util_pct = 0;
  int gpus = 0;
  std::vector<double> hour_of_week_idle_ratio;  // 168, Monday 00:00 first; -1 without data
};

struct AuditReport {
  double recoverable_usd_per_month = 0;
  double fleet_usd_per_month = 0;
  double mean_util_pct = 0;
  double idle_sample_fraction = 0;
  int gpus = 0;
  std::vector<SeriesReport> series;
  std::vector<Finding> findings;  // largest waste first
  std::vector<Attribution> attribution;
  double top20_cost_share = 0;    // share of cost in the top 20% of groups
  std::optional<double> usd_per_1k_inferences;  // fleet, when request rates are given
  int underused_gpus = 0;         // under-used (not idle) GPUs with enough data
  int underused_fit_on = 0;       // how many GPUs their work needs at the target utilization
  int priced_by_fallback = 0;     // series priced at the catalog's cheapest offering, not what runs
  int scheduled_gpus = 0;         // priced for the share of the log they reported (jobs on a schedule)
  int gpu_only_prices = 0;        // priced per GPU without the host VM the GPU is attached to (and no --host-usd-per-hour)
  double log_span_hours = 0;      // first to last sample of the input
  // When the fleet sits idle, by hour of the week (UTC, Monday 00:00 first; -1 without data): the
  // share of its duty-cycle samples under the idle threshold, and the dollars per hour its idle
  // GPUs cost then (each GPU's hourly price x its idle share in that hour of the week).
  std::vector<double> hour_of_week_idle_ratio, hour_of_week_idle_usd_per_hour;
  // The fleet's duty cycle by hour of the week: the mean over the GPUs with data then of their
  // mean duty cycle in that hour (-1 without data).
  std::vector<double> hour_of_week_util_pct;
  std::vector<std::string> assumptions;
};

Result<AuditReport> run_audit(const TelemetryAggregator& telemetry, const Catalog& catalog, const AuditOptions& options);

}  // namespace gw
