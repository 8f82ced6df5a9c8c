#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>

#include <fmt/format.h>

#include "core/text.h"

namespace gw {

std::string_view sim_batching_name(SimBatching batching) {
  switch (batching) {
    case SimBatching::none: return "none";
    case SimBatching::static_batch: return "static";
    case SimBatching::dynamic: return "dynamic";
    case SimBatching::continuous: return "continuous";
  }
  return "none";
}

std::optional<SimBatching> parse_sim_batching(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "none") return SimBatching::none;
  if (name == "static") return SimBatching::static_batch;
  if (name == "dynamic") return SimBatching::dynamic;
  if (name == "continuous") return SimBatching::continuous;
  return std::nullopt;
}

std::string_view router_name(Router router) {
  switch (router) {
    case Router::round_robin: return "round-robin";
    case Router::shortest_queue: return "join-shortest-queue";
    case Router::least_tokens: return "least-outstanding-tokens";
    case Router::shared_queue: return "shared-queue";
  }
  return "round-robin";
}

std::optional<Router> parse_router(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "round-robin") return Router::round_robin;
  if (name == "join-shortest-queue" || name == "jsq") return Router::shortest_queue;
  if (name == "least-outstanding-tokens") return Router::least_tokens;
  if (name == "shared-queue") return Router::shared_queue;
  return std::nullopt;
}

namespace {

struct Request {
  double arrival = 0, scheduled = -1, first_token = -1;
  double input = 0, output = 0;
  // Continuous batching state.
  double prompt = 0;           // tokens to (re)compute at admission: input + tokens generated before a preemption
  double prefill_left = 0;
  double generated = 0;        // output tokens produced so far
  double length = 0;           // tokens in the KV cache while decoding
  long long blocks = 0;
  long long join_step = 0;     // decode-step counter when it joined decoding
  int phase = 0;
  unsigned version = 0;        // invalidates heap entries after a preemption
  int replica = -1;
};

class RequestPool {
 public:
  int add(const Request& r) {
    if (!free_.empty()) {
      int id = free_.back();
      free_.pop_back();
      slots_[static_cast<size_t>(id)] = r;
      return id;
    }
    slots_.push_back(r);
    return static_cast<int>(slots_.size() - 1);
  }
  Request& operator[](int id) { return slots_[static_cast<size_t>(id)]; }
  void release(int id) {
    slots_[static_cast<size_t>(id)].version++;
    free_.push_back(id);
  }

