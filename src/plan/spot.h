// Running a training job on interruptible capacity: checkpoint intervals (Young 1974; Daly 2006),
// the closed-form expected completion time under exponential preemptions, and a seeded Monte
// Carlo of completion time and cost, with exponential preemptions or replaying a real spot
// availability trace, for three policies: spot only, on-demand only, and deadline-aware spot
// that falls back to on-demand when progress falls behind the uniform-progress line (as in
// "Can't Be Late", Wu et al., NSDI 2024).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace gw {

// Warning a cloud gives before it reclaims a spot node (seconds; 0 where it sells none): the
// time a reclaimed serving replica has to finish what it holds.
struct ReclaimNotice {
  double seconds = 0;
  std::string_view source;
};
ReclaimNotice reclaim_notice(std::string_view cloud);

// Young's first-order optimum: sqrt(2 x checkpoint_s x mtbf_s).
double young_interval_s(double checkpoint_s, double mtbf_s);
// Daly's higher-order optimum (Daly 2006, eq. 37).
double daly_interval_s(double checkpoint_s, double mtbf_s);
// Daly's expected wall time for solve_s of work checkpointed every interval_s, with
// exponential failures of mean mtbf_s and restart_s after each (Daly 2006, eq. 20).
double expected_wall_time_s(double solve_s, double interval_s, double checkpoint_s, double restart_s, double mtbf_s);

struct SpotAvailability {
  double gap_s = 0;
  std::vector<unsigned char> available;  // 1 when capacity is there
};

// Reads {"metadata": {"gap_seconds": G}, "data": [0, 1, ...]} (skypilot-org/spot-traces).
Result<SpotAvailability> load_spot_trace(const std::string& path);

enum class SpotPolicy { spot_only, on_demand_only, deadline_aware };
std::string_view spot_policy_name(SpotPolicy policy);

struct SpotRunInputs {
  double work_s = 0;             // compute time without interruptions
  double checkpoint_s = 0;       // to write one checkpoint
  double restart_s = 0;          // provisioning plus reloading the last checkpoint
  double interval_s = 0;         // between checkpoints
  double preemptions_per_hour = 0;           // exponential model, when no trace
  const SpotAvailability* trace = nullptr;   // replayed from a random offset instead
  double spot_usd_per_hour = 0;  // whole job
  double on_demand_usd_per_hour = 0;
  std::optional<double> deadline_s;
};

struct SpotOutcome {
  SpotPolicy policy = SpotPolicy::spot_only;
  double mean_time_s = 0, p90_time_s = 0;
  double mean_usd = 0, p90_usd = 0;
  double mean_preemptions = 0;
  double deadline_met_fraction = 1;
  double on_demand_share = 0;  // of billed hours (deadline-aware)
  std::vector<double> times_s;  // each run's completion time, in run order (for distributions)
};

// Seeded Monte Carlo over runs (each run its own preemption sequence or trace offset).
SpotOutcome simulate_spot(const SpotRunInputs& inputs, SpotPolicy policy, int runs, unsigned long long seed);

}  // namespace gw
