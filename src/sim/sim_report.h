// The run's report from its tallies, its series and its replicas: throughput, goodput and SLO
// attainment, Little's L, whether the run was overloaded (a queue growing over the last quarter
// of the arrivals, clients giving up, or a backlog left far behind) and each replica's duty
// cycle, KV use and mean batch. Billing is the simulation's (it runs the clock to the end of the
// accounted span). Internal to src/sim.
#pragma once

#include <vector>

#include "sim/recorder.h"
#include "sim/replica_state.h"
#include "sim/sim_tallies.h"
#include "sim/simulator.h"

namespace gw::sim_detail {

void fill_report(const SimTallies& tallies, const Recorder& recorder, const std::vector<ReplicaState>& replicas, SimResult& out);

// Stable or overloaded, from the marks (requests in the system at arrivals) and the last one.
void judge_overload(const SimTallies& tallies, const std::vector<Mark>& marks, const Mark& last, SimResult& out);

}  // namespace gw::sim_detail
