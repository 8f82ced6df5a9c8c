#include "sim/sim_report.h"

#include <algorithm>
#include <cmath>

namespace gw::sim_detail {

void judge_overload(const SimTallies& tallies, const std::vector<Mark>& marks, const Mark& last, SimResult& out) {
  if (marks.size() < 2) return;
  const double first_arrival = tallies.first_arrival_s, last_arrival = tallies.last_arrival_s;
  // Requests in the system over the last quarter of the arrivals.
  double from = first_arrival + 0.75 * (last_arrival - first_arrival);
  const Mark* start = &marks.front();
  for (const auto& m : marks)
    if (m.time_s <= from) start = &m;
  double arrived = static_cast<double>(last.admitted - start->admitted);
  double growth = static_cast<double>(last.in_flight - start->in_flight);
  // Time in service (latency less queue wait): a stable system holds rate x that many requests
  // once it has run a few times that long; before, it is still filling (and an LLM's steps
  // still lengthening as its batches grow), which is no backlog.
  const double in_service_s = std::max(0.0, tallies.latency.mean() - tallies.wait.mean());
  out.too_short = from - first_arrival < 3 * in_service_s;
  if (arrived > 0) {
    out.backlog_growth = growth / arrived;
    // A growing queue, beyond the noise of a stable one.
    out.overloaded = !out.too_short && out.backlog_growth > 0.05 && growth > 3 * std::sqrt(static_cast<double>(start->in_flight) + 1);
    // Or held at the timeout's length: clients gave up on over 1% of what arrived.
    out.timed_out_share = static_cast<double>(last.timed_out - start->timed_out) / arrived;
    if (out.timed_out_share > 0.01) out.overloaded = true;
  }
  // Or one left far behind: over 5% of the requests still in the system at the last arrival
  // and over 5% of the span to drain them, and more of them than their service holds: by
  // Little's law a stable system holds the arrival rate times the mean time in service (latency
  // less queue wait), so long generations over a short run are not a backlog; the requests
  // beyond that are waiting: the queue grew earlier and never caught up.
  out.backlog_at_last_arrival = last.in_flight;
  out.drain_s = std::max(0.0, tallies.last_completion_s - last_arrival);
  const double span = last_arrival - first_arrival;
  const double in_flight = static_cast<double>(last.in_flight);
  const double in_service = span > 0 ? static_cast<double>(tallies.admitted) / span * in_service_s : 0;
  if (span > 0 && out.drain_s > 0.05 * span && in_flight > 0.05 * static_cast<double>(tallies.admitted) &&
      in_flight > 2 * in_service + 3 * std::sqrt(in_service + 1))
    out.overloaded = true;
}

void fill_report(const SimTallies& tallies, const Recorder& recorder, const std::vector<ReplicaState>& replicas, SimResult& out) {
  const SimTallies& t = tallies;
  out.requests = t.completed;
  out.duration_s = std::max(1e-12, t.last_completion_s - t.first_arrival_s);
  out.throughput_rps = static_cast<double>(t.completed) / out.duration_s;
  out.goodput_rps = static_cast<double>(t.good) / out.duration_s;
  const long long judged = t.completed + t.timed_out;
  out.slo_attainment = judged ? static_cast<double>(t.good) / static_cast<double>(judged) : 1;
  out.mean_in_system = t.request_s / out.duration_s;
  out.arrival_rate_rps =
      t.last_arrival_s > t.first_arrival_s ? static_cast<double>(t.admitted - 1) / (t.last_arrival_s - t.first_arrival_s) : 0;
  out.latency = t.latency;
  out.wait = t.wait;
  out.ttft = t.ttft;
  out.tpot = t.tpot;
  long long chained = 0;
  for (const auto& r : replicas) {
    ReplicaStats stats = r.stats;
    stats.pipeline_lanes = std::max(1, r.config->pipeline_lanes);
    stats.busy_fraction = stats.busy_s / out.duration_s;
    stats.stage_wait_fraction = stats.busy_s > 0 ? std::clamp(stats.stage_wait_s / stats.busy_s, 0.0, 1.0) : 0.0;
    if (r.kv.capacity_blocks() > 0 && r.config->llm) {
      stats.kv_blocks = r.kv.capacity_blocks();
      stats.block_tokens = r.config->block_tokens;
      stats.kv_groups = r.config->kv_groups.groups();
      stats.mean_kv_used_fraction = r.kv.mean_used_fraction(out.duration_s);
    }
    double steps = 0, items = 0;
    for (size_t b = 0; b < stats.batch_sizes.size(); ++b) {
      steps += static_cast<double>(stats.batch_sizes[b]);
      items += static_cast<double>(b * stats.batch_sizes[b]);
    }
    stats.mean_batch = steps > 0 ? items / steps : 0;
    out.preemptions += stats.preemptions;
    out.recomputed_tokens += stats.recomputed_tokens;
    out.swapped_tokens += stats.swapped_tokens;
    stats.prefix_evictions = r.prefix.evictions();
    PrefixCacheResult& p = out.prefix_cache;
    p.lookups += stats.prefix_lookups;
    chained += stats.prefix_chained;
    p.evictions += stats.prefix_evictions;
    p.saved_prefill_tokens += stats.prefix_hit_tokens;
    p.hit_ratio_tokens += stats.prefix_lookup_tokens;  // the sums until divided below
    p.hit_ratio_requests += static_cast<double>(stats.prefix_hits);
    out.replicas.push_back(std::move(stats));
  }
  {
    PrefixCacheResult& p = out.prefix_cache;
    p.on = chained > 0;
    p.hit_ratio_tokens = p.hit_ratio_tokens > 0 ? p.saved_prefill_tokens / p.hit_ratio_tokens : 0;
    p.hit_ratio_requests = p.lookups > 0 ? p.hit_ratio_requests / static_cast<double>(p.lookups) : 0;
  }
  out.admitted = t.admitted;
  judge_overload(t, recorder.marks(), recorder.last_mark(), out);
  out.timeseries = recorder.samples();
  out.scale_series = recorder.scale_series();
  out.peak_in_flight = t.peak_in_flight;
  out.rejected = t.rejected;
  out.timed_out = t.timed_out;
  out.held_requests = t.held;
  out.waited_fraction = t.completed ? static_cast<double>(t.waited) / static_cast<double>(t.completed) : 0;
}

}  // namespace gw::sim_detail
