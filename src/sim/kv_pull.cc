// KV pulled between steps, as DistServe's decoding engine moves it (distserve/single_stage_engine.py
// and decoding_stage_scheduler.py at LLMServe/DistServe 20a1633, read 2026-12-06): after each
// step the engine accepts the requests whose prompts are done, and for each in turn it asks its
// workers to copy the blocks and awaits them before it launches the next step. Its workers take
// calls in order, so on a replica of pipeline stages the copy waits behind the micro-batch in
// flight and the pipeline drains. The requests pulled join the micro-batch whose step ended.
#include <algorithm>

#include "sim/simulation.h"

namespace gw::sim_detail {

bool Simulation::pull_waiting_kv(ReplicaState& r, double t) {
  const ReplicaConfig& c = *r.config;
  if (c.role != ReplicaRole::decode) return false;
  // The engine is one for all its micro-batches: what waits on a sibling lane is pulled here.
  const size_t head = pipeline_head_[r.index];
  for (size_t lane = head; lane < head + static_cast<size_t>(c.pipeline_lanes) && lane < replicas_.size(); ++lane) {
    if (lane == r.index) continue;
    ReplicaState& other = replicas_[lane];
    for (auto it = other.waiting.begin(); it != other.waiting.end();) {
      const int id = *it;
      if (!pool_[id].kv_to_pull) {
        ++it;
        continue;
      }
      it = other.waiting.erase(it);
      unassign(id, other);
      assign(id, static_cast<int>(r.index));
    }
  }
  // Each waiting request whose blocks fit beside those pulled before it (DistServe allocates them
  // as it pulls), oldest first: its transfer over the slower end (the prefill replica's link, or
  // the decode replica's, every stage taking its own layers) and the call.
  const double receive_bytes_per_s = c.kv_link_bytes_per_s * c.pipeline_lanes;
  double pull_s = 0;
  long long blocks = 0;
  std::vector<int> pulled;
  for (const int id : r.waiting) {
    Request& q = pool_[id];
    if (q.kv_arrived <= 0) continue;  // preempted here: computed again, nothing to pull
    blocks += r.kv.blocks_for(q.kv_arrived);
    if (!q.kv_to_pull) continue;  // pulled, waiting to join
    if (blocks > r.kv.free_blocks()) break;
    const double receive_s = receive_bytes_per_s > 0 ? c.kv_bytes_per_token_replica * q.kv_arrived / receive_bytes_per_s : 0;
    pull_s += std::max(q.kv_pull_s, receive_s) + c.kv_pull_call_s;
    q.kv_to_pull = false;
    pulled.push_back(id);
  }
  if (pulled.empty()) return false;
  double start = t;
  if (c.pipeline_lanes > 1) {
    std::vector<double>& free_at = stage_free_at_[head];
    for (const double stage_free : free_at) start = std::max(start, stage_free);
    for (double& stage_free : free_at) stage_free = start + pull_s;
  }
  const double done = start + pull_s;
  for (const int id : pulled) result_.kv_transfer_wait.add(done - pool_[id].kv_ready_at);
  result_.kv_pull_stall_s += done - t;
  r.busy = true;
  push({done, static_cast<int>(EventKind::kv_pull_done), static_cast<int>(r.index), 0, 0});
  return true;
}

void Simulation::on_kv_pull_done(int index, double t) {
  ReplicaState& r = replicas_[static_cast<size_t>(index)];
  r.busy = false;
  try_start(index, t);
  maybe_stop(r);
}

}  // namespace gw::sim_detail
