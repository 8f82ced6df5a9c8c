// The run's running totals: requests by outcome, the latency histograms, and the areas under
// requests in the system, billed nodes and serving replicas over time. The report is made from
// them; a steady window's replay counts them again. Internal to src/sim.
#pragma once

#include "core/histogram.h"

namespace gw::sim_detail {

// What a replay added of what comes with requests.
struct RepeatedRequests {
  long long completed = 0, rejected = 0, timed_out = 0;
  double tokens_finished = 0;
  long long left() const { return completed + rejected + timed_out; }
};

struct SimTallies {
  long long admitted = 0, completed = 0, good = 0, rejected = 0, waited = 0, timed_out = 0;
  long long in_flight = 0, peak_in_flight = 0;
  long long held = 0;  // arrived while no replica was ready
  LogHistogram latency, wait, ttft, tpot;
  // On the traffic's clock (fast-forwarded stretches included).
  double first_arrival_s = 0, last_arrival_s = 0, last_completion_s = 0;
  // Integrals over the simulation's clock: requests x s, billed nodes x s, ready replicas x s;
  // the last two also as they stood at the last completion.
  double request_s = 0, billed_node_s = 0, serving_replica_s = 0;
  double billed_node_s_at_completion = 0, serving_replica_s_at_completion = 0;
  double tokens_finished = 0;  // LLM tokens of requests that left (completed or rejected)

  // Counts what happened since `before` again: what accrues with time `times` over, what comes
  // with requests `per_request` over (the replays' requests at the rate the traffic has then).
  // As many requests are admitted as leave, so requests in the system stay as they are.
  RepeatedRequests repeat_since(const SimTallies& before, long long times, double per_request);
};

}  // namespace gw::sim_detail
