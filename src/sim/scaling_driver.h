// The autoscaler's driver: at each scrape it reads the pool (counts by life, queue, duty cycle,
// rates) into a ScaleObservation, asks the scaler for a count, and says which replica slots
// wake, start, are cancelled or drain to meet it; it keeps the warm node pool; and it
// fast-forwards steady stretches: a window in which the pool kept its size and the load held is
// replayed as many whole times as the traffic's rate still holds. The simulation applies what it
// says (it owns the replicas' lives and the events). Internal to src/sim.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "sim/arrivals.h"
#include "sim/recorder.h"
#include "sim/replica_state.h"
#include "sim/request_router.h"
#include "sim/sim_tallies.h"
#include "sim/simulator.h"

namespace gw::sim_detail {

// Which slots change at a scrape, in the order they are applied.
struct ScaleActions {
  int current = 0;          // replicas ready or starting before the change
  std::vector<int> wake;    // draining slots that serve again (they are warm)
  std::vector<int> start;   // off slots started
  std::vector<int> cancel;  // starting slots cancelled, newest first
  std::vector<int> drain;   // ready slots drained, least loaded first
};

// A steady window replayed: how many times, its length on the simulation's clock, and the
// requests of the replays per request of the window.
struct Replay {
  long long times = 0;
  double length_s = 0;
  double per_request = 0;
};

// Where the traffic's clock stands and how far it goes.
struct TrafficSpan {
  double skip_s = 0;                        // the traffic's clock is the simulation's plus this
  double account_until_s = 1e18;            // ScalingOptions::account_until_s
  double max_duration_s = 1e18;             // SimOptions::max_duration_s
  std::optional<double> next_arrival_s;     // on the traffic's clock
};

// A replica's totals when a window opened: what a replay adds again.
struct ReplicaTotals {
  ReplicaStats stats;
  double kv_block_s = 0;
};

struct SteadyWindow {
  bool open = false;
  double start_s = 0;  // simulation clock
  SimTallies tallies;
  std::vector<ReplicaTotals> replicas;
  std::vector<ScaleSample> scrapes;        // the scrapes after it opened
  std::vector<ScaleObservation> observed;  // what the scaler saw at them
};

class ScalingDriver {
 public:
  explicit ScalingDriver(const ScalingOptions& options) : options_(options), warm_idle_(options.warm_pool) {}
  const ScalingOptions& options() const { return options_; }

  // The pool over the interval that ends at t; marks each ready replica's busy time as seen.
  // waiting_elsewhere: requests in no replica's queue (a shared queue, held for want of a replica).
  ScaleObservation observe(double t, std::span<ReplicaState> replicas, long long waiting_elsewhere, const SimTallies& tallies);
  // The scaler's count, clamped to [0, max_replicas]; a request in the system wakes a pool
  // scaled to zero (KEDA's activation step).
  int desired(const ScaleObservation& o, long long in_flight) const;
  // Which slots change to reach `desired` replicas: draining ones come back first, then off ones
  // start; fewer: starts are cancelled first (the newest), then the least loaded ready ones drain.
  // A replica is `lanes` consecutive slots, all of them listed, in order.
  // Slots are indices into the spans given (a pool's own slots, for scaled pools).
  static ScaleActions plan(int desired, std::span<const ReplicaState> replicas, std::span<const ReplicaLoad> loads, int lanes = 1);

  // The delay before a replica started now serves: a warm node's when one is idle (then
  // `refill` says whether a node is ordered to keep the warm pool full), else the full start.
  double start_delay(bool& refill);
  void node_ready() {
    --warm_pending_;
    ++warm_idle_;
  }
  // A stopped replica's node stays warm while the pool is short of its size.
  void keep_node_warm() {
    if (warm_nodes() < options_.warm_pool) ++warm_idle_;
  }
  int warm_nodes() const { return warm_idle_ + warm_pending_; }  // billed beside the replicas
  bool provisioning() const { return warm_pending_ > 0; }

  // At a scrape: a quiet one (the scaler kept the count, nothing starting or draining) extends
  // the steady window; once the window is long and full enough, the load in it steady and the
  // scaler would keep the count on its observations again, `replay` is called with as many
  // whole replays as the arrival rate still holds, and a new window opens.
  void consider_fast_forward(double t, bool quiet, const ScaleObservation& observed, const ScaleSample& scrape,
                             const TrafficSpan& span, const ArrivalProcess& arrivals, const SimTallies& tallies,
                             const std::vector<ReplicaState>& replicas, const std::function<void(const Replay&)>& replay);
  // What a replay adds beyond the tallies: the replicas' totals, the scrapes and samples of each
  // replay at their own times, marks, and the scaler's per-interval counts. t: now, on the
  // simulation's clock; skip_s: the traffic's clock ahead of it, before the replay.
  void replayed(const Replay& replay, double t, double skip_s, const RepeatedRequests& added, long long admitted_before,
                const SimTallies& tallies, std::vector<ReplicaState>& replicas, Recorder& recorder);
  const SteadyWindow& window() const { return window_; }

 private:
  void open_window(double t, const SimTallies& tallies, const std::vector<ReplicaState>& replicas);
  std::vector<ScaleObservation> twice_again(double length) const;

  const ScalingOptions& options_;
  int warm_idle_ = 0, warm_pending_ = 0;
  long long admitted_at_tick_ = 0, left_at_tick_ = 0;
  SteadyWindow window_;
};

}  // namespace gw::sim_detail
