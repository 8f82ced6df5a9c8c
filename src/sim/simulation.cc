#include "sim/simulation.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/cancel.h"
#include "sim/sim_report.h"

namespace gw::sim_detail {

Simulation::Simulation(ArrivalProcess& arrivals, const std::vector<ReplicaConfig>& configs, const SimOptions& options)
    : arrivals_(arrivals), options_(options), rng_(options.seed ^ 0x9e3779b97f4a7c15ULL),
      router_(make_request_router(options.router, options.seed ^ 0x2545f4914f6cdd1dULL, options.router_instances)),
      decode_router_(make_request_router(options.decode_router, options.seed ^ 0x6a09e667f3bcc909ULL, options.router_instances)), recorder_(options.timeseries_points),
      steps_(pool_, *this, options.step_sample_every, result_.step_samples) {
  auto add = [&](const ReplicaConfig& config, std::string name, Life life) {
    ReplicaState r;
    r.config = &config;
    r.index = replicas_.size();
    r.life = life;
    if (is_llm(config)) {
      r.scheduler = &llm_step_scheduler(config.scheduler);
    } else {
      r.batcher = make_classic_batcher(config.batching, config.max_batch,
                                       config.batching == SimBatching::static_batch ? config.batch_timeout_s
                                                                                    : config.max_queue_delay_s);
    }
    loads_.push_back({life == Life::ready, 0, 0});
    // build_replicas and the scaler lay a replica's lanes out consecutively, from its first.
    const size_t lanes = static_cast<size_t>(std::max(1, config.pipeline_lanes));
    const bool first_lane = lanes == 1 || r.index == 0 || replicas_.back().config->pipeline_lanes != config.pipeline_lanes ||
                            replicas_.back().config->role != config.role || r.index - pipeline_head_.back() >= lanes;
    pipeline_head_.push_back(first_lane ? r.index : pipeline_head_.back());
    stage_free_at_.emplace_back(first_lane && lanes > 1 ? lanes : 0, 0.0);
    r.kv = KvCache(config.kv_blocks, config.block_tokens, config.kv_groups);
    if (!first_lane && config.lanes_share_kv) r.kv.share_pool_with(replicas_[pipeline_head_.back()].kv);
    r.prefix = PrefixCache(config.prefix_caching == PrefixCaching::in_kv, config.prefix_room_tokens);
    r.stats.name = std::move(name);
    r.stats.batch_sizes.assign(static_cast<size_t>(std::max(1, config.max_batch)) + 1, 0);
    replicas_.push_back(std::move(r));
  };
  for (const auto& config : configs) disaggregated_ = disaggregated_ || config.role != ReplicaRole::both;
  if (options_.scaling && !options_.scaling->pools.empty()) {
    // Disaggregated pools: each config's replicas (one lane each) in slots of their own.
    const ScalingOptions& s = *options_.scaling;
    pools_ = std::vector<PoolSlots>(s.pools.size());
    for (size_t p = 0; p < s.pools.size(); ++p) {
      PoolSlots& pool = pools_[p];
      pool.options = s;
      pool.options.pools.clear();
      pool.options.max_replicas = s.pools[p].max_replicas;
      pool.options.initial_replicas = s.pools[p].initial_replicas;
      pool.options.decide = s.pools[p].decide;
      pool.options.lanes_per_replica = 1;
      pool.options.fast_forward = false;
      pool.first = static_cast<int>(replicas_.size());
      pool.count = s.pools[p].max_replicas;
      pool.nodes = s.pools[p].initial_replicas;
      for (int i = 0; i < pool.count; ++i)
        add(configs[p], fmt::format("{}#{}", configs[p].name, i + 1), i < pool.nodes ? Life::ready : Life::off);
      ready_ += pool.nodes;
      pool.driver.emplace(pool.options);
    }
    nodes_ = ready_;
    link_free_at_.assign(replicas_.size(), 0.0);
    account_until_ = s.account_until_s;
    scaling_.emplace(s);
  } else if (options_.scaling) {
    const ScalingOptions& s = *options_.scaling;
    lanes_ = std::max(1, s.lanes_per_replica);
    link_free_at_.assign(static_cast<size_t>(s.max_replicas * lanes_), 0.0);
    for (int i = 0; i < s.max_replicas; ++i)
      for (int lane = 0; lane < lanes_; ++lane) {
        const ReplicaConfig& c = configs[static_cast<size_t>(lane) % configs.size()];
        add(c, lanes_ > 1 ? fmt::format("{} #{}", c.name, i + 1) : fmt::format("{}#{}", c.name, i + 1),
            i < s.initial_replicas ? Life::ready : Life::off);
      }
    ready_ = nodes_ = s.initial_replicas * lanes_;
    account_until_ = s.account_until_s;
    scaling_.emplace(s);
  } else {
    link_free_at_.assign(configs.size(), 0.0);
    for (const auto& config : configs) add(config, config.name, Life::ready);
    ready_ = nodes_ = static_cast<int>(configs.size());
  }
}

Result<SimResult> Simulation::run() {
  pending_ = arrivals_.next();
  if (!pending_) {
    if (auto e = arrivals_.error()) return *e;
    return Error{"", 0, "", "the arrival process produced no requests"};
  }
  tallies_.first_arrival_s = pending_->time_s;
  push({pending_->time_s, static_cast<int>(EventKind::arrival), -1, 0, 0});
  if (scaling_) push({scaling_->options().interval_s, static_cast<int>(EventKind::scale_tick), -1, 0, 0});
  if (options_.client_timeout_s > 0)
    push({tallies_.first_arrival_s + expire_every(), static_cast<int>(EventKind::expire), -1, 0, 0});
  for (size_t i = 0; i < options_.outages.size(); ++i) {
    const ReplicaOutage& o = options_.outages[i];
    OutageResult out;
    out.at_s = o.at_s;
    out.replaced_s = o.replacement_s;
    result_.outages.push_back(out);
    push({o.at_s, static_cast<int>(EventKind::outage), static_cast<int>(i), 0, 0});
    push({o.at_s + o.replacement_s, static_cast<int>(EventKind::outage_over), static_cast<int>(i), 0, 0});
  }
  long long events_done = 0;
  while (!events_.empty()) {
    // A caller that gave up (Ctrl-C in Python) stops the run; its entry point reports so.
    if ((++events_done & 0xFFFF) == 0 && cancel_requested()) break;
    const Event e = events_.pop();
    advance(e.time);
    switch (static_cast<EventKind>(e.kind)) {
      case EventKind::arrival: on_arrival(e.time); break;
      case EventKind::step_done: on_step_done(e.replica, e.time); break;
      case EventKind::timeout:
        if (e.version == replicas_[static_cast<size_t>(e.replica)].timer_version) try_start(e.replica, e.time);
        break;
      case EventKind::sample: break;
      case EventKind::scale_tick: on_scale_tick(e.time); break;
      case EventKind::replica_ready: on_replica_ready(e.replica, e.version, e.time); break;
      case EventKind::node_ready: (pools_.empty() ? *scaling_ : *pools_[static_cast<size_t>(e.replica)].driver).node_ready(); break;
      case EventKind::outage: on_outage(e.replica, e.time); break;
      case EventKind::outage_over: on_outage_over(e.replica, e.time); break;
      case EventKind::kv_arrived: on_kv_arrived(e.replica, e.version, e.time); break;
      case EventKind::kv_pull_done: on_kv_pull_done(e.replica, e.time); break;
      case EventKind::kv_released:  // a prefill replica with room again, or a draining one done
        try_start(e.replica, e.time);
        maybe_stop(replicas_[static_cast<size_t>(e.replica)]);
        break;
      case EventKind::expire:
        give_up_expired(e.time);
        if (arrivals_open_ || tallies_.in_flight > 0)
          push({e.time + expire_every(), static_cast<int>(EventKind::expire), -1, 0, 0});
        break;
    }
    if (options_.check_invariants) {
      check_invariants();
      const SimTallies& c = tallies_;
      if (c.completed + c.rejected + c.timed_out + c.in_flight != c.admitted)
        violated(fmt::format("{} completed + {} rejected + {} timed out + {} in flight != {} admitted", c.completed, c.rejected,
                             c.timed_out, c.in_flight, c.admitted));
      if (!invariant_error_.empty()) return Error{"", 0, "simulator invariant", invariant_error_};
    }
  }
  if (options_.check_invariants && tallies_.in_flight != 0)
    return Error{"", 0, "simulator invariant", fmt::format("{} requests never completed ({})", tallies_.in_flight, stuck())};
  if (auto e = arrivals_.error()) return *e;
  return finish();
}

void Simulation::on_arrival(double t) {
  Request r;
  r.arrival = t;
  r.input = pending_->input_tokens;
  r.output = std::max(1.0, pending_->output_tokens);
  r.prompt = r.input;
  r.arrival_order = tallies_.admitted;
  int id = pool_.add(r);
  if (!pending_->prefix_block_ids.empty())
    pool_.set_chain(id, std::move(pending_->prefix_block_ids), pending_->prefix_block_tokens,
                    std::move(pending_->prefix_block_ends));
  int replica = place(id);
  ++tallies_.admitted;
  if ((tallies_.admitted & 0xFFFF) == 0 && options_.on_progress) options_.on_progress(tallies_.admitted);
  tallies_.last_arrival_s = t + skip_;
  ++tallies_.in_flight;
  tallies_.peak_in_flight = std::max(tallies_.peak_in_flight, tallies_.in_flight);
  mark(t);
  sample(t);
  arrivals_open_ = false;
  if (tallies_.admitted < options_.max_requests) {
    pending_ = arrivals_.next();
    if (pending_ && pending_->time_s <= options_.max_duration_s) {
      push({std::max(t, pending_->time_s - skip_), static_cast<int>(EventKind::arrival), -1, 0, 0});
      arrivals_open_ = true;
    }
  } else {
    result_.stopped_at_request_limit = arrivals_.next().has_value();
  }
  if (replica >= 0) {
    try_start(replica, t);
  } else if (replica == kSharedQueue) {
    for (size_t i = 0; i < replicas_.size() && !shared_.empty(); ++i) try_start(static_cast<int>(i), t);
  }
}

// Routes a request and queues it there: on a replica (returned), in the shared queue (-1), or
// held until a replica is ready (-2). The caller starts the replica once its own state is set.
int Simulation::route(int id) {
  if (disaggregated_) {
    // Arrivals go to the replicas that compute prompts: the decode replicas are hidden from the router.
    // (into a buffer kept between arrivals: no allocation per request)
    prefill_loads_.assign(loads_.begin(), loads_.end());
    int ready = 0;
    for (size_t i = 0; i < prefill_loads_.size(); ++i) {
      if (replicas_[i].config->role == ReplicaRole::decode) prefill_loads_[i].ready = false;
      ready += prefill_loads_[i].ready;
    }
    if (router_->reads_prefixes()) fill_prefix_matches(id, prefill_loads_);
    return router_->route(prefill_loads_, ready);
  }
  if (router_->reads_prefixes()) fill_prefix_matches(id, loads_);
  return router_->route(loads_, ready_);
}

void Simulation::fill_prefix_matches(int id, std::vector<ReplicaLoad>& loads) {
  const ChainView chain = pool_.chain(id);
  const Request& q = pool_[id];
  const size_t most = chain.empty() ? 0 : chain.blocks_within(q.prompt - 1);
  for (size_t i = 0; i < replicas_.size(); ++i) {
    ReplicaLoad& load = loads[i];
    const PrefixCache& cache = replicas_[i].prefix;
    load.cached_blocks = static_cast<double>(cache.cached_blocks());
    load.prefix_match =
        load.ready && most > 0 ? chain.tokens_of(cache.longest_hit(chain.data(), chain.size(), most)) / q.prompt : 0;
  }
}

void Simulation::hand_off(int id, ReplicaState& r, double t) {
  unassign(id, r);
  r.stats.requests++;  // a prefill replica's requests are the prompts it computed
  Request& q = pool_[id];
  q.replica = -1;
  const ReplicaConfig& c = *r.config;
  const double bytes = c.kv_bytes_per_token_replica * q.input;
  const double transfer_s = c.kv_link_bytes_per_s > 0 ? bytes / c.kv_link_bytes_per_s : 0;
  double arrives = t;
  if (c.kv_pulled_between_steps) {
    // Nothing moves until the decode replica pulls it (kv_pull.cc): it goes there now.
    q.kv_pull_s = transfer_s;
    q.kv_ready_at = t;
    q.kv_to_pull = true;
  } else {
    double& link_free = link_free_at_[r.index];
    const double start = std::max(q.prefill_started >= 0 ? q.prefill_started : t, link_free);
    arrives = link_free = std::max(start + transfer_s, t + transfer_s / std::max(1, c.layers));
    result_.kv_transfer_wait.add(arrives - t);
  }
  ++result_.kv_transfers;
  result_.kv_transfer_bytes += bytes;
  push({arrives, static_cast<int>(EventKind::kv_arrived), id, 0, q.version});
  maybe_stop(r);
}

void Simulation::kv_pulled(int id, double t) { release_held_kv(pool_[id], t); }

// The prefill replica's copy of a request's KV is freed; it may admit prompts it had no room for.
void Simulation::release_held_kv(Request& q, double t) {
  if (q.held_on < 0) return;
  replicas_[static_cast<size_t>(q.held_on)].kv.release(q.held_blocks);
  push({t, static_cast<int>(EventKind::kv_released), q.held_on, 0, 0});
  q.held_on = -1;
  q.held_blocks = 0;
}

void Simulation::on_kv_arrived(int id, unsigned version, double t) {
  const Request& q = pool_[id];
  if (!q.live || q.version != version) return;
  send_kv_to_decode(id, t);
}

// Whether a decode replica is ready (none lost to an outage, starting or draining): which one
// takes a prompt's KV is the decode router's choice (choose_decode_replica).
bool Simulation::decode_replica_ready() const {
  for (const ReplicaState& r : replicas_)
    if (r.config->role == ReplicaRole::decode && r.life == Life::ready) return true;
  return false;
}

// The decode router's choice among the ready decode replicas; -1 when there is none.
int Simulation::choose_decode_replica() {
  decode_loads_.assign(loads_.begin(), loads_.end());
  int ready = 0;
  for (size_t i = 0; i < decode_loads_.size(); ++i) {
    decode_loads_[i].ready = replicas_[i].config->role == ReplicaRole::decode && replicas_[i].life == Life::ready;
    ready += decode_loads_[i].ready;
  }
  const int chosen = decode_router_->route(decode_loads_, ready);
  return chosen >= 0 ? chosen : -1;
}

// That replica takes a request whose KV was sent (or one lost to an outage: the prefill replica
// still holds the KV and sends it elsewhere). With none ready (a decode pool scaled to zero, or
// every one lost), the request waits, its KV held by the prefill replica, until one is.
void Simulation::send_kv_to_decode(int id, double t) {
  const int best = choose_decode_replica();
  if (best < 0) {
    decode_held_.push_back(id);
    return;
  }
  assign(id, best);
  try_start(best, t);
}

int Simulation::place(int id) {
  int replica = route(id);
  if (replica == kSharedQueue) {
    shared_.push_back(id);
    if (ready_ == 0) ++tallies_.held;
  } else if (replica == kNoReplicaReady) {
    held_.push_back(id);
    ++tallies_.held;
  } else {
    assign(id, replica);
  }
  return replica;
}

void Simulation::assign(int id, int replica) {
  pool_[id].replica = replica;
  auto& state = replicas_[static_cast<size_t>(replica)];
  state.waiting.push_back(id);
  ReplicaLoad& load = loads_[state.index];
  load.outstanding++;
  load.outstanding_tokens += pool_[id].input + pool_[id].output;
}

// The router's count of a request on its replica, taken off when the request leaves it.
void Simulation::unassign(int id, ReplicaState& r) {
  ReplicaLoad& load = loads_[r.index];
  load.outstanding--;
  load.outstanding_tokens -= pool_[id].input + pool_[id].output;
}

void Simulation::try_start(int index, double t) {
  auto& r = replicas_[static_cast<size_t>(index)];
  if (r.busy) return;
  if (is_llm(*r.config)) {
    start_llm_step(index, t);
  } else {
    start_batch(index, t);
  }
}

// Classic servers: the replica's batcher says how many to take now, or when to look again.
void Simulation::start_batch(int index, double t) {
  auto& r = replicas_[static_cast<size_t>(index)];
  // A shared queue: an idle replica takes the oldest requests, up to a batch, which it then owns.
  const size_t pull = r.batcher->max_batch();
  const bool gave_up = give_up_front(r.waiting, &r, t);
  while (r.life == Life::ready && !shared_.empty() && r.waiting.size() < pull) {
    int id = shared_.front();
    shared_.pop_front();
    if (expired(pool_[id], t)) {
      give_up(id, nullptr);
      continue;
    }
    assign(id, index);
  }
  if (r.waiting.empty()) {
    if (gave_up) maybe_stop(r);  // a draining replica whose last requests were given up
    return;
  }
  BatchDecision decision = r.batcher->decide(r.waiting.size(), pool_[r.waiting.front()].arrival, t);
  if (decision.take == 0) {
    push({decision.look_again_at_s, static_cast<int>(EventKind::timeout), index, 0, ++r.timer_version});
    return;
  }
  const size_t take = decision.take;
  r.batch.clear();
  for (size_t i = 0; i < take; ++i) {
    int id = r.waiting.front();
    r.waiting.pop_front();
    pool_[id].scheduled = t;
    r.batch.push_back(id);
  }
  begin_step(r, t, r.config->batch_time(static_cast<int>(take), rng_), take);
}

// LLM servers: one step under the replica's scheduler (see LlmStepExecution).
void Simulation::start_llm_step(int index, double t) {
  auto& r = replicas_[static_cast<size_t>(index)];
  if (r.config->kv_pulled_between_steps && pull_waiting_kv(r, t)) return;
  std::optional<StepStart> step = steps_.start_step(r, t);
  if (!step) {
    // What it preempted may have freed the blocks a request waiting to be pulled needs.
    if (r.config->kv_pulled_between_steps) pull_waiting_kv(r, t);
    return;
  }
  double duration_s = step->duration_s;
  if (r.config->pipeline_lanes > 1) {
    duration_s = through_stages(r, t, step->duration_s) - t;
    r.stats.stage_wait_s += duration_s - step->duration_s;
  }
  begin_step(r, t, duration_s, step->batch);
}

// The step's stages take an equal share of its time, each when the stage is free and the stage
// before it done; returns when the last stage is done.
double Simulation::through_stages(const ReplicaState& r, double t, double duration_s) {
  std::vector<double>& free_at = stage_free_at_[pipeline_head_[r.index]];
  const double stage_s = duration_s / static_cast<double>(free_at.size());
  for (double& stage_free : free_at) t = stage_free = std::max(t, stage_free) + stage_s;
  return t;
}

void Simulation::begin_step(ReplicaState& r, double t, double duration_s, size_t batch) {
  r.busy = true;
  r.step_started = t;
  r.stats.steps++;
  r.stats.batch_sizes[std::min(batch, r.stats.batch_sizes.size() - 1)]++;
  push({t + duration_s, static_cast<int>(EventKind::step_done), static_cast<int>(r.index), 0, 0});
}

void Simulation::on_step_done(int index, double t) {
  auto& r = replicas_[static_cast<size_t>(index)];
  r.busy = false;
  r.stats.busy_s += t - r.step_started;
  if (is_llm(*r.config)) {
    steps_.finish_step(r, t);
  } else {
    for (int id : r.batch) {
      pool_[id].first_token = t;
      complete(id, t);
    }
    r.batch.clear();
  }
  sample(t);
  try_start(index, t);
  // Lanes on one pool of KV blocks: what this step freed may let an idle lane admit.
  if (r.config->lanes_share_kv) {
    const size_t head = pipeline_head_[r.index];
    for (size_t lane = head; lane < replicas_.size() && lane < head + static_cast<size_t>(r.config->pipeline_lanes); ++lane)
      if (lane != r.index) try_start(static_cast<int>(lane), t);
  }
  maybe_stop(r);
}

void Simulation::complete(int id, double t) {
  Request& q = pool_[id];
  if (!q.live) return violated(fmt::format("request {} completed twice", id));
  auto& r = replicas_[static_cast<size_t>(q.replica)];
  if (is_llm(*r.config)) tallies_.tokens_finished += q.output;
  double latency = t - q.arrival;
  double first = q.first_token >= 0 ? q.first_token : t;
  double ttft = first - q.arrival;
  double tpot = q.output > 1 ? (t - first) / (q.output - 1) : 0;
  tallies_.latency.add(latency);
  tallies_.wait.add(std::max(0.0, q.scheduled - q.arrival));
  if (q.scheduled - q.arrival > 1e-12) ++tallies_.waited;
  tallies_.ttft.add(ttft);
  if (q.output > 1) tallies_.tpot.add(tpot);
  const Slo& slo = options_.slo;
  bool good = (!slo.latency_p99_s || latency <= *slo.latency_p99_s) && (!slo.e2e_p99_s || latency <= *slo.e2e_p99_s) &&
              (!slo.ttft_p99_s || ttft <= *slo.ttft_p99_s) && (!slo.tpot_p99_s || q.output <= 1 || tpot <= *slo.tpot_p99_s);
  if (good) ++tallies_.good;
  unassign(id, r);
  r.stats.requests++;
  ++tallies_.completed;
  --tallies_.in_flight;
  tallies_.last_completion_s = t + skip_;
  // The run ends at the last completion: billing up to here.
  tallies_.billed_node_s_at_completion = tallies_.billed_node_s;
  tallies_.serving_replica_s_at_completion = tallies_.serving_replica_s;
  for (PoolSlots& pool : pools_) pool.billed_s_at_completion = pool.billed_s;
  pool_.release(id);
}

void Simulation::reject(int id, ReplicaState& r) {
  release_held_kv(pool_[id], now_);
  tallies_.tokens_finished += pool_[id].generated;
  unassign(id, r);
  ++tallies_.rejected;
  --tallies_.in_flight;
  pool_.release(id);
}

// Client timeouts. A request is given up once it has waited the timeout without starting
// service (a preempted one has started: its client is streaming).
void Simulation::give_up(int id, ReplicaState* r) {
  if (r) unassign(id, *r);
  ++tallies_.timed_out;
  --tallies_.in_flight;
  pool_.release(id);
}

// Gives up the expired requests at the front of a queue (queues are in arrival order, but for
// requests moved by an outage and preempted ones, which are kept). Returns whether any went.
bool Simulation::give_up_front(std::deque<int>& queue, ReplicaState* r, double t) {
  size_t kept = 0, i = 0;
  bool any = false;
  for (; i < queue.size(); ++i) {
    const Request& q = pool_[queue[i]];
    if (q.scheduled >= 0) {
      queue[kept++] = queue[i];
      continue;
    }
    if (!expired(q, t)) break;
    give_up(queue[i], r);
    any = true;
  }
  if (any) queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(kept), queue.begin() + static_cast<std::ptrdiff_t>(i));
  return any;
}