 private:
  std::vector<Request> slots_;
  std::vector<int> free_;
};

enum class EventKind { step_done = 0, timeout = 1, sample = 2, replica_ready = 3, node_ready = 4, arrival = 5, scale_tick = 6 };

// A replica slot's life under autoscaling; without it every replica is ready throughout.
enum class Life { off, starting, ready, draining };

struct Event {
  double time;
  int kind;
  int replica;
  unsigned long long sequence;
  unsigned version;
  bool operator>(const Event& other) const {
    if (time != other.time) return time > other.time;
    if (kind != other.kind) return kind > other.kind;
    return sequence > other.sequence;
  }
};

struct DecodeEntry {
  long long finish_step;
  int id;
  unsigned version;
  bool operator>(const DecodeEntry& other) const {
    if (finish_step != other.finish_step) return finish_step > other.finish_step;
    return id > other.id;
  }
};

struct ReplicaState {
  const ReplicaConfig* config = nullptr;
  Life life = Life::ready;
  unsigned life_version = 0;     // invalidates a pending ready event when a start is cancelled
  double busy_observed = 0;      // busy seconds at the last scrape
  double observed_since = 0;     // when the replica last became ready or was scraped
  bool busy = false;
  unsigned timer_version = 0;
  std::deque<int> waiting;
  double outstanding_tokens = 0;
  long long outstanding = 0;
  // Classic batch in service.
  std::vector<int> batch;
  // Continuous batching.
  std::deque<int> prefilling;
  std::priority_queue<DecodeEntry, std::vector<DecodeEntry>, std::greater<>> decoding;
  std::vector<std::pair<int, unsigned>> admitted;  // admission order (id, version), for preemption
  long long decoding_count = 0;
  double context_sum = 0;
  long long blocks_used = 0;
  std::vector<long long> phase_count;
  long long decode_step = 0;
  // The step in progress.
  bool step_decodes = false;
  long long step_new_blocks = 0;
  std::vector<std::pair<int, double>> step_chunks;
  double step_started = 0;
  ReplicaStats stats;
};

long long blocks_for(double tokens, int block) { return static_cast<long long>(std::ceil(tokens / block)); }

class Simulation {
 public:
  Simulation(ArrivalProcess& arrivals, const std::vector<ReplicaConfig>& configs, const SimOptions& options)
      : arrivals_(arrivals), options_(options), rng_(options.seed ^ 0x9e3779b97f4a7c15ULL) {
    auto add = [&](const ReplicaConfig& config, std::string name, Life life) {
      ReplicaState r;
      r.config = &config;
      r.life = life;
      r.phase_count.assign(static_cast<size_t>(std::max(1, config.block_tokens)), 0);
      r.stats.name = std::move(name);
      r.stats.batch_sizes.assign(static_cast<size_t>(std::max(1, config.max_batch)) + 1, 0);
      replicas_.push_back(std::move(r));
    };
    if (options_.scaling) {
      const ScalingOptions& s = *options_.scaling;
      for (int i = 0; i < s.max_replicas; ++i)
        add(configs.front(), fmt::format("{}#{}", configs.front().name, i + 1), i < s.initial_replicas ? Life::ready : Life::off);
      ready_ = s.initial_replicas;
      nodes_ = s.initial_replicas;
      account_until_ = s.account_until_s;
      warm_idle_ = s.warm_pool;
    } else {
      for (const auto& config : configs) add(config, config.name, Life::ready);
      ready_ = nodes_ = static_cast<int>(configs.size());
    }
  }

  Result<SimResult> run() {
    pending_ = arrivals_.next();
    if (!pending_) {
      if (auto e = arrivals_.error()) return *e;
      return Error{"", 0, "", "the arrival process produced no requests"};
    }
    first_arrival_ = pending_->time_s;
    push({pending_->time_s, static_cast<int>(EventKind::arrival), -1, 0, 0});
    if (options_.scaling) push({options_.scaling->interval_s, static_cast<int>(EventKind::scale_tick), -1, 0, 0});
    while (!events_.empty()) {
      Event e = events_.top();
      events_.pop();
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
        case EventKind::node_ready:
          --warm_pending_;
          ++warm_idle_;
          break;
      }
    }
    if (auto e = arrivals_.error()) return *e;
    return finish();
  }

 private:
  void push(Event e) {
    e.sequence = ++sequence_;
    events_.push(e);
  }

  void advance(double t) {
    if (t > now_) {
      double dt = t - now_;
      area_ += static_cast<double>(in_flight_) * dt;
      double counted = std::min(t, account_until_) - now_;
      if (counted > 0) {
        billed_area_ += static_cast<double>(nodes_ + warm_idle_ + warm_pending_) * counted;
        serving_area_ += static_cast<double>(ready_) * counted;
      }
      now_ = t;
    }
  }

  // A ready replica for a new request; -1: the shared queue; -2: none ready (held until one is).
  int route() {
    if (options_.router == Router::shared_queue) return -1;
    if (ready_ == 0) return -2;
    const size_t n = replicas_.size();
    if (options_.router == Router::round_robin) {
      for (size_t tries = 0; tries < n; ++tries) {
        size_t i = next_replica_++ % n;
        if (replicas_[i].life == Life::ready) return static_cast<int>(i);
      }
      return -2;
    }
    int best = -2;
    for (size_t i = 0; i < n; ++i) {
      const auto& a = replicas_[i];
      if (a.life != Life::ready) continue;
      if (best < 0) {
        best = static_cast<int>(i);
        continue;
      }
      const auto& b = replicas_[static_cast<size_t>(best)];
      bool better = options_.router == Router::shortest_queue ? a.outstanding < b.outstanding
                                                               : a.outstanding_tokens < b.outstanding_tokens;
      if (better) best = static_cast<int>(i);
    }
    return best;
  }

