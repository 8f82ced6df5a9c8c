#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>

#include <fmt/format.h>

#include "core/cancel.h"
#include "sim/replica_state.h"
#include "sim/sim_event.h"
#include "sim/sim_request.h"

namespace gw {

namespace {

using namespace sim_detail;

class Simulation {
  // Requests in the system at an arrival (the overload test reads them).
  struct Mark {
    double time_s = 0;
    long long in_flight = 0, admitted = 0, timed_out = 0;
  };

 public:
  Simulation(ArrivalProcess& arrivals, const std::vector<ReplicaConfig>& configs, const SimOptions& options)
      : arrivals_(arrivals), options_(options), rng_(options.seed ^ 0x9e3779b97f4a7c15ULL),
        router_(make_request_router(options.router)) {
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
    if (options_.client_timeout_s > 0) push({first_arrival_ + expire_every(), static_cast<int>(EventKind::expire), -1, 0, 0});
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
        case EventKind::outage: on_outage(e.replica, e.time); break;
        case EventKind::outage_over: on_outage_over(e.replica, e.time); break;
        case EventKind::expire:
          give_up_expired(e.time);
          if (arrivals_open_ || in_flight_ > 0) push({e.time + expire_every(), static_cast<int>(EventKind::expire), -1, 0, 0});
          break;
      }
      if (options_.check_invariants) {
        check_invariants();
        if (completed_ + rejected_ + timed_out_ + in_flight_ != admitted_)
          violated(fmt::format("{} completed + {} rejected + {} timed out + {} in flight != {} admitted", completed_, rejected_,
                               timed_out_, in_flight_, admitted_));
        if (!invariant_error_.empty()) return Error{"", 0, "simulator invariant", invariant_error_};
      }
    }
    if (options_.check_invariants && in_flight_ != 0)
      return Error{"", 0, "simulator invariant", fmt::format("{} requests never completed ({})", in_flight_, stuck())};
    if (auto e = arrivals_.error()) return *e;
    return finish();
  }

 private:
  void push(Event e) {
    e.sequence = ++sequence_;
    events_.push(e);
  }