void Simulation::give_up_expired(double t) {
  for (auto& r : replicas_)
    if (give_up_front(r.waiting, &r, t)) maybe_stop(r);
  give_up_front(shared_, nullptr, t);
  give_up_front(held_, nullptr, t);
}

void Simulation::advance(double t) {
  if (t <= now_) return;
  const double dt = t - now_;
  tallies_.request_s += static_cast<double>(tallies_.in_flight) * dt;
  const double counted = std::min(t, account_until_ - skip_) - now_;
  if (counted > 0) {
    for (PoolSlots& pool : pools_) pool.billed_s += static_cast<double>(pool.billed()) * counted;
    tallies_.billed_node_s += static_cast<double>(billed_nodes()) * counted;
    tallies_.serving_replica_s += static_cast<double>(ready_) / lanes_ * counted;
  }
  now_ = t;
}

void Simulation::sample(double t) {
  if (!recorder_.sample_due(t + skip_)) return;
  TimeSample s;
  s.time_s = t + skip_;
  double kv = 0;
  int kv_replicas = 0;
  for (const auto& r : replicas_) {
    s.queue_depth += static_cast<long long>(r.waiting.size());
    if (r.kv.capacity_blocks() > 0) {
      kv += r.kv.used_fraction();
      ++kv_replicas;
    }
  }
  s.queue_depth += static_cast<long long>(shared_.size() + held_.size());
  s.in_flight = tallies_.in_flight;
  s.kv_used_fraction = kv_replicas ? kv / kv_replicas : 0;
  recorder_.keep_sample(s);
}