  void assign(int id, int replica) {
    pool_[id].replica = replica;
    auto& state = replicas_[static_cast<size_t>(replica)];
    state.waiting.push_back(id);
    state.outstanding++;
    state.outstanding_tokens += pool_[id].input + pool_[id].output;
  }

  // Autoscaling: what the pool looked like over the last interval, the scaler's answer, and
  // replicas started or stopped to meet it.
  void on_scale_tick(double t) {
    const ScalingOptions& s = *options_.scaling;
    ScaleObservation o;
    o.time_s = t;
    o.interval_s = s.interval_s;
    double busy = 0, observed = 0;
    for (auto& r : replicas_) {
      if (r.life == Life::starting) ++o.starting;
      o.waiting += static_cast<long long>(r.waiting.size());
      if (r.life != Life::ready) continue;
      ++o.ready;
      double cumulative = r.stats.busy_s + (r.busy ? t - r.step_started : 0);
      busy += cumulative - r.busy_observed;
      observed += t - r.observed_since;
      r.busy_observed = cumulative;
      r.observed_since = t;
    }
    o.waiting += static_cast<long long>(shared_.size() + held_.size());
    o.in_service = std::max(0LL, in_flight_ - o.waiting);
    o.busy_fraction = observed > 0 ? std::clamp(busy / observed, 0.0, 1.0) : 0;
    o.arrival_rps = static_cast<double>(admitted_ - admitted_at_tick_) / s.interval_s;
    o.completion_rps = static_cast<double>(completed_ + rejected_ - completed_at_tick_) / s.interval_s;
    admitted_at_tick_ = admitted_;
    completed_at_tick_ = completed_ + rejected_;
    int desired = std::clamp(s.decide(o), 0, s.max_replicas);
    // Activation: a request in the system wakes a pool scaled to zero (KEDA's activation step).
    if (desired == 0 && in_flight_ > 0) desired = 1;
    int current = o.ready + o.starting;
    if (desired > current) {
      if (current == 0) ++result_.cold_starts;
      ++result_.scale_ups;
      int more = desired - current;
      // Draining replicas come back first: they are warm.
      for (size_t i = 0; i < replicas_.size() && more > 0; ++i) {
        auto& r = replicas_[i];
        if (r.life != Life::draining) continue;
        r.life = Life::ready;
        ++ready_;
        r.observed_since = t;
        r.busy_observed = r.stats.busy_s + (r.busy ? t - r.step_started : 0);
        --more;
        dispatch_held(t);
      }
      for (size_t i = 0; i < replicas_.size() && more > 0; ++i) {
        auto& r = replicas_[i];
        if (r.life != Life::off) continue;
        double delay = s.start_s;
        if (warm_idle_ > 0) {
          --warm_idle_;
          delay = s.warm_start_s;
          if (warm_idle_ + warm_pending_ < s.warm_pool) {
            ++warm_pending_;
            push({t + s.node_provisioning_s, static_cast<int>(EventKind::node_ready), -1, 0, 0});
          }
        }
        r.life = Life::starting;
        ++nodes_;
        push({t + delay, static_cast<int>(EventKind::replica_ready), static_cast<int>(i), 0, ++r.life_version});
        --more;
      }
    } else if (desired < current) {
      ++result_.scale_downs;
      int fewer = current - desired;
      // Cancel starts first (newest slots last started), then drain the least loaded.
      for (size_t i = replicas_.size(); i-- > 0 && fewer > 0;) {
        auto& r = replicas_[i];
        if (r.life != Life::starting) continue;
        r.life_version++;
        stop(r);
        --fewer;
      }
      while (fewer > 0) {
        int victim = -1;
        for (size_t i = 0; i < replicas_.size(); ++i) {
          const auto& r = replicas_[i];
          if (r.life != Life::ready) continue;
          if (victim < 0 || r.outstanding < replicas_[static_cast<size_t>(victim)].outstanding) victim = static_cast<int>(i);
        }
        if (victim < 0) break;
        auto& r = replicas_[static_cast<size_t>(victim)];
        r.life = Life::draining;
        --ready_;
        maybe_stop(r);
        --fewer;
      }
    }
    ScaleSample sample;
    sample.time_s = t;
    sample.ready = ready_;
    sample.starting = 0;
    for (const auto& r : replicas_)
      if (r.life == Life::starting) ++sample.starting;
    sample.desired = desired;
    sample.billed = nodes_ + warm_idle_ + warm_pending_;
    sample.arrival_rps = o.arrival_rps;
    sample.waiting = o.waiting;
    sample.busy_fraction = o.busy_fraction;
    record_scale(sample);
    // The pool keeps being watched (and billed) to the end of the accounted span.
    if (arrivals_open_ || in_flight_ > 0 || (account_until_ < 1e17 && t + s.interval_s <= account_until_))
      push({t + s.interval_s, static_cast<int>(EventKind::scale_tick), -1, 0, 0});
  }

