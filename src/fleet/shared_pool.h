// Projects on a shared GPU pool: scheduled jobs (cron and a duration) and always-on services
// (with an optional daily peak window) laid on a minute timeline over four weeks. Static
// allocation (each project keeps its GPUs around the clock) against one elastic pool: peak,
// average, cost, and the start-time shifts that lower the pool's peak.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "spec/spec.h"

namespace gw {

struct PoolShift {
  std::string project;
  int hours = 0;        // later when positive
};

struct SharedPoolReport {
  int days = 28;
  int static_gpus = 0;              // the projects' own allocations, summed
  int static_cover_gpus = 0;        // the same with each always-on project at its peak
  int pool_peak_gpus = 0;
  double pool_average_gpus = 0;
  double usd_per_gpu_hour = 0;
  double static_usd_per_month = 0;  // static_gpus around the clock
  double pool_usd_per_month = 0;    // the pool's GPU-hours, paid as used
  double pool_fixed_usd_per_month = 0;  // a pool of peak size around the clock
  std::vector<PoolShift> shifts;    // moves that lower the peak (empty: none does)
  int shifted_peak_gpus = 0;
  std::vector<int> hourly_peak;             // every hour of the span: the most GPUs busy in it
  std::vector<int> week_peak_by_hour;       // 168 values: the most GPUs busy in each hour of the week
  std::vector<int> shifted_week_peak_by_hour;
  std::vector<std::string> assumptions;
};

struct SharedPoolOptions {
  double usd_per_gpu_hour = 0;
  int max_shift_hours = 12;
  int days = 28;  // from Monday 2026-11-02 (UTC)
};

Result<SharedPoolReport> plan_shared_pool(const std::vector<FleetProjectSpec>& projects, const SharedPoolOptions& options);

}  // namespace gw
