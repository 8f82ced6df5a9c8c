#include "sim/scaling_driver.h"

#include <algorithm>
#include <cmath>

namespace gw::sim_detail {

ScaleObservation ScalingDriver::observe(double t, std::span<ReplicaState> replicas, long long waiting_elsewhere,
                                        const SimTallies& tallies) {
  ScaleObservation o;
  o.time_s = t;
  o.interval_s = options_.interval_s;
  double busy = 0, observed = 0;
  for (auto& r : replicas) {
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
  // In replicas: a replica's lanes are ready or starting together.
  const int lanes = std::max(1, options_.lanes_per_replica);
  o.ready /= lanes;
  o.starting /= lanes;
  o.waiting += waiting_elsewhere;
  o.in_service = std::max(0LL, tallies.in_flight - o.waiting);
  o.busy_fraction = observed > 0 ? std::clamp(busy / observed, 0.0, 1.0) : 0;
  const long long left = tallies.completed + tallies.rejected;
  o.arrival_rps = static_cast<double>(tallies.admitted - admitted_at_tick_) / options_.interval_s;
  o.completion_rps = static_cast<double>(left - left_at_tick_) / options_.interval_s;
  admitted_at_tick_ = tallies.admitted;
  left_at_tick_ = left;
  return o;
}

int ScalingDriver::desired(const ScaleObservation& o, long long in_flight) const {
  int desired = std::clamp(options_.decide(o), 0, options_.max_replicas);
  if (desired == 0 && in_flight > 0) desired = 1;
  return desired;
}

ScaleActions ScalingDriver::plan(int desired, std::span<const ReplicaState> replicas, std::span<const ReplicaLoad> loads, int lanes) {
  // By replica: slots [g x lanes, (g + 1) x lanes) move together, so the first says the life.
  ScaleActions a;
  lanes = std::max(1, lanes);
  const int n = static_cast<int>(replicas.size()) / lanes;
  auto life = [&](int g) { return replicas[static_cast<size_t>(g * lanes)].life; };
  auto take = [&](std::vector<int>& into, int g) {
    for (int lane = 0; lane < lanes; ++lane) into.push_back(g * lanes + lane);
  };
  for (int g = 0; g < n; ++g)
    if (life(g) == Life::ready || life(g) == Life::starting) ++a.current;
  if (desired > a.current) {
    int more = desired - a.current;
    for (int g = 0; g < n && more > 0; ++g)
      if (life(g) == Life::draining) {
        take(a.wake, g);
        --more;
      }
    for (int g = 0; g < n && more > 0; ++g)
      if (life(g) == Life::off) {
        take(a.start, g);
        --more;
      }
  } else if (desired < a.current) {
    int fewer = a.current - desired;
    for (int g = n; g-- > 0 && fewer > 0;)
      if (life(g) == Life::starting) {
        take(a.cancel, g);
        --fewer;
      }
    auto outstanding = [&](int g) {
      long long sum = 0;
      for (int lane = 0; lane < lanes; ++lane) sum += loads[static_cast<size_t>(g * lanes + lane)].outstanding;
      return sum;
    };
    std::vector<bool> chosen(static_cast<size_t>(n), false);
    for (; fewer > 0; --fewer) {
      int victim = -1;
      for (int g = 0; g < n; ++g) {
        if (life(g) != Life::ready || chosen[static_cast<size_t>(g)]) continue;
        if (victim < 0 || outstanding(g) < outstanding(victim)) victim = g;
      }
      if (victim < 0) break;
      chosen[static_cast<size_t>(victim)] = true;
      take(a.drain, victim);
    }
  }
  return a;
}

double ScalingDriver::start_delay(bool& refill) {
  refill = false;
  if (warm_idle_ == 0) return options_.start_s;
  --warm_idle_;
  if (warm_nodes() < options_.warm_pool) {
    ++warm_pending_;
    refill = true;
  }
  return options_.warm_start_s;
}

void ScalingDriver::open_window(double t, const SimTallies& tallies, const std::vector<ReplicaState>& replicas) {
  SteadyWindow& w = window_;
  w.open = true;
  w.start_s = t;
  w.tallies = tallies;
  w.replicas.resize(replicas.size());
  for (size_t i = 0; i < replicas.size(); ++i) {
    w.replicas[i].stats = replicas[i].stats;
    w.replicas[i].kv_block_s = replicas[i].kv.block_s();
  }
  w.scrapes.clear();
  w.observed.clear();
}

void ScalingDriver::consider_fast_forward(double t, bool quiet, const ScaleObservation& observed, const ScaleSample& scrape,
                                          const TrafficSpan& span, const ArrivalProcess& arrivals, const SimTallies& tallies,
                                          const std::vector<ReplicaState>& replicas,
                                          const std::function<void(const Replay&)>& replay) {
  const ScalingOptions& s = options_;
  SteadyWindow& w = window_;
  if (!quiet) {
    w.open = false;
    return;
  }
  const double start_real = w.start_s + span.skip_s;
  const double until = std::min({arrivals.stationary_until(start_real), span.account_until_s, span.max_duration_s,
                                  s.scaler_steady_until ? s.scaler_steady_until(start_real) : 1e18});
  if (!(until < 1e17)) return;  // no end to the span: nothing to replay up to
  if (!w.open || until < t + span.skip_s) {
    open_window(t, tallies, replicas);  // a new rate (or none before): the window starts here
    return;
  }
  w.scrapes.push_back(scrape);
  w.observed.push_back(observed);
  const double length = t - w.start_s;
  if (length < s.fast_forward_window_s - 1e-9 || tallies.completed - w.tallies.completed < s.fast_forward_requests) return;
  // Whole replays that end, the next arrival moved on with them, a scrape before the rate changes.
  const double next_real = std::max(t + span.skip_s, span.next_arrival_s.value_or(t + span.skip_s));
  const double replays = std::floor((until - next_real - s.interval_s) / length);
  if (replays < 1) return;
  // Steady: requests in the system moved by no more than noise (and a small share of the
  // window's arrivals), and the queue is short against them. Otherwise start again from here.
  const double arrived = static_cast<double>(tallies.admitted - w.tallies.admitted);
  const double growth = std::fabs(static_cast<double>(tallies.in_flight - w.tallies.in_flight));
  const bool steady = growth <= std::min(3 * std::sqrt(static_cast<double>(w.tallies.in_flight) + 1), 0.005 * arrived) + 5 &&
                      static_cast<double>(observed.waiting) <= 0.05 * arrived;
  const double scrapes_ahead = replays * static_cast<double>(w.observed.size());
  if (steady && s.would_hold && s.expected_changes && s.would_hold(twice_again(length)) &&
      s.expected_changes(w.observed, scrapes_ahead) < s.fast_forward_change_odds) {
    // Requests in the replays: the mean rate over their span, where the process knows it (a
    // window's own count would carry its noise into every replay).
    const double rate = arrivals.rate_at(start_real);
    const double expected = rate > 0 ? rate * replays * length : replays * arrived;
    replay(Replay{static_cast<long long>(replays), length, arrived > 0 ? expected / arrived : replays});
  }
  open_window(t, tallies, replicas);
}

// The window's observations twice more, as the replays would show them: if the scaler keeps
// its count over two, its state after each is the one it has now, so it keeps it over any number.
std::vector<ScaleObservation> ScalingDriver::twice_again(double length) const {
  std::vector<ScaleObservation> again;
  again.reserve(2 * window_.observed.size());
  for (int copy = 1; copy <= 2; ++copy)
    for (ScaleObservation o : window_.observed) {
      o.time_s += copy * length;
      o.traffic_time_s += copy * length;
      again.push_back(o);
    }
  return again;
}

void ScalingDriver::replayed(const Replay& replay, double t, double skip_s, const RepeatedRequests& added, long long admitted_before,
                             const SimTallies& tallies, std::vector<ReplicaState>& replicas, Recorder& recorder) {
  const SteadyWindow& w = window_;
  const long long times = replay.times;
  const double td = static_cast<double>(times);
  admitted_at_tick_ += added.left();
  left_at_tick_ += added.completed + added.rejected;
  auto more = [&replay](long long now, long long before) {
    return static_cast<long long>(std::llround(replay.per_request * static_cast<double>(now - before)));
  };
  for (size_t i = 0; i < replicas.size(); ++i) {
    ReplicaState& r = replicas[i];
    const ReplicaTotals& before = w.replicas[i];
    const double busy = td * (r.stats.busy_s - before.stats.busy_s);
    r.stats.busy_s += busy;
    r.stats.stage_wait_s += td * (r.stats.stage_wait_s - before.stats.stage_wait_s);
    r.busy_observed += busy;
    r.stats.requests += more(r.stats.requests, before.stats.requests);
    r.stats.steps += times * (r.stats.steps - before.stats.steps);
    r.stats.preemptions += times * (r.stats.preemptions - before.stats.preemptions);
    r.stats.recomputed_tokens += times * (r.stats.recomputed_tokens - before.stats.recomputed_tokens);
    r.stats.swapped_tokens += times * (r.stats.swapped_tokens - before.stats.swapped_tokens);
    r.stats.prefix_lookups += times * (r.stats.prefix_lookups - before.stats.prefix_lookups);
    r.stats.prefix_hits += times * (r.stats.prefix_hits - before.stats.prefix_hits);
    r.stats.prefix_chained += times * (r.stats.prefix_chained - before.stats.prefix_chained);
    r.stats.prefix_lookup_tokens += td * (r.stats.prefix_lookup_tokens - before.stats.prefix_lookup_tokens);
    r.stats.prefix_hit_tokens += td * (r.stats.prefix_hit_tokens - before.stats.prefix_hit_tokens);
    r.kv.add_block_s(td * (r.kv.block_s() - before.kv_block_s));
    for (size_t b = 0; b < r.stats.batch_sizes.size() && b < before.stats.batch_sizes.size(); ++b)
      r.stats.batch_sizes[b] += times * (r.stats.batch_sizes[b] - before.stats.batch_sizes[b]);
  }
  // The scrapes and samples of each replay, at their own times.
  const double t_real = t + skip_s, window_start_real = w.start_s + skip_s;
  std::vector<TimeSample> window_samples;
  for (const TimeSample& sample : recorder.samples())
    if (sample.time_s > window_start_real) window_samples.push_back(sample);
  const long long done = added.left();
  for (long long j = 1; j <= times; ++j) {
    const double shift = static_cast<double>(j) * replay.length_s;
    for (ScaleSample scrape : w.scrapes) {
      scrape.time_s += shift;
      recorder.record_scale(scrape);
    }
    for (TimeSample sample : window_samples) {
      sample.time_s += shift;
      if (recorder.sample_due(sample.time_s)) recorder.keep_sample(sample);
    }
    recorder.push_mark({t_real + shift, tallies.in_flight, admitted_before + j * done / times,
                        tallies.timed_out - added.timed_out + j * added.timed_out / times});
  }
}

}  // namespace gw::sim_detail