  // Bounded series: when full, keep every other point (the chart needs shape, not every scrape).
  void record_scale(const ScaleSample& sample) {
    ++scale_ticks_;
    if (scale_ticks_ % scale_stride_ != 0) return;
    result_.scale_series.push_back(sample);
    if (result_.scale_series.size() >= 4096) {
      std::vector<ScaleSample> kept;
      for (size_t i = 0; i < result_.scale_series.size(); i += 2) kept.push_back(result_.scale_series[i]);
      result_.scale_series = std::move(kept);
      scale_stride_ *= 2;
    }
  }

  void on_replica_ready(int index, unsigned version, double t) {
    auto& r = replicas_[static_cast<size_t>(index)];
    if (r.life != Life::starting || r.life_version != version) return;
    r.life = Life::ready;
    ++ready_;
    r.observed_since = t;
    r.busy_observed = r.stats.busy_s;
    dispatch_held(t);
    if (options_.router == Router::shared_queue) try_start(index, t);
  }

  // Requests that arrived while no replica was ready go out as soon as one is.
  void dispatch_held(double t) {
    while (!held_.empty()) {
      int replica = route();
      if (replica < 0) return;
      int id = held_.front();
      held_.pop_front();
      assign(id, replica);
      try_start(replica, t);
    }
  }

  // A draining replica stops (and stops being billed) once it holds no work.
  void maybe_stop(ReplicaState& r) {
    if (r.life == Life::draining && r.outstanding == 0 && !r.busy) stop(r);
  }

  void stop(ReplicaState& r) {
    r.life = Life::off;
    --nodes_;
    // The node stays as a warm one when the pool is short of its size.
    if (warm_idle_ + warm_pending_ < options_.scaling->warm_pool) ++warm_idle_;
  }

  void on_arrival(double t) {
    Request r;
    r.arrival = t;
    r.input = pending_->input_tokens;
    r.output = std::max(1.0, pending_->output_tokens);
    r.prompt = r.input;
    int id = pool_.add(r);
    int replica = route();
    if (replica == -1) {
      shared_.push_back(id);
      if (ready_ == 0) ++result_.held_requests;
    } else if (replica == -2) {
      held_.push_back(id);
      ++result_.held_requests;
    } else {
      assign(id, replica);
    }
    ++admitted_;
    if ((admitted_ & 0xFFFF) == 0 && options_.on_progress) options_.on_progress(admitted_);
    last_arrival_ = t;
    ++in_flight_;
    peak_in_flight_ = std::max(peak_in_flight_, in_flight_);
    sample(t);
    arrivals_open_ = false;
    if (admitted_ < options_.max_requests) {
      pending_ = arrivals_.next();
      if (pending_ && pending_->time_s <= options_.max_duration_s) {
        push({std::max(t, pending_->time_s), static_cast<int>(EventKind::arrival), -1, 0, 0});
        arrivals_open_ = true;
      }
    }
    if (replica >= 0) {
      try_start(replica, t);
    } else if (replica == -1) {
      for (size_t i = 0; i < replicas_.size() && !shared_.empty(); ++i) try_start(static_cast<int>(i), t);
    }
  }

  void try_start(int index, double t) {
    auto& r = replicas_[static_cast<size_t>(index)];
    if (r.busy) return;
    if (r.config->batching == SimBatching::continuous || (r.config->llm && r.config->batching == SimBatching::none)) {
      start_llm_step(index, t);
    } else {
      start_batch(index, t);
    }
  }