  // Client timeouts. A request is given up once it has waited the timeout without starting
  // service (a preempted one has started: its client is streaming).
  double expire_every() const { return options_.client_timeout_s / 8; }
  bool expired(const Request& q, double t) const {
    return options_.client_timeout_s > 0 && q.scheduled < 0 && t - q.arrival >= options_.client_timeout_s;
  }
  void give_up(int id, ReplicaState* r) {
    if (r) unassign(id, *r);
    ++timed_out_;
    --in_flight_;
    pool_.release(id);
  }
  // Gives up the expired requests at the front of a queue (queues are in arrival order, but for
  // requests moved by an outage and preempted ones, which are kept). Returns whether any went.
  bool give_up_front(std::deque<int>& queue, ReplicaState* r, double t) {
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
  void give_up_expired(double t) {
    for (auto& r : replicas_)
      if (give_up_front(r.waiting, &r, t)) maybe_stop(r);
    give_up_front(shared_, nullptr, t);
    give_up_front(held_, nullptr, t);
  }

  void advance(double t) {
    if (t > now_) {
      double dt = t - now_;
      area_ += static_cast<double>(in_flight_) * dt;
      double counted = std::min(t, account_until_ - skip_) - now_;
      if (counted > 0) {
        billed_area_ += static_cast<double>(nodes_ + warm_idle_ + warm_pending_) * counted;
        serving_area_ += static_cast<double>(ready_) * counted;
      }
      now_ = t;
    }
  }

  // A ready replica for a new request, kSharedQueue, or kNoReplicaReady (held until one is).
  int route() { return router_->route(loads_, ready_); }

  ReplicaLoad& load(const ReplicaState& r) { return loads_[r.index]; }

  void set_life(ReplicaState& r, Life life) {
    r.life = life;
    loads_[r.index].ready = life == Life::ready;
  }

  void assign(int id, int replica) {
    pool_[id].replica = replica;
    auto& state = replicas_[static_cast<size_t>(replica)];
    state.waiting.push_back(id);
    load(state).outstanding++;
    load(state).outstanding_tokens += pool_[id].input + pool_[id].output;
  }

  // The router's count of a request on its replica, taken off when the request leaves it.
  void unassign(int id, ReplicaState& r) {
    load(r).outstanding--;
    load(r).outstanding_tokens -= pool_[id].input + pool_[id].output;
  }

  // Autoscaling: what the pool looked like over the last interval, the scaler's answer, and
  // replicas started or stopped to meet it.
  void on_scale_tick(double t) {
    const ScalingOptions& s = *options_.scaling;
    give_up_expired(t);
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
        set_life(r, Life::ready);
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
        set_life(r, Life::starting);
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
          if (victim < 0 || loads_[i].outstanding < loads_[static_cast<size_t>(victim)].outstanding) victim = static_cast<int>(i);
        }
        if (victim < 0) break;
        auto& r = replicas_[static_cast<size_t>(victim)];
        set_life(r, Life::draining);
        --ready_;
        maybe_stop(r);
        --fewer;
      }
    }
    ScaleSample sample;
    sample.time_s = t + skip_;
    sample.ready = ready_;
    sample.starting = 0;
    int draining = 0;
    for (const auto& r : replicas_) {
      if (r.life == Life::starting) ++sample.starting;
      if (r.life == Life::draining) ++draining;
    }
    sample.desired = desired;
    sample.billed = nodes_ + warm_idle_ + warm_pending_;
    sample.arrival_rps = o.arrival_rps;
    sample.waiting = o.waiting;
    sample.busy_fraction = o.busy_fraction;
    record_scale(sample);
    // The pool keeps being watched (and billed) to the end of the accounted span.
    if (arrivals_open_ || in_flight_ > 0 || (account_until_ < 1e17 && t + s.interval_s <= account_until_ - skip_))
      push({t + s.interval_s, static_cast<int>(EventKind::scale_tick), -1, 0, 0});
    if (s.fast_forward) {
      const bool quiet = desired == current && sample.starting == 0 && draining == 0 && warm_pending_ == 0 && ready_ > 0 &&
                         held_.empty() && arrivals_open_;
      consider_fast_forward(t, quiet, o, sample);
    }
  }

  // What a replayed window adds again: the totals when it opened.
  struct ReplicaTotals {
    ReplicaStats stats;
    double kv_block_s = 0;
  };
  struct SteadyWindow {
    bool open = false;
    double start = 0;  // simulation clock
    LogHistogram latency, wait, ttft, tpot;
    long long completed = 0, good = 0, waited = 0, rejected = 0, timed_out = 0, held = 0, admitted = 0, in_flight = 0;
    double area = 0, billed = 0, serving = 0, tokens_finished = 0;
    std::vector<ReplicaTotals> replicas;
    std::vector<ScaleSample> scrapes;  // the scrapes after it opened
    std::vector<ScaleObservation> observed;  // what the scaler saw at them
  };

  void open_window(double t) {
    SteadyWindow& w = window_;
    w.open = true;
    w.start = t;
    w.latency = result_.latency;
    w.wait = result_.wait;
    w.ttft = result_.ttft;
    w.tpot = result_.tpot;
    w.completed = completed_;
    w.good = good_;
    w.waited = waited_;
    w.rejected = rejected_;
    w.timed_out = timed_out_;
    w.held = result_.held_requests;
    w.admitted = admitted_;
    w.in_flight = in_flight_;
    w.area = area_;
    w.billed = billed_area_;
    w.serving = serving_area_;
    w.tokens_finished = tokens_finished_;
    w.replicas.resize(replicas_.size());
    for (size_t i = 0; i < replicas_.size(); ++i) {
      w.replicas[i].stats = replicas_[i].stats;
      w.replicas[i].kv_block_s = replicas_[i].kv_block_s;
    }
    w.scrapes.clear();
    w.observed.clear();
  }

  // At a scrape: a quiet one (the scaler kept the count, nothing starting or draining) extends
  // the steady window; once the window is long and full enough, the load in it steady and the
  // scaler would keep the count on its observations again, it is replayed as many whole times
  // as the arrival rate still holds, and a new window opens.
  void consider_fast_forward(double t, bool quiet, const ScaleObservation& observed, const ScaleSample& scrape) {
    const ScalingOptions& s = *options_.scaling;
    SteadyWindow& w = window_;
    if (!quiet) {
      w.open = false;
      return;
    }
    const double start_real = w.start + skip_;
    const double until = std::min({arrivals_.stationary_until(start_real), account_until_, options_.max_duration_s});
    if (!(until < 1e17)) return;  // no end to the span: nothing to replay up to
    if (!w.open || until < t + skip_) {
      open_window(t);  // a new rate (or none before): the window starts here
      return;
    }
    w.scrapes.push_back(scrape);
    w.observed.push_back(observed);
    const double length = t - w.start;
    if (length < s.fast_forward_window_s - 1e-9 || completed_ - w.completed < s.fast_forward_requests) return;
    // Whole replays that end, the next arrival moved on with them, a scrape before the rate changes.
    const double next_real = std::max(t + skip_, pending_ ? pending_->time_s : t + skip_);
    const double replays = std::floor((until - next_real - s.interval_s) / length);
    if (replays < 1) return;
    // Steady: requests in the system moved by no more than noise (and a small share of the
    // window's arrivals), and the queue is short against them. Otherwise start again from here.
    const double arrived = static_cast<double>(admitted_ - w.admitted);
    const double growth = std::fabs(static_cast<double>(in_flight_ - w.in_flight));
    const bool steady = growth <= std::min(3 * std::sqrt(static_cast<double>(w.in_flight) + 1), 0.005 * arrived) + 5 &&
                        static_cast<double>(observed.waiting) <= 0.05 * arrived;
    const double scrapes_ahead = replays * static_cast<double>(w.observed.size());
    if (steady && s.would_hold && s.expected_changes && s.would_hold(twice_again(length)) &&
        s.expected_changes(w.observed, scrapes_ahead) < s.fast_forward_change_odds) {
      // Requests in the replays: the mean rate over their span, where the process knows it (a
      // window's own count would carry its noise into every replay).
      const double rate = arrivals_.rate_at(start_real);
      const double expected = rate > 0 ? rate * replays * length : replays * arrived;
      replay_window(t, static_cast<long long>(replays), length, arrived > 0 ? expected / arrived : replays);
    }
    open_window(t);
  }

  // The window's observations twice more, as the replays would show them: if the scaler keeps
  // its count over two, its state after each is the one it has now, so it keeps it over any number.
  std::vector<ScaleObservation> twice_again(double length) const {
    std::vector<ScaleObservation> again;
    again.reserve(2 * window_.observed.size());
    for (int copy = 1; copy <= 2; ++copy)
      for (ScaleObservation o : window_.observed) {
        o.time_s += copy * length;
        again.push_back(o);
      }
    return again;
  }

  // Counts the window again and moves the clock and the arrivals on by `times` windows: what
  // accrues with time (billing, busy time, steps, scrapes) `times` over, what comes with requests
  // (completions, latencies, tokens) `per_request` over. Requests in the system stay as they are
  // (the replays' net change is none, so every request admitted is still completed, rejected or
  // in flight exactly once).
  void replay_window(double t, long long times, double length, double per_request) {
    SteadyWindow& w = window_;
    result_.latency.repeat_since(w.latency, per_request);
    result_.wait.repeat_since(w.wait, per_request);
    result_.ttft.repeat_since(w.ttft, per_request);
    result_.tpot.repeat_since(w.tpot, per_request);
    auto more = [per_request](long long now, long long before) {
      return static_cast<long long>(std::llround(per_request * static_cast<double>(now - before)));
    };
    const long long completed = more(completed_, w.completed), rejected = more(rejected_, w.rejected);
    const long long timed_out = more(timed_out_, w.timed_out);
    const long long done = completed + rejected + timed_out;
    completed_ += completed;
    rejected_ += rejected;
    timed_out_ += timed_out;
    good_ += more(good_, w.good);
    waited_ += more(waited_, w.waited);
    result_.held_requests += more(result_.held_requests, w.held);
    const long long admitted_before = admitted_;
    admitted_ += done;
    admitted_at_tick_ += done;
    completed_at_tick_ += completed + rejected;
    const double td = static_cast<double>(times);
    area_ += td * (area_ - w.area);
    billed_area_ += td * (billed_area_ - w.billed);
    serving_area_ += td * (serving_area_ - w.serving);
    billed_at_completion_ = billed_area_;
    serving_at_completion_ = serving_area_;
    const double finished = per_request * (tokens_finished_ - w.tokens_finished);
    tokens_finished_ += finished;
    tokens_emitted_ += finished;
    for (size_t i = 0; i < replicas_.size(); ++i) {
      ReplicaState& r = replicas_[i];
      const ReplicaTotals& before = w.replicas[i];
      const double busy = td * (r.stats.busy_s - before.stats.busy_s);
      r.stats.busy_s += busy;
      r.busy_observed += busy;
      r.stats.requests += more(r.stats.requests, before.stats.requests);
      r.stats.steps += times * (r.stats.steps - before.stats.steps);
      r.stats.preemptions += times * (r.stats.preemptions - before.stats.preemptions);
      r.stats.recomputed_tokens += times * (r.stats.recomputed_tokens - before.stats.recomputed_tokens);
      r.stats.swapped_tokens += times * (r.stats.swapped_tokens - before.stats.swapped_tokens);
      r.kv_block_s += td * (r.kv_block_s - before.kv_block_s);
      for (size_t b = 0; b < r.stats.batch_sizes.size() && b < before.stats.batch_sizes.size(); ++b)
        r.stats.batch_sizes[b] += times * (r.stats.batch_sizes[b] - before.stats.batch_sizes[b]);
    }
    // The scrapes and samples of each replay, at their own times.
    const double t_real = t + skip_;
    std::vector<TimeSample> window_samples;
    for (const TimeSample& sample : samples_)
      if (sample.time_s > w.start + skip_) window_samples.push_back(sample);
    for (long long j = 1; j <= times; ++j) {
      const double shift = static_cast<double>(j) * length;
      for (ScaleSample scrape : w.scrapes) {
        scrape.time_s += shift;
        record_scale(scrape);
      }
      for (TimeSample sample : window_samples) {
        sample.time_s += shift;
        if (sample.time_s >= next_sample_) keep_sample(sample);
      }
      push_mark({t_real + shift, in_flight_, admitted_before + j * done / times, timed_out_ - timed_out + j * timed_out / times});
    }
    const double skipped = td * length;
    skip_ += skipped;
    last_arrival_ += skipped;
    last_completion_ += skipped;
    if (pending_) pending_->time_s += skipped;
    arrivals_.skip(skipped);
    last_mark_ = {t + skip_, in_flight_, admitted_, timed_out_};
    result_.fast_forwarded_s += skipped;
    result_.fast_forward_replays += times;
    if (options_.on_progress) options_.on_progress(admitted_);
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
    set_life(r, Life::ready);
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
      if (expired(pool_[id], t)) {
        give_up(id, nullptr);
        continue;
      }
      assign(id, replica);
      try_start(replica, t);
    }
  }

  // A draining replica stops (and stops being billed) once it holds no work.
  void maybe_stop(ReplicaState& r) {
    if (r.life == Life::draining && load(r).outstanding == 0 && !r.busy) stop(r);
  }

  void stop(ReplicaState& r) {
    set_life(r, Life::off);
    --nodes_;
    if (r.outage >= 0) {
      OutageResult& o = result_.outages[static_cast<size_t>(r.outage)];
      o.drained_s = std::max(o.drained_s, now_ - o.at_s);
      return;
    }
    // The node stays as a warm one when the pool is short of its size.
    if (warm_idle_ + warm_pending_ < options_.scaling->warm_pool) ++warm_idle_;
  }

  // A node is reclaimed: its replicas stop taking work, hand on what they had not started, and
  // finish what they hold.
  void on_outage(int index, double t) {
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
        moved.push_back(id);
      }
      r.waiting.clear();
      maybe_stop(r);
    }
    o.rerouted += static_cast<long long>(moved.size());
    for (int id : moved)
      if (int replica = place(id); replica >= 0) try_start(replica, t);
    if (options_.router == Router::shared_queue)
      for (size_t i = 0; i < replicas_.size(); ++i)
        if (replicas_[i].life == Life::ready) try_start(static_cast<int>(i), t);
  }

  // The replacement node serves in the lost replicas' slots.
  void on_outage_over(int index, double t) {
    for (int i : options_.outages[static_cast<size_t>(index)].replicas) {
      auto& r = replicas_[static_cast<size_t>(i)];
      if (r.outage != index) continue;
      if (r.life == Life::off) ++nodes_;
      set_life(r, Life::ready);
      r.outage = -1;
      ++ready_;
      r.observed_since = t;
      r.busy_observed = r.stats.busy_s + (r.busy ? t - r.step_started : 0);
      dispatch_held(t);
      try_start(i, t);
    }
  }

  // Routes a request and queues it there: on a replica (returned), in the shared queue (-1), or
  // held until a replica is ready (-2). The caller starts the replica once its own state is set.
  int place(int id) {
    int replica = route();
    if (replica == kSharedQueue) {
      shared_.push_back(id);
      if (ready_ == 0) ++result_.held_requests;
    } else if (replica == kNoReplicaReady) {
      held_.push_back(id);
      ++result_.held_requests;
    } else {
      assign(id, replica);
    }
    return replica;
  }

  void on_arrival(double t) {
    Request r;
    r.arrival = t;
    r.input = pending_->input_tokens;
    r.output = std::max(1.0, pending_->output_tokens);
    r.prompt = r.input;
    r.arrival_order = admitted_;
    int id = pool_.add(r);
    int replica = place(id);
    ++admitted_;
    if ((admitted_ & 0xFFFF) == 0 && options_.on_progress) options_.on_progress(admitted_);
    last_arrival_ = t + skip_;
    ++in_flight_;
    peak_in_flight_ = std::max(peak_in_flight_, in_flight_);
    mark(t);
    sample(t);
    arrivals_open_ = false;
    if (admitted_ < options_.max_requests) {
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

  void try_start(int index, double t) {
    auto& r = replicas_[static_cast<size_t>(index)];
    if (r.busy) return;
    if (is_llm(*r.config)) {
      start_llm_step(index, t);
    } else {
      start_batch(index, t);
    }
  }

  // Classic servers: the replica's batcher says how many to take now, or when to look again.
  void start_batch(int index, double t) {
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
    double duration = r.config->batch_time(static_cast<int>(take), rng_);
    r.busy = true;
    r.step_started = t;
    r.stats.steps++;
    r.stats.batch_sizes[std::min(take, r.stats.batch_sizes.size() - 1)]++;
    push({t + duration, static_cast<int>(EventKind::step_done), index, 0, 0});
  }

  // LLM servers: one step under the replica's scheduler (see LlmScheduler).
  void start_llm_step(int index, double t) {
    auto& r = replicas_[static_cast<size_t>(index)];
    const ReplicaConfig& c = *r.config;
    swap_tokens_now_ = 0;
    long long new_blocks = 0;
    // A round that preempted or rejected every running request builds the step again: the
    // queues it changed may run now (each round empties the running set or stops).
    for (int round = 0; round < 4; ++round) {
      const long long rejected_before = rejected_;
      new_blocks = build_step(index, t);
      if (r.step_decodes || !r.step_chunks.empty() || (!preempted_now_ && rejected_ == rejected_before)) break;
    }
    if (!r.step_decodes && r.step_chunks.empty()) return;  // nothing to do: idle
    double prefill_tokens = 0, attended = 0, completing = 0;
    for (auto [id, chunk] : r.step_chunks) {
      const Request& q = pool_[id];
      double done = q.prompt - q.prefill_left;
      attended += chunk * done + chunk * chunk / 2;
      prefill_tokens += chunk;
      if (chunk >= q.prefill_left) ++completing;
    }
    double decode_n = r.step_decodes ? static_cast<double>(r.decoding_count) : 0;
    // Each decoding sequence attends to its KV and the token it writes now.
    double context = r.step_decodes ? r.context_sum + decode_n : 0;
    double duration = c.llm->step_time_s(decode_n, context, prefill_tokens, attended, decode_n + completing);
    if (options_.step_sample_every > 0 && llm_steps_++ % options_.step_sample_every == 0)
      result_.step_samples.push_back({index, decode_n, context, prefill_tokens, attended, decode_n + completing});
    if (swap_tokens_now_ > 0 && c.swap_bytes_per_s > 0)
      duration += swap_tokens_now_ * c.llm->kv_bytes_per_token() / c.swap_bytes_per_s;
    if (r.step_decodes) {
      // The blocks this step's tokens go into are allocated now, as the engine does before it runs.
      if (r.scheduler->paged()) r.blocks_used += new_blocks;
      r.context_sum += decode_n;
      r.decode_step++;
      tokens_emitted_ += decode_n;
    }
    r.kv_block_s += static_cast<double>(r.blocks_used) * duration;
    r.busy = true;
    r.step_started = t;
    r.stats.steps++;
    size_t batch = static_cast<size_t>(decode_n) + r.step_chunks.size();
    r.stats.batch_sizes[std::min(batch, r.stats.batch_sizes.size() - 1)]++;
    push({t + duration, static_cast<int>(EventKind::step_done), index, 0, 0});
  }

  // The scheduler's operations on one replica while it builds a step.
  class ReplicaStepBuilder final : public LlmStepBuilder {
   public:
    ReplicaStepBuilder(Simulation& sim, int index, double t)
        : sim_(sim), r_(sim.replicas_[static_cast<size_t>(index)]), index_(index), t_(t) {}
    long long decoding() const override { return r_.decoding_count; }
    bool has_swapped() const override { return !r_.swapped.empty(); }
    bool has_prompt_chunks() const override { return !r_.step_chunks.empty(); }
    bool preempted() const override { return sim_.preempted_now_; }
    int token_budget() const override { return r_.config->token_budget; }
    long long make_room_for_decodes() override { return sim_.make_room_for_decodes(index_); }
    long long swap_in() override { return sim_.swap_in(index_); }
    void decode_running() override { r_.step_decodes = r_.decoding_count > 0; }
    void continue_prefills(double& budget, long long reserved) override { sim_.continue_prefills(index_, budget, reserved); }
    void admit_whole() override { sim_.admit(index_, t_, false); }
    void admit_chunked(double& budget, long long& reserved) override { sim_.admit(index_, t_, true, budget, reserved); }

   private:
    Simulation& sim_;
    ReplicaState& r_;
    int index_;
    double t_;
  };

  // One round of the replica's scheduler: what runs in this step (decodes, prompt chunks),
  // preempting and admitting as the engine does. Returns the KV blocks the step's decode tokens need.
  long long build_step(int index, double t) {
    auto& r = replicas_[static_cast<size_t>(index)];
    r.step_chunks.clear();
    r.step_decodes = false;
    preempted_now_ = false;
    ReplicaStepBuilder step(*this, index, t);
    return r.scheduler->build_step(step);
  }

  // Free blocks a scheduler keeps back when admitting.
  static long long watermark_blocks(const ReplicaState& r) {
    return r.scheduler->watermark_blocks(r.config->watermark_fraction, r.config->kv_blocks);
  }

  static long long blocks_to_admit(const ReplicaState& r, const Request& q, double chunk) {
    const ReplicaConfig& c = *r.config;
    return r.scheduler->admission_blocks(q.prompt, q.input + q.output, chunk, std::max(1, c.block_tokens),
                                         c.max_sequence_tokens);
  }

  // Admits waiting requests, oldest first, while sequence slots, tokens and blocks remain.
  // chunked: prompts may be cut to the budget; otherwise whole (the first of a step may exceed
  // the budget, as on a server whose budget covers its longest prompt).
  void admit(int index, double t, bool chunked) {
    double budget = 0;
    long long reserved = 0;
    admit(index, t, chunked, budget, reserved);
  }
  void admit(int index, double t, bool chunked, double& budget, long long& reserved) {
    auto& r = replicas_[static_cast<size_t>(index)];
    const ReplicaConfig& c = *r.config;
    const long long max_sequences = c.batching == SimBatching::none ? 1 : std::max(1, c.max_batch);
    const long long watermark = watermark_blocks(r);
    const bool budgeted = r.scheduler->budgets_tokens();
    if (!chunked) budget = c.token_budget;
    while (!r.waiting.empty() && r.decoding_count + static_cast<long long>(r.prefilling.size()) < max_sequences) {
      int id = r.waiting.front();
      Request& q = pool_[id];
      if (expired(q, t)) {
        r.waiting.pop_front();
        give_up(id, &r);
        continue;
      }
      if (blocks_to_admit(r, q, q.prompt) > c.kv_blocks - watermark) {
        // Never fits, even alone: a server rejects it; counted, never silently dropped.
        r.waiting.pop_front();
        reject(id, r);
        continue;
      }
      double chunk = q.prompt;
      if (chunked) {
        if (budget < 1) break;
        chunk = std::min(q.prompt, std::floor(budget));
      } else if (budgeted && !r.step_chunks.empty() && chunk > budget) {
        break;
      }
      long long need = blocks_to_admit(r, q, chunk);
      if (c.kv_blocks - r.blocks_used - reserved - need < watermark) break;
      r.waiting.pop_front();
      r.blocks_used += need;
      q.blocks = need;
      q.prefill_left = q.prompt;
      q.stage = Stage::prefilling;
      if (q.scheduled < 0) q.scheduled = t;
      r.prefilling.push_back(id);
      add_victim(r, id);
      budget -= chunk;
      r.step_chunks.emplace_back(id, chunk);
    }
  }

  // Prompts admitted earlier go on, chunk by chunk, in admission order.
  void continue_prefills(int index, double& budget, long long reserved) {
    auto& r = replicas_[static_cast<size_t>(index)];
    const ReplicaConfig& c = *r.config;
    const int block = std::max(1, c.block_tokens);
    for (int id : r.prefilling) {
      if (budget < 1) break;
      Request& q = pool_[id];
      double chunk = std::min(q.prefill_left, std::floor(budget));
      if (r.scheduler->allocates_as_scheduled()) {
        // Blocks for the tokens scheduled now, as far as free blocks go.
        double done = q.prompt - q.prefill_left;
        long long free = c.kv_blocks - r.blocks_used - reserved;
        chunk = std::min(chunk, static_cast<double>((q.blocks + free) * block) - done);
        if (chunk < 1) break;
        long long need = blocks_for(done + chunk, block) - q.blocks;
        r.blocks_used += need;
        q.blocks += need;
      }
      budget -= chunk;
      r.step_chunks.emplace_back(id, chunk);
    }
  }

  // Blocks the decoding sequences need for this step's tokens; preempts running requests in
  // the scheduler's order until they fit. Returns the blocks to allocate.
  long long make_room_for_decodes(int index) {
    auto& r = replicas_[static_cast<size_t>(index)];
    const ReplicaConfig& c = *r.config;
    if (!r.scheduler->paged() || r.decoding_count == 0) return 0;
    const int block = std::max(1, c.block_tokens);
    long long new_blocks = r.phase_count[static_cast<size_t>(r.decode_step % block)];
    while (r.decoding_count > 0 && r.blocks_used + new_blocks > c.kv_blocks) {
      int victim = next_victim(index);
      if (victim < 0) break;
      const Request& v = pool_[victim];
      if (v.stage == Stage::decoding && (r.decode_step % block) == v.phase) new_blocks--;  // its growth was counted
      preempt(index, victim);
    }
    return new_blocks;
  }

  // Swapped-out sequences come back, oldest first, while their blocks (and this step's token)
  // fit above the watermark; they decode in this step. Returns their new blocks for the step.
  long long swap_in(int index) {
    auto& r = replicas_[static_cast<size_t>(index)];
    const ReplicaConfig& c = *r.config;
    const int block = std::max(1, c.block_tokens);
    const long long max_sequences = std::max(1, c.max_batch);
    const long long watermark = watermark_blocks(r);
    long long pending = r.decoding_count > 0 ? r.phase_count[static_cast<size_t>(r.decode_step % block)] : 0;
    long long added = 0;
    while (!r.swapped.empty() && r.decoding_count + static_cast<long long>(r.prefilling.size()) < max_sequences) {
      int id = r.swapped.front();
      Request& q = pool_[id];
      long long held = blocks_for(q.length, block);
      long long grow = static_cast<long long>(q.length) % block == 0 ? 1 : 0;
      if (held + grow > c.kv_blocks - watermark) {
        // Grew past what the cache can hold even alone: a server fails it; counted.
        r.swapped.pop_front();
        reject(id, r);
        continue;
      }
      if (r.blocks_used + pending + added + held + grow > c.kv_blocks - watermark) break;
      r.swapped.pop_front();
      r.blocks_used += held;
      swap_tokens_now_ += q.length;
      join_decoding(r, id, q.length);
      add_victim(r, id);
      added += grow;
    }
    return added;
  }

  void add_victim(ReplicaState& r, int id) {
    const Request& q = pool_[id];
    long long key = r.scheduler->preempts_latest_admitted() ? ++r.admissions : q.arrival_order;
    r.victims.push({key, id, q.version});
    const size_t running = static_cast<size_t>(r.decoding_count) + r.prefilling.size();
    if (r.victims.size() > 2 * running + 64) {
      // Drop entries of requests that finished or were preempted since.
      std::vector<VictimEntry> live;
      while (!r.victims.empty()) {
        VictimEntry e = r.victims.top();
        r.victims.pop();
        if (is_running(e)) live.push_back(e);
      }
      r.victims = std::priority_queue<VictimEntry>(std::less<VictimEntry>(), std::move(live));
    }
  }

  bool is_running(const VictimEntry& e) {
    const Request& q = pool_[e.id];
    return q.live && q.version == e.version && (q.stage == Stage::prefilling || q.stage == Stage::decoding);
  }

  int next_victim(int index) {
    auto& r = replicas_[static_cast<size_t>(index)];
    while (!r.victims.empty()) {
      VictimEntry e = r.victims.top();
      r.victims.pop();
      if (is_running(e) && pool_[e.id].replica == index) return e.id;
    }
    return -1;
  }

  void join_decoding(ReplicaState& r, int id, double length) {
    Request& q = pool_[id];
    const int block = std::max(1, r.config->block_tokens);
    q.stage = Stage::decoding;
    q.length = length;
    q.join_step = r.decode_step;
    q.generated_at_join = q.generated;
    long long base = static_cast<long long>(length);
    q.phase = static_cast<int>(((q.join_step - base) % block + block) % block);
    if (r.scheduler->paged()) r.phase_count[static_cast<size_t>(q.phase)]++;
    r.decoding_count++;
    r.context_sum += length;
    r.decoding.push({r.decode_step + static_cast<long long>(q.output - q.generated), id, q.version});
  }

  // Tokens a decoding request holds in the KV cache now (its steps so far, the one in progress too).
  double kv_tokens(const ReplicaState& r, const Request& q) const {
    return q.length + static_cast<double>(r.decode_step - q.join_step);
  }

  // Takes a running request off the replica: its KV is dropped (recompute: prompt and generated
  // tokens are prefilled again when it is readmitted, first in line) or moved to host (swap).
  void preempt(int index, int id) {
    auto& r = replicas_[static_cast<size_t>(index)];
    const ReplicaConfig& c = *r.config;
    const int block = std::max(1, c.block_tokens);
    Request& q = pool_[id];
    double tokens = 0;
    if (q.stage == Stage::decoding) {
      tokens = kv_tokens(r, q);
      q.generated = q.generated_at_join + static_cast<double>(r.decode_step - q.join_step);
      r.phase_count[static_cast<size_t>(q.phase)]--;
      r.decoding_count--;
      r.context_sum -= tokens;
      r.blocks_used -= blocks_for(tokens, block);
    } else {
      tokens = q.prompt - q.prefill_left;
      r.prefilling.erase(std::find(r.prefilling.begin(), r.prefilling.end(), id));
      r.blocks_used -= q.blocks;
    }
    q.version++;  // its heap entries are stale now
    q.blocks = 0;
    r.stats.preemptions++;
    preempted_now_ = true;
    if (c.preemption == Preemption::swap && q.stage == Stage::decoding) {
      q.length = tokens;
      q.stage = Stage::swapped;
      r.swapped.push_back(id);
      swap_tokens_now_ += tokens;
      r.stats.swapped_tokens += static_cast<long long>(tokens);
      return;
    }
    r.stats.recomputed_tokens += static_cast<long long>(tokens);
    q.prompt = q.input + q.generated;
    q.prefill_left = 0;
    q.length = 0;
    q.stage = Stage::queued;
    r.waiting.push_front(id);
  }

  void reject(int id, ReplicaState& r) {
    const Request& q = pool_[id];
    tokens_finished_ += q.generated;
    unassign(id, r);
    ++rejected_;
    --in_flight_;
    pool_.release(id);
  }

  // Where requests are left when a run ends with some in flight.
  std::string stuck() const {
    std::string text;
    for (size_t i = 0; i < replicas_.size(); ++i) {
      const auto& r = replicas_[i];
      text += fmt::format("{}replica {}: {} waiting, {} prefilling, {} decoding, {} swapped, {} of {} blocks used", i ? "; " : "",
                          i, r.waiting.size(), r.prefilling.size(), r.decoding_count, r.swapped.size(), r.blocks_used,
                          r.config->kv_blocks);
      if (!r.waiting.empty()) {
        const Request& q = const_cast<RequestPool&>(pool_)[r.waiting.front()];
        text += fmt::format(", first waiting: prompt {} output {} generated {}", q.prompt, q.output, q.generated);
      }
    }
    return text;
  }

  // Violations found by the invariant checks; the run ends with the first.
  void violated(std::string what) {
    if (invariant_error_.empty()) invariant_error_ = fmt::format("t={:.6f} s: {}", now_, what);
  }

  // Every LLM replica's counters against what its requests hold, request by request, and the
  // tokens emitted by steps against those the requests have (one pass over the requests).
  void check_invariants() {
    struct Held {
      long long blocks = 0, decoding = 0, prefilling = 0;
      double context = 0;
    };
    std::vector<Held> held(replicas_.size());
    double generated = 0;
    for (size_t i = 0; i < pool_.size(); ++i) {
      const Request& q = pool_[static_cast<int>(i)];
      if (!q.live) continue;
      if (q.replica < 0 || !is_llm(*replicas_[static_cast<size_t>(q.replica)].config)) continue;
      const auto& r = replicas_[static_cast<size_t>(q.replica)];
      const int block = std::max(1, r.config->block_tokens);
      Held& h = held[static_cast<size_t>(q.replica)];
      double now = q.generated;
      if (q.stage == Stage::prefilling) {
        ++h.prefilling;
        h.blocks += q.blocks;
        if (q.prompt != q.input + q.generated)
          return violated(fmt::format("request {}: prompt {} is not input {} + generated {}", i, q.prompt, q.input, q.generated));
      } else if (q.stage == Stage::decoding) {
        ++h.decoding;
        double tokens = kv_tokens(r, q);
        h.blocks += r.scheduler->paged() ? blocks_for(tokens, block) : q.blocks;
        h.context += tokens;
        now = q.generated_at_join + static_cast<double>(r.decode_step - q.join_step);
        if (tokens + 1 != q.input + now)
          return violated(fmt::format("request {}: {} tokens in KV with {} input and {} generated", i, tokens, q.input, now));
      }
      if (now < 0 || now > q.output)
        return violated(fmt::format("request {}: {} of {} tokens generated", i, now, q.output));
      generated += now;
    }
    for (size_t i = 0; i < replicas_.size(); ++i) {
      const auto& r = replicas_[i];
      const Held& h = held[i];
      if (!is_llm(*r.config)) continue;
      if (r.blocks_used < 0 || r.blocks_used > r.config->kv_blocks)
        return violated(fmt::format("replica {}: {} KV blocks used of {}", i, r.blocks_used, r.config->kv_blocks));
      if (h.blocks != r.blocks_used)
        return violated(fmt::format("replica {}: {} KV blocks counted, requests hold {}", i, r.blocks_used, h.blocks));
      if (h.decoding != r.decoding_count || h.prefilling != static_cast<long long>(r.prefilling.size()))
        return violated(fmt::format("replica {}: {} decoding and {} prefilling counted, {} and {} found", i,
                                    r.decoding_count, r.prefilling.size(), h.decoding, h.prefilling));
      if (std::abs(h.context - r.context_sum) > 1e-6 * std::max(1.0, h.context))
        return violated(fmt::format("replica {}: context {} counted, {} held", i, r.context_sum, h.context));
    }
    // Tokens are conserved across preemptions: what steps emitted is what requests have.
    if (std::abs(tokens_emitted_ - generated - tokens_finished_) > 0.5)
      violated(fmt::format("steps emitted {} tokens; requests hold {} and finished ones took {}", tokens_emitted_,
                           generated, tokens_finished_));
  }

  void complete(int id, double t) {
    Request& q = pool_[id];
    if (!q.live) return violated(fmt::format("request {} completed twice", id));
    if (is_llm(*replicas_[static_cast<size_t>(q.replica)].config)) tokens_finished_ += q.output;
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
    unassign(id, r);
    r.stats.requests++;
    ++completed_;
    --in_flight_;
    last_completion_ = t + skip_;
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
    if (!is_llm(c)) {
      for (int id : r.batch) {
        pool_[id].first_token = t;
        complete(id, t);
      }
      r.batch.clear();
      sample(t);
      try_start(index, t);
      maybe_stop(r);
      return;
    }
    const int block = std::max(1, c.block_tokens);
    const bool paged = r.scheduler->paged();
    if (r.step_decodes) {
      // Every decoding sequence produced a token; those with all their tokens are done.
      while (!r.decoding.empty() && r.decoding.top().finish_step <= r.decode_step) {
        DecodeEntry entry = r.decoding.top();
        r.decoding.pop();
        Request& q = pool_[entry.id];
        if (!q.live || q.version != entry.version || q.stage != Stage::decoding) continue;  // preempted since
        double tokens = kv_tokens(r, q);
        if (paged) r.phase_count[static_cast<size_t>(q.phase)]--;
        r.decoding_count--;
        r.context_sum -= tokens;
        r.blocks_used -= paged ? blocks_for(tokens, block) : q.blocks;
        q.generated = q.output;
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
      tokens_emitted_ += 1;
      if (q.generated >= q.output) {
        r.blocks_used -= q.blocks;
        q.stage = Stage::queued;
        complete(id, t);
        continue;
      }
      join_decoding(r, id, q.prompt);
    }
    r.step_chunks.clear();
    sample(t);
    try_start(index, t);
    maybe_stop(r);
  }

  // Requests in the system at arrivals, bounded: when full, keep every other mark.
  void mark(double t) {
    last_mark_ = {t + skip_, in_flight_, admitted_, timed_out_};
    if (admitted_ % mark_stride_ != 0) return;
    push_mark(last_mark_);
  }

  void push_mark(const Mark& m) {
    marks_.push_back(m);
    if (marks_.size() >= 1024) {
      std::vector<Mark> kept;
      for (size_t i = 0; i < marks_.size(); i += 2) kept.push_back(marks_[i]);
      marks_ = std::move(kept);
      mark_stride_ *= 2;
    }
  }

  void sample(double t) {
    if (options_.timeseries_points <= 0) return;
    if (t + skip_ < next_sample_) return;
    TimeSample s;
    s.time_s = t + skip_;
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
    keep_sample(s);
  }

  void keep_sample(const TimeSample& s) {
    samples_.push_back(s);
    next_sample_ = s.time_s + sample_interval_;
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
    const long long judged = completed_ + timed_out_;
    out.slo_attainment = judged ? static_cast<double>(good_) / static_cast<double>(judged) : 1;
    out.mean_in_system = area_ / out.duration_s;
    out.arrival_rate_rps = last_arrival_ > first_arrival_ ? static_cast<double>(admitted_ - 1) / (last_arrival_ - first_arrival_) : 0;
    for (auto& r : replicas_) {
      r.stats.busy_fraction = r.stats.busy_s / out.duration_s;
      if (r.config->kv_blocks > 0 && r.config->llm) {
        r.stats.kv_blocks = r.config->kv_blocks;
        r.stats.block_tokens = r.config->block_tokens;
        r.stats.mean_kv_used_fraction = r.kv_block_s / static_cast<double>(r.config->kv_blocks) / out.duration_s;
      }
      double steps = 0, items = 0;
      for (size_t b = 0; b < r.stats.batch_sizes.size(); ++b) {
        steps += static_cast<double>(r.stats.batch_sizes[b]);
        items += static_cast<double>(b * r.stats.batch_sizes[b]);
      }
      r.stats.mean_batch = steps > 0 ? items / steps : 0;
      out.preemptions += r.stats.preemptions;
      out.recomputed_tokens += r.stats.recomputed_tokens;
      out.swapped_tokens += r.stats.swapped_tokens;
      out.replicas.push_back(r.stats);
    }
    out.admitted = admitted_;
    // Stable or overloaded: requests in the system over the last quarter of the arrivals.
    if (marks_.size() >= 2) {
      double from = first_arrival_ + 0.75 * (last_arrival_ - first_arrival_);
      const Mark* start = &marks_.front();
      for (const auto& m : marks_)
        if (m.time_s <= from) start = &m;
      const Mark& end = last_mark_;
      double arrived = static_cast<double>(end.admitted - start->admitted);
      double growth = static_cast<double>(end.in_flight - start->in_flight);
      if (arrived > 0) {
        out.backlog_growth = growth / arrived;
        // A growing queue, beyond the noise of a stable one.
        out.overloaded = out.backlog_growth > 0.05 && growth > 3 * std::sqrt(static_cast<double>(start->in_flight) + 1);
        // Or held at the timeout's length: clients gave up on over 1% of what arrived.
        out.timed_out_share = static_cast<double>(end.timed_out - start->timed_out) / arrived;
        if (out.timed_out_share > 0.01) out.overloaded = true;
      }
      // Or one left far behind: over 5% of the requests still in the system at the last arrival
      // (in a stable queue that share is the mean time in the system over the arrival span, by
      // Little's law) and over 5% of the span to drain them: the queue grew earlier and never caught up.
      out.backlog_at_last_arrival = end.in_flight;
      out.drain_s = std::max(0.0, last_completion_ - last_arrival_);
      double span = last_arrival_ - first_arrival_;
      if (span > 0 && out.drain_s > 0.05 * span && static_cast<double>(end.in_flight) > 0.05 * static_cast<double>(admitted_))
        out.overloaded = true;
    }
    out.timeseries = samples_;
    out.peak_in_flight = peak_in_flight_;
    out.rejected = rejected_;
    out.timed_out = timed_out_;
    out.waited_fraction = completed_ ? static_cast<double>(waited_) / static_cast<double>(completed_) : 0;
    if (account_until_ < 1e17) {
      advance(account_until_ - skip_);  // to the end of the span: idle pools are paid for too
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
  std::unique_ptr<RequestRouter> router_;
  std::vector<ReplicaLoad> loads_;  // what the router sees, replica by replica
  double now_ = 0, area_ = 0, first_arrival_ = 0, last_arrival_ = 0, last_completion_ = 0;
  long long in_flight_ = 0, peak_in_flight_ = 0, admitted_ = 0, completed_ = 0, good_ = 0, rejected_ = 0, waited_ = 0;
  long long timed_out_ = 0;
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
  long long llm_steps_ = 0;  // for SimOptions::step_sample_every
  std::vector<Mark> marks_;
  Mark last_mark_;
  long long mark_stride_ = 1;
  double skip_ = 0;  // seconds fast-forwarded: the traffic's clock is the simulation's plus this
  SteadyWindow window_;
  bool preempted_now_ = false;     // the step being built preempted a request
  double swap_tokens_now_ = 0;     // KV tokens the step being built moves to or from host
  std::string invariant_error_;
  double tokens_emitted_ = 0, tokens_finished_ = 0;  // LLM tokens, for the conservation check
};

}  // namespace

double quantile_with_timeouts(const LogHistogram& served, long long timed_out, double q) {
  const double n = static_cast<double>(served.count()), all = n + static_cast<double>(std::max(0LL, timed_out));
  if (all <= 0) return 0;
  const double within = q * all;  // requests at or below the quantile, all of them served
  if (within > n + 1e-9) return std::numeric_limits<double>::infinity();
  return served.quantile(timed_out > 0 ? within / n : q);
}

Result<SimResult> simulate(ArrivalProcess& arrivals, const std::vector<ReplicaConfig>& replicas,
                           const SimOptions& options) {
  if (!(options.client_timeout_s >= 0)) return Error{"", 0, "client_timeout_s", "must be 0 (none) or positive"};
  if (replicas.empty()) return Error{"", 0, "replicas", "at least one replica"};
  if (const auto& s = options.scaling) {
    if (!s->decide) return Error{"", 0, "scaling", "an autoscaled run needs a scaler"};
    if (s->max_replicas < 1 || s->initial_replicas < 0 || s->initial_replicas > s->max_replicas)
      return Error{"", 0, "scaling", "initial replicas must lie in [0, max replicas] and max replicas be at least 1"};
    if (!(s->interval_s > 0) || s->start_s < 0 || s->warm_start_s < 0 || s->warm_pool < 0 || s->node_provisioning_s < 0)
      return Error{"", 0, "scaling", "interval must be positive and delays non-negative"};
    if (!options.outages.empty()) return Error{"", 0, "outages", "outages are simulated on a fixed pool, not an autoscaled one"};
  }
  for (const auto& o : options.outages) {
    if (!(o.at_s >= 0) || !(o.replacement_s >= 0)) return Error{"", 0, "outages", "outage times must be non-negative"};
    for (int i : o.replicas)
      if (i < 0 || i >= static_cast<int>(replicas.size())) return Error{"", 0, "outages", fmt::format("no replica {}", i)};
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