// Violations found by the invariant checks; the run ends with the first.
void Simulation::violated(std::string what) {
  if (invariant_error_.empty()) invariant_error_ = fmt::format("t={:.6f} s: {}", now_, what);
}

void Simulation::check_invariants() {
  if (std::string wrong = steps_.check(replicas_, tallies_.tokens_finished); !wrong.empty()) violated(std::move(wrong));
  // A replica across nodes moves whole: its lanes share one life (a draining lane that has
  // emptied waits for the others), and the slots billed are whole replicas'.
  for (size_t first = 0; lanes_ > 1 && first < replicas_.size(); first += static_cast<size_t>(lanes_))
    for (size_t lane = first + 1; lane < first + static_cast<size_t>(lanes_); ++lane)
      if (replicas_[lane].life != replicas_[first].life)
        violated(fmt::format("replica {}'s lanes differ: slot {} is {} and slot {} is {}", first / static_cast<size_t>(lanes_), first,
                             static_cast<int>(replicas_[first].life), lane, static_cast<int>(replicas_[lane].life)));
  if (nodes_ % lanes_ != 0 || ready_ % lanes_ != 0)
    violated(fmt::format("{} slots billed and {} ready: not whole replicas of {} lanes", nodes_, ready_, lanes_));
}

// Where requests are left when a run ends with some in flight.
std::string Simulation::stuck() const {
  std::string text;
  for (size_t i = 0; i < replicas_.size(); ++i) {
    const auto& r = replicas_[i];
    text += fmt::format("{}replica {}: {} waiting, {} prefilling, {} decoding, {} swapped, {} of {} blocks used", i ? "; " : "", i,
                        r.waiting.size(), r.prefilling.size(), r.decoding_count, r.swapped.size(), r.kv.used_blocks(),
                        r.kv.capacity_blocks());
    if (!r.waiting.empty()) {
      const Request& q = pool_[r.waiting.front()];
      text += fmt::format(", first waiting: prompt {} output {} generated {}", q.prompt, q.output, q.generated);
    }
  }
  if (!decode_held_.empty()) text += fmt::format("; {} waiting for a decode replica to be ready", decode_held_.size());
  return text;
}