  // Classic servers: none, static and dynamic batching.
  void start_batch(int index, double t) {
    auto& r = replicas_[static_cast<size_t>(index)];
    // A shared queue: an idle replica takes the oldest requests.
    // One request when a pass takes one; otherwise up to a batch, which this replica then owns.
    size_t pull = r.config->batching == SimBatching::none ? 1 : static_cast<size_t>(std::max(1, r.config->max_batch));
    while (r.life == Life::ready && !shared_.empty() && r.waiting.size() < pull) {
      int id = shared_.front();
      shared_.pop_front();
      assign(id, index);
    }
    if (r.waiting.empty()) return;
    const ReplicaConfig& c = *r.config;
    size_t take = 0;
    size_t max = static_cast<size_t>(std::max(1, c.max_batch));
    if (c.batching == SimBatching::none) {
      take = 1;
    } else {
      double oldest = pool_[r.waiting.front()].arrival;
      double wait_limit = c.batching == SimBatching::static_batch ? c.batch_timeout_s : c.max_queue_delay_s;
      if (r.waiting.size() >= max) {
        take = max;
      } else if (t - oldest >= wait_limit - 1e-12) {
        take = r.waiting.size();
      } else {
        // Dispatch when the oldest request has waited long enough (or the batch fills first).
        push({oldest + wait_limit, static_cast<int>(EventKind::timeout), index, 0, ++r.timer_version});
        return;
      }
    }
    r.batch.clear();
    for (size_t i = 0; i < take; ++i) {
      int id = r.waiting.front();
      r.waiting.pop_front();
      pool_[id].scheduled = t;
      r.batch.push_back(id);
    }
    double duration = c.batch_time(static_cast<int>(take), rng_);
    r.busy = true;
    r.step_started = t;
    r.stats.steps++;
    r.stats.batch_sizes[std::min(take, r.stats.batch_sizes.size() - 1)]++;
    push({t + duration, static_cast<int>(EventKind::step_done), index, 0, 0});
  }

