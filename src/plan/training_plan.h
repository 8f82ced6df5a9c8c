// Training runs across the catalog: every offering x device count x pricing, with time, GPU-hours
// and cost per run (spot with checkpoints at Daly's interval, its expected overhead in closed
// form), filtered by a deadline; the cheapest and a time-cost Pareto set.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/spot.h"
#include "plan/training.h"

namespace gw {

struct SpotSettings {
  double preemptions_per_hour = 0.1;  // labelled assumption when neither a rate nor a trace is given
  bool rate_assumed = true;
  const SpotAvailability* trace = nullptr;
  double storage_gbps = 10;           // checkpoint write/read bandwidth per node
  double provisioning_s = 300;        // to get replacement capacity and start the job again
  double start_s_per_doubling = 20;   // job start (rendezvous, NCCL communicators) per doubling of nodes, assumed
  std::optional<double> interval_s;   // checkpoint interval; default Daly's optimum
};

struct TrainingCandidate {
  const Offering* offering = nullptr;
  int instances = 0;
  int devices = 0;
  Pricing pricing = Pricing::on_demand;
  TrainingEstimate estimate;
  double checkpoint_s = 0, restart_s = 0, checkpoint_interval_s = 0;
  double daly_interval_s = 0;   // the optimum for comparison when the interval is given
  double expected_time_s = 0;   // with preemptions (spot) and checkpoint writes
  double usd = 0;               // expected cost per run
  double usd_per_hour = 0;      // all instances
  double preemptions_per_hour = 0;  // of the whole job: any node's preemption stops a synchronous job
};

// Preemptions per hour of one node: the given rate, or the trace's rate of losing capacity per
// hour it was available.
double node_preemptions_per_hour(const SpotSettings& spot);

// Node counts searched when none are given: every count to 16 nodes, then eight steps per
// doubling (16, 17, 19, 21, 23, 25, 27, 29, 32, ...), up to max_nodes; the deadline search then
// fills in every count between the last that misses the deadline and the first that meets it.
std::vector<int> node_count_grid(int max_nodes);

// Runs whose expected cost is within this share of the cheapest count as equal: of those, the
// one on the fewest nodes wins (less to fail, less to start).
inline constexpr double kEqualCostTolerance = 0.01;

struct TrainingPlan {
  bool feasible = false;
  std::string binding;
  std::string choice;                      // why the best won when it was not the cheapest
  std::optional<TrainingCandidate> best;
  std::vector<TrainingCandidate> pareto;  // time-cost frontier, cheapest first
  long long candidates = 0;
  long long skipped_no_fabric = 0;         // multi-node candidates on offerings without a fabric
};

struct TrainingSearch {
  std::vector<std::string> clouds, regions;
  std::vector<const Accelerator*> accelerators;  // empty: all
  std::vector<Pricing> pricing = {Pricing::on_demand};
  bool interruptible = false;                     // spot allowed
  std::optional<double> deadline_s;
  std::vector<int> device_counts;                 // empty: whole nodes by node_count_grid, up to max_devices
  int max_devices = 4096;
  const Calibration* calibration = nullptr;
  // Multi-node jobs on offerings without an RDMA-class fabric (EFA, InfiniBand, RoCE, TCPX) or a
  // TPU slice's ICI: off unless asked for (they exist, but the network dominates).
  bool allow_unfabric_clusters = false;
  bool cross_zone = false;  // nodes spread over zones (no placement group): half the bandwidth
};

// Fills the spot and checkpoint fields of a candidate (time and cost per run).
void price_candidate(TrainingCandidate& candidate, const SpotSettings& spot);

TrainingPlan plan_training(const Catalog& catalog, const TrainingJob& job, const TrainingSearch& search,
                           const SpotSettings& spot);

// Network facts of an offering for the time model (unknown network: 100 Gbps, no fabric).
TrainingHardware hardware_of(const Offering& offering, const Accelerator& accelerator, int devices);

}  // namespace gw
