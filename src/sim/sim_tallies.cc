#include "sim/sim_tallies.h"

#include <cmath>

namespace gw::sim_detail {

RepeatedRequests SimTallies::repeat_since(const SimTallies& before, long long times, double per_request) {
  latency.repeat_since(before.latency, per_request);
  wait.repeat_since(before.wait, per_request);
  ttft.repeat_since(before.ttft, per_request);
  tpot.repeat_since(before.tpot, per_request);
  auto more = [per_request](long long now, long long then) {
    return static_cast<long long>(std::llround(per_request * static_cast<double>(now - then)));
  };
  RepeatedRequests added;
  added.completed = more(completed, before.completed);
  added.rejected = more(rejected, before.rejected);
  added.timed_out = more(timed_out, before.timed_out);
  completed += added.completed;
  rejected += added.rejected;
  timed_out += added.timed_out;
  good += more(good, before.good);
  waited += more(waited, before.waited);
  held += more(held, before.held);
  admitted += added.left();
  const double td = static_cast<double>(times);
  request_s += td * (request_s - before.request_s);
  billed_node_s += td * (billed_node_s - before.billed_node_s);
  serving_replica_s += td * (serving_replica_s - before.serving_replica_s);
  billed_node_s_at_completion = billed_node_s;
  serving_replica_s_at_completion = serving_replica_s;
  added.tokens_finished = per_request * (tokens_finished - before.tokens_finished);
  tokens_finished += added.tokens_finished;
  return added;
}

}  // namespace gw::sim_detail