  // LLM servers: admission under the KV-block budget, preemption by recompute, chunked prefill.
  void start_llm_step(int index, double t) {
    auto& r = replicas_[static_cast<size_t>(index)];
    const ReplicaConfig& c = *r.config;
    const int block = std::max(1, c.block_tokens);
    const bool one_at_a_time = c.batching == SimBatching::none;
    const long long max_sequences = one_at_a_time ? 1 : std::max(1, c.max_batch);

    // Admit waiting requests while sequence slots and blocks for their prompts remain.
    while (!r.waiting.empty() &&
           r.decoding_count + static_cast<long long>(r.prefilling.size()) < max_sequences) {
      int id = r.waiting.front();
      Request& q = pool_[id];
      long long need = blocks_for(q.prompt + 1, block);
      if (need > c.kv_blocks) {
        // Longer than the whole KV cache: a server rejects it; counted, never silently dropped.
        r.waiting.pop_front();
        r.outstanding--;
        r.outstanding_tokens -= q.input + q.output;
        ++rejected_;
        --in_flight_;
        pool_.release(id);
        continue;
      }
      if (r.blocks_used + need > c.kv_blocks) break;
      r.waiting.pop_front();
      r.blocks_used += need;
      q.blocks = need;
      q.prefill_left = q.prompt;
      if (q.scheduled < 0) q.scheduled = t;
      r.prefilling.push_back(id);
      r.admitted.emplace_back(id, q.version);
      if (r.admitted.size() > 2 * static_cast<size_t>(max_sequences) + 64) {
        // Drop entries of requests that finished or were preempted since.
        std::vector<std::pair<int, unsigned>> live;
        for (auto [aid, version] : r.admitted)
          if (pool_[aid].version == version && pool_[aid].replica == index) live.emplace_back(aid, version);
        r.admitted = std::move(live);
      }
    }

    // Decoding sequences each add a token this step; preempt the newest when blocks run out.
    long long new_blocks = r.decoding_count > 0 ? r.phase_count[static_cast<size_t>(r.decode_step % block)] : 0;
    while (r.decoding_count > 0 && r.blocks_used + new_blocks > c.kv_blocks) {
      int victim = -1;
      while (!r.admitted.empty()) {
        auto [candidate, version] = r.admitted.back();
        r.admitted.pop_back();
        const Request& q = pool_[candidate];
        if (q.version == version && q.replica == index && q.length > 0) {
          victim = candidate;
          break;
        }
      }
      if (victim < 0) break;
      Request& v = pool_[victim];
      long long steps = r.decode_step - v.join_step;
      double length = v.length + static_cast<double>(steps);
      if ((r.decode_step % block) == v.phase) new_blocks--;  // its growth this step was counted
      r.phase_count[static_cast<size_t>(v.phase)]--;
      r.decoding_count--;
      r.context_sum -= length;
      r.blocks_used -= blocks_for(length, block);
      v.version++;  // its decode-heap entry is stale now
      v.generated = 1 + static_cast<double>(steps);
      v.prompt = v.input + v.generated;  // recomputed as a prompt when readmitted
      v.length = 0;
      v.blocks = 0;
      r.waiting.push_front(victim);
      r.stats.preemptions++;
    }

    // Prefill chunks within the token budget (whole prompts without chunked prefill, and then
    // the step decodes nothing).
    double budget = c.token_budget;
    bool decode_now = r.decoding_count > 0;
    r.step_chunks.clear();
    double prefill_tokens = 0, attended = 0, completing = 0;
    if (!c.chunked_prefill && !r.prefilling.empty()) decode_now = false;
    if (decode_now) budget -= static_cast<double>(r.decoding_count);
    for (int id : r.prefilling) {
      if (budget <= 0 && !r.step_chunks.empty()) break;
      Request& q = pool_[id];
      double chunk = c.chunked_prefill ? std::min(q.prefill_left, std::max(1.0, budget)) : q.prefill_left;
      if (!c.chunked_prefill && !r.step_chunks.empty() && chunk > budget) break;
      double done = q.prompt - q.prefill_left;
      attended += chunk * done + chunk * chunk / 2;
      prefill_tokens += chunk;
      budget -= chunk;
      if (chunk >= q.prefill_left) ++completing;
      r.step_chunks.emplace_back(id, chunk);
    }
    if (!decode_now && r.step_chunks.empty()) return;  // nothing to do: idle
    double decode_n = decode_now ? static_cast<double>(r.decoding_count) : 0;
    double duration = c.llm->step_time_s(decode_n, decode_now ? r.context_sum : 0, prefill_tokens, attended,
                                         decode_n + completing);
    r.step_decodes = decode_now;
    r.step_new_blocks = decode_now ? new_blocks : 0;
    r.busy = true;
    r.step_started = t;
    r.stats.steps++;
    size_t batch = static_cast<size_t>(decode_n) + r.step_chunks.size();
    r.stats.batch_sizes[std::min(batch, r.stats.batch_sizes.size() - 1)]++;
    push({t + duration, static_cast<int>(EventKind::step_done), index, 0, 0});
  }

  void complete(int id, double t) {
    Request& q = pool_[id];
    auto& r = replicas_[static_cast<size_t>(q.replica)];
    double latency = t - q.arrival;
    double first = q.first_token >= 0 ? q.first_token : t;
    double ttft = first - q.arrival;
    double tpot = q.output > 1 ? (t - first) / (q.output - 1) : 0;
    result_.latency.add(latency);
    result_.wait.add(std::max(0.0, q.scheduled - q.arrival));
    if (q.scheduled - q.arrival > 1e-12) ++waited_;
    result_.ttft.add(ttft);
    if (q.output > 1) result_.tpot.add(tpot);
    const Slo& slo = options_.slo;
    bool good = (!slo.latency_p99_s || latency <= *slo.latency_p99_s) && (!slo.e2e_p99_s || latency <= *slo.e2e_p99_s) &&
                (!slo.ttft_p99_s || ttft <= *slo.ttft_p99_s) && (!slo.tpot_p99_s || q.output <= 1 || tpot <= *slo.tpot_p99_s);
    if (good) ++good_;
    r.outstanding--;
    r.outstanding_tokens -= q.input + q.output;
    r.stats.requests++;
    ++completed_;
    --in_flight_;
    last_completion_ = t;
    // The run ends at the last completion: billing up to here.
    billed_at_completion_ = billed_area_;
    serving_at_completion_ = serving_area_;
    pool_.release(id);
  }

