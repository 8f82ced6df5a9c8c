// How the pool changes under the requests: the autoscaler's ticks applied (slots woken, started,
// cancelled, drained, and steady windows replayed), replicas becoming ready and stopping, and
// nodes lost to outages with their work handed on.
#include <algorithm>

#include "sim/simulation.h"

namespace gw::sim_detail {

// A replica serves (again): its duty cycle is measured from now.
void Simulation::serve_again(ReplicaState& r, double t) {
  set_life(r, Life::ready);
  ++ready_;
  r.observed_since = t;
  r.busy_observed = r.stats.busy_s + (r.busy ? t - r.step_started : 0);
}

// The scaler's answer (`desired`) and the changes that meet it, slots counted from `first_slot`
// (a pool's; 0 for one pool), its replicas `lanes_` slots each; `pool`: the pool's index (-1 for
// one pool).
void Simulation::apply_scale_actions(int desired, const ScaleActions& actions, int first_slot, ScalingDriver& driver, int pool,
                                     double t) {
  const ScalingOptions& s = driver.options();
  const int lanes = pool < 0 ? lanes_ : 1;
  if (desired > actions.current) {
    if (actions.current == 0) ++result_.cold_starts;
    ++result_.scale_ups;
  } else if (desired < actions.current) {
    ++result_.scale_downs;
  }
  for (int i : actions.wake) {
    serve_again(replicas_[static_cast<size_t>(first_slot + i)], t);
    dispatch_held(t);
  }
  // A replica's lanes start together: one delay (its nodes come up side by side), one event.
  for (size_t k = 0; k < actions.start.size(); k += static_cast<size_t>(lanes)) {
    const int first = first_slot + actions.start[k];
    bool refill = false;
    const double delay = driver.start_delay(refill);
    if (refill) push({t + s.node_provisioning_s, static_cast<int>(EventKind::node_ready), pool, 0, 0});
    for (int lane = 0; lane < lanes; ++lane) {
      auto& r = replicas_[static_cast<size_t>(first + lane)];
      set_life(r, Life::starting);
      ++nodes_;
      if (pool >= 0) ++pools_[static_cast<size_t>(pool)].nodes;
      ++r.life_version;
    }
    push({t + delay, static_cast<int>(EventKind::replica_ready), first, 0, replicas_[static_cast<size_t>(first)].life_version});
  }
  for (int i : actions.cancel) {
    auto& r = replicas_[static_cast<size_t>(first_slot + i)];
    r.life_version++;
    stop(r);
  }
  for (int i : actions.drain) {
    auto& r = replicas_[static_cast<size_t>(first_slot + i)];
    set_life(r, Life::draining);
    --ready_;
    maybe_stop(r);
  }
}

// Disaggregated pools: each on its own scaler, fed its own replicas' observations. A prefill
// pool's queue is the prompts waiting for it (and arrivals held while none was ready); a decode
// pool's, the requests whose KV waits for it; what each holds beyond its queue is in service.
void Simulation::on_pools_scale_tick(double t) {
  give_up_expired(t);
  ScaleSample sample;
  sample.time_s = t + skip_;
  double busy = 0;
  for (size_t p = 0; p < pools_.size(); ++p) {
    PoolSlots& pool = pools_[p];
    const auto first = static_cast<size_t>(pool.first), count = static_cast<size_t>(pool.count);
    const bool prefill = replicas_[first].config->role == ReplicaRole::prefill;
    const auto elsewhere = static_cast<long long>(prefill ? shared_.size() + held_.size() : decode_held_.size());
    ScaleObservation o = pool.driver->observe(t, std::span<ReplicaState>(replicas_).subspan(first, count), elsewhere, tallies_);
    long long outstanding = 0;
    for (size_t i = first; i < first + count; ++i) outstanding += loads_[i].outstanding;
    o.in_service = std::max(0LL, outstanding - (o.waiting - elsewhere));
    o.traffic_time_s = t + skip_;
    const int desired = pool.driver->desired(o, tallies_.in_flight);
    const ScaleActions actions = ScalingDriver::plan(desired, std::span<const ReplicaState>(replicas_).subspan(first, count),
                                                     std::span<const ReplicaLoad>(loads_).subspan(first, count));
    apply_scale_actions(desired, actions, pool.first, *pool.driver, static_cast<int>(p), t);
    int ready = 0, starting = 0;
    for (size_t i = first; i < first + count; ++i) {
      ready += replicas_[i].life == Life::ready;
      starting += replicas_[i].life == Life::starting;
    }
    sample.pool_ready.push_back(ready);
    sample.ready += ready;
    sample.starting += starting;
    sample.desired += desired;
    sample.billed += pool.billed();
    sample.waiting += o.waiting;
    sample.arrival_rps = o.arrival_rps;
    busy += o.busy_fraction * o.ready;
  }
  sample.busy_fraction = sample.ready > 0 ? busy / sample.ready : 0;
  recorder_.record_scale(sample);
  const ScalingOptions& s = scaling_->options();
  if (arrivals_open_ || tallies_.in_flight > 0 || (account_until_ < 1e17 && t + s.interval_s <= account_until_ - skip_))
    push({t + s.interval_s, static_cast<int>(EventKind::scale_tick), -1, 0, 0});
}

// Autoscaling: what the pool looked like over the last interval, the scaler's answer, and
// replicas started or stopped to meet it.
void Simulation::on_scale_tick(double t) {
  if (!pools_.empty()) return on_pools_scale_tick(t);
  ScalingDriver& driver = *scaling_;
  const ScalingOptions& s = driver.options();
  give_up_expired(t);
  ScaleObservation o = driver.observe(t, replicas_, static_cast<long long>(shared_.size() + held_.size()), tallies_);
  o.traffic_time_s = t + skip_;
  const int desired = driver.desired(o, tallies_.in_flight);
  const ScaleActions actions = ScalingDriver::plan(desired, replicas_, loads_, lanes_);
  apply_scale_actions(desired, actions, 0, driver, -1, t);
  ScaleSample sample;
  sample.time_s = t + skip_;
  sample.ready = ready_ / lanes_;
  int draining = 0;
  for (const auto& r : replicas_) {
    if (r.life == Life::starting) ++sample.starting;
    if (r.life == Life::draining) ++draining;
  }
  sample.starting /= lanes_;
  sample.desired = desired;
  sample.billed = billed_nodes();
  sample.arrival_rps = o.arrival_rps;
  sample.waiting = o.waiting;
  sample.busy_fraction = o.busy_fraction;
  recorder_.record_scale(sample);
  // The pool keeps being watched (and billed) to the end of the accounted span.
  if (arrivals_open_ || tallies_.in_flight > 0 || (account_until_ < 1e17 && t + s.interval_s <= account_until_ - skip_))
    push({t + s.interval_s, static_cast<int>(EventKind::scale_tick), -1, 0, 0});
  if (s.fast_forward) {
    const bool quiet = desired == actions.current && sample.starting == 0 && draining == 0 && !driver.provisioning() &&
                       ready_ > 0 && held_.empty() && arrivals_open_;
    TrafficSpan span;
    span.skip_s = skip_;
    span.account_until_s = account_until_;
    span.max_duration_s = options_.max_duration_s;
    if (pending_) span.next_arrival_s = pending_->time_s;
    driver.consider_fast_forward(t, quiet, o, sample, span, arrivals_, tallies_, replicas_,
                                 [&](const Replay& replay) { replay_window(t, replay); });
  }
}

// Counts the steady window again and moves the clock and the arrivals on by its replays: what
// accrues with time (billing, busy time, steps, scrapes) `times` over, what comes with requests
// (completions, latencies, tokens) `per_request` over. Requests in the system stay as they are
// (the replays' net change is none, so every request admitted is still completed, rejected or
// in flight exactly once).
void Simulation::replay_window(double t, const Replay& replay) {
  const long long admitted_before = tallies_.admitted;
  const RepeatedRequests added = tallies_.repeat_since(scaling_->window().tallies, replay.times, replay.per_request);
  steps_.add_tokens_emitted(added.tokens_finished);
  scaling_->replayed(replay, t, skip_, added, admitted_before, tallies_, replicas_, recorder_);
  const double skipped = static_cast<double>(replay.times) * replay.length_s;
  skip_ += skipped;
  tallies_.last_arrival_s += skipped;
  tallies_.last_completion_s += skipped;
  if (pending_) pending_->time_s += skipped;
  arrivals_.skip(skipped);
  recorder_.set_last_mark({t + skip_, tallies_.in_flight, tallies_.admitted, tallies_.timed_out});
  result_.fast_forwarded_s += skipped;
  result_.fast_forward_replays += replay.times;
  if (options_.on_progress) options_.on_progress(tallies_.admitted);
}

void Simulation::on_replica_ready(int index, unsigned version, double t) {
  if (replicas_[static_cast<size_t>(index)].life != Life::starting || replicas_[static_cast<size_t>(index)].life_version != version)
    return;
  for (int lane = index; lane < index + lanes_; ++lane) serve_again(replicas_[static_cast<size_t>(lane)], t);
  dispatch_held(t);
  if (options_.router == Router::shared_queue)
    for (int lane = index; lane < index + lanes_; ++lane) try_start(lane, t);
}

// Requests that arrived while no replica was ready go out as soon as one is; prompts whose KV
// waited for a decode replica go to one.
void Simulation::dispatch_held(double t) {
  while (!decode_held_.empty() && decode_replica_ready()) {
    const int id = decode_held_.front();
    decode_held_.pop_front();
    send_kv_to_decode(id, t);
  }
  while (!held_.empty()) {
    int id = held_.front();
    int replica = route(id);
    if (replica < 0) return;
    held_.pop_front();
    if (expired(pool_[id], t)) {
      give_up(id, nullptr);
      continue;
    }
    assign(id, replica);
    try_start(replica, t);
  }
}

// A draining replica stops (and stops being billed) once it holds no work.
void Simulation::maybe_stop(ReplicaState& r) {
  // A prefill replica also keeps the KV of prompts no decode replica has taken yet.
  auto drained = [&](const ReplicaState& lane) {
    return lane.life == Life::draining && loads_[lane.index].outstanding == 0 && !lane.busy &&
           (lane.config->role != ReplicaRole::prefill || lane.kv.used_blocks() == 0);
  };
  if (lanes_ == 1) {
    if (drained(r)) stop(r);
    return;
  }
  // A replica's nodes go when its last lane has drained.
  const int first = group_start(static_cast<int>(r.index));
  for (int lane = first; lane < first + lanes_; ++lane)
    if (!drained(replicas_[static_cast<size_t>(lane)])) return;
  for (int lane = first; lane < first + lanes_; ++lane) stop(replicas_[static_cast<size_t>(lane)]);
}

void Simulation::stop(ReplicaState& r) {
  set_life(r, Life::off);
  --nodes_;
  if (PoolSlots* pool = pool_of(r.index)) {
    --pool->nodes;
    if (r.outage < 0) pool->driver->keep_node_warm();
  }
  r.prefix.clear();  // holds nothing pinned now; the next process on this slot starts cold
  if (r.outage >= 0) {
    OutageResult& o = result_.outages[static_cast<size_t>(r.outage)];
    o.drained_s = std::max(o.drained_s, now_ - o.at_s);
    return;
  }
  if (scaling_ && pools_.empty() && static_cast<int>(r.index) % lanes_ == 0) scaling_->keep_node_warm();  // once a replica
}

// A node is reclaimed: its replicas stop taking work, hand on what they had not started, and
// finish what they hold.
void Simulation::on_outage(int index, double t) {
  OutageResult& o = result_.outages[static_cast<size_t>(index)];
  std::vector<int> moved;
  for (int i : options_.outages[static_cast<size_t>(index)].replicas) {
    auto& r = replicas_[static_cast<size_t>(i)];
    if (r.life != Life::ready) continue;
    set_life(r, Life::draining);
    r.outage = index;
    --ready_;
    for (int id : r.waiting) {
      unassign(id, r);
      // Pulled or not, the next decode replica pulls its KV from the prefill replica, which holds it.
      if (r.config->kv_pulled_between_steps && pool_[id].kv_arrived > 0) pool_[id].kv_to_pull = true;
      moved.push_back(id);
    }
    r.waiting.clear();
    maybe_stop(r);
  }
  o.rerouted += static_cast<long long>(moved.size());
  for (int id : moved) {
    if (pool_[id].kv_arrived > 0) {
      send_kv_to_decode(id, t);  // a decode replica's: its KV goes to another decode replica
      continue;
    }
    if (int replica = place(id); replica >= 0) try_start(replica, t);
  }
  if (options_.router == Router::shared_queue)
    for (size_t i = 0; i < replicas_.size(); ++i)
      if (replicas_[i].life == Life::ready) try_start(static_cast<int>(i), t);
}

// The replacement node serves in the lost replicas' slots.
void Simulation::on_outage_over(int index, double t) {
  for (int i : options_.outages[static_cast<size_t>(index)].replicas) {
    auto& r = replicas_[static_cast<size_t>(i)];
    if (r.outage != index) continue;
    if (r.life == Life::off) {
      ++nodes_;
      if (PoolSlots* pool = pool_of(r.index)) ++pool->nodes;
    }
    r.outage = -1;
    serve_again(r, t);
    dispatch_held(t);
    try_start(i, t);
  }
}

}  // namespace gw::sim_detail