int Simulation::billed_nodes() const {
  if (pools_.empty()) return nodes_ / lanes_ + (scaling_ ? scaling_->warm_nodes() : 0);
  int billed = 0;
  for (const PoolSlots& pool : pools_) billed += pool.billed();
  return billed;
}

Simulation::PoolSlots* Simulation::pool_of(size_t slot) {
  for (PoolSlots& pool : pools_)
    if (slot >= static_cast<size_t>(pool.first) && slot < static_cast<size_t>(pool.first + pool.count)) return &pool;
  return nullptr;
}

Result<SimResult> Simulation::finish() {
  SimResult& out = result_;
  fill_report(tallies_, recorder_, replicas_, out);
  if (account_until_ < 1e17) {
    advance(account_until_ - skip_);  // to the end of the span: idle pools are paid for too
    out.billed_node_s = tallies_.billed_node_s;
    out.serving_replica_s = tallies_.serving_replica_s;
  } else {
    out.billed_node_s = tallies_.billed_node_s_at_completion;
    out.serving_replica_s = tallies_.serving_replica_s_at_completion;
  }
  for (const PoolSlots& pool : pools_) out.pool_billed_node_s.push_back(account_until_ < 1e17 ? pool.billed_s : pool.billed_s_at_completion);
  return out;
}

}  // namespace gw::sim_detail