  void on_step_done(int index, double t) {
    auto& r = replicas_[static_cast<size_t>(index)];
    r.busy = false;
    r.stats.busy_s += t - r.step_started;
    const ReplicaConfig& c = *r.config;
    if (!(c.batching == SimBatching::continuous || (c.llm && c.batching == SimBatching::none))) {
      for (int id : r.batch) {
        pool_[id].first_token = t;
        complete(id, t);
      }
      r.batch.clear();
      sample(t);
      try_start(index, t);
      if (options_.scaling) maybe_stop(r);
      return;
    }
    const int block = std::max(1, c.block_tokens);
    if (r.step_decodes) {
      // Every decoding sequence produced a token.
      r.context_sum += static_cast<double>(r.decoding_count);
      r.blocks_used += r.step_new_blocks;
      r.decode_step++;
      while (!r.decoding.empty() && r.decoding.top().finish_step <= r.decode_step) {
        DecodeEntry entry = r.decoding.top();
        r.decoding.pop();
        Request& q = pool_[entry.id];
        if (q.version != entry.version) continue;  // preempted since
        long long length = static_cast<long long>(q.length + static_cast<double>(r.decode_step - q.join_step));
        r.phase_count[static_cast<size_t>(q.phase)]--;
        r.decoding_count--;
        r.context_sum -= static_cast<double>(length);
        r.blocks_used -= blocks_for(static_cast<double>(length), block);
        complete(entry.id, t);
      }
    }
    // Prompt chunks done; finished prompts emit their first token and start decoding.
    for (auto [id, chunk] : r.step_chunks) {
      Request& q = pool_[id];
      q.prefill_left -= chunk;
      if (q.prefill_left > 1e-9) continue;
      r.prefilling.erase(std::find(r.prefilling.begin(), r.prefilling.end(), id));
      if (q.first_token < 0) q.first_token = t;
      q.generated += 1;  // the first token, or the next one after a recompute
      double remaining = q.output - q.generated;
      if (remaining <= 0) {
        r.blocks_used -= q.blocks;
        complete(id, t);
        continue;
      }
      q.length = q.prompt + 1;
      long long blocks = blocks_for(q.length, block);
      r.blocks_used += blocks - q.blocks;
      q.blocks = blocks;
      q.join_step = r.decode_step;
      long long base = static_cast<long long>(q.length);
      q.phase = static_cast<int>(((q.join_step - base) % block + block) % block);
      r.phase_count[static_cast<size_t>(q.phase)]++;
      r.decoding_count++;
      r.context_sum += q.length;
      r.decoding.push({r.decode_step + static_cast<long long>(remaining), id, q.version});
    }
    sample(t);
    try_start(index, t);
    if (options_.scaling) maybe_stop(r);
  }

  void sample(double t) {
    if (options_.timeseries_points <= 0) return;
    if (t < next_sample_) return;
    TimeSample s;
    s.time_s = t;
    double kv = 0;
    int kv_replicas = 0;
    for (const auto& r : replicas_) {
      s.queue_depth += static_cast<long long>(r.waiting.size());
      if (r.config->kv_blocks > 0) {
        kv += static_cast<double>(r.blocks_used) / static_cast<double>(r.config->kv_blocks);
        ++kv_replicas;
      }
    }
    s.queue_depth += static_cast<long long>(shared_.size() + held_.size());
    s.in_flight = in_flight_;
    s.kv_used_fraction = kv_replicas ? kv / kv_replicas : 0;
    samples_.push_back(s);
    next_sample_ = t + sample_interval_;
    // Keep the series bounded: when full, keep every other sample and sample half as often.
    if (static_cast<int>(samples_.size()) >= 2 * options_.timeseries_points) {
      std::vector<TimeSample> kept;
      for (size_t i = 0; i < samples_.size(); i += 2) kept.push_back(samples_[i]);
      samples_ = std::move(kept);
      sample_interval_ *= 2;
    }
  }

  Result<SimResult> finish() {
    SimResult& out = result_;
    out.requests = completed_;
    out.duration_s = std::max(1e-12, last_completion_ - first_arrival_);
    out.throughput_rps = static_cast<double>(completed_) / out.duration_s;
    out.goodput_rps = static_cast<double>(good_) / out.duration_s;
    out.slo_attainment = completed_ ? static_cast<double>(good_) / static_cast<double>(completed_) : 1;
    out.mean_in_system = area_ / out.duration_s;
    out.arrival_rate_rps = last_arrival_ > first_arrival_ ? static_cast<double>(admitted_ - 1) / (last_arrival_ - first_arrival_) : 0;
    for (auto& r : replicas_) {
      r.stats.busy_fraction = r.stats.busy_s / out.duration_s;
      out.preemptions += r.stats.preemptions;
      out.replicas.push_back(r.stats);
    }
    out.timeseries = samples_;
    out.peak_in_flight = peak_in_flight_;
    out.rejected = rejected_;
    out.waited_fraction = completed_ ? static_cast<double>(waited_) / static_cast<double>(completed_) : 0;
    if (account_until_ < 1e17) {
      advance(account_until_);  // to the end of the span: idle pools are paid for too
      out.billed_node_s = billed_area_;
      out.serving_replica_s = serving_area_;
    } else {
      out.billed_node_s = billed_at_completion_;
      out.serving_replica_s = serving_at_completion_;
    }
    return out;
  }

  ArrivalProcess& arrivals_;
  SimOptions options_;
  Rng rng_;
  std::vector<ReplicaState> replicas_;
  RequestPool pool_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::optional<Arrival> pending_;
  unsigned long long sequence_ = 0;
  size_t next_replica_ = 0;
  double now_ = 0, area_ = 0, first_arrival_ = 0, last_arrival_ = 0, last_completion_ = 0;
  long long in_flight_ = 0, peak_in_flight_ = 0, admitted_ = 0, completed_ = 0, good_ = 0, rejected_ = 0, waited_ = 0;
  std::deque<int> shared_;
  bool arrivals_open_ = true;
  std::deque<int> held_;  // arrived while no replica was ready
  int ready_ = 0, nodes_ = 0, warm_idle_ = 0, warm_pending_ = 0;
  double account_until_ = 1e18;
  double billed_area_ = 0, serving_area_ = 0, billed_at_completion_ = 0, serving_at_completion_ = 0;
  long long admitted_at_tick_ = 0, completed_at_tick_ = 0, scale_ticks_ = 0, scale_stride_ = 1;
  double next_sample_ = 0, sample_interval_ = 1.0;
  std::vector<TimeSample> samples_;
  SimResult result_;
};

}  // namespace

Result<SimResult> simulate(ArrivalProcess& arrivals, const std::vector<ReplicaConfig>& replicas,
                           const SimOptions& options) {
  if (replicas.empty()) return Error{"", 0, "replicas", "at least one replica"};
  if (const auto& s = options.scaling) {
    if (!s->decide) return Error{"", 0, "scaling", "an autoscaled run needs a scaler"};
    if (s->max_replicas < 1 || s->initial_replicas < 0 || s->initial_replicas > s->max_replicas)
      return Error{"", 0, "scaling", "initial replicas must lie in [0, max replicas] and max replicas be at least 1"};
    if (!(s->interval_s > 0) || s->start_s < 0 || s->warm_start_s < 0 || s->warm_pool < 0 || s->node_provisioning_s < 0)
      return Error{"", 0, "scaling", "interval must be positive and delays non-negative"};
  }
  for (const auto& r : replicas) {
    if (options.router == Router::shared_queue && (r.batching == SimBatching::continuous || r.llm))
      return Error{"", 0, "router", "a shared queue serves classic replicas; LLM replicas admit from their own queue"};
    bool llm = r.batching == SimBatching::continuous || (r.llm && r.batching == SimBatching::none);
    if (llm && (!r.llm || r.kv_blocks <= 0)) return Error{"", 0, "replicas", "an LLM replica needs a step model and KV blocks"};
    if (!llm && !r.batch_time) return Error{"", 0, "replicas", "a classic replica needs a batch time"};
  }
  Simulation simulation(arrivals, replicas, options);
  return simulation.run();
}

}  // namespace gw
