#include "plan/scaling_plan.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <memory>

#include "core/formatting.h"
#include "core/money.h"
#include "core/parallel.h"
#include "core/text.h"
#include "model/memory.h"
#include "plan/cold_start.h"
#include "k8s/router_manifests.h"
#include "plan/verify.h"
#include "sim/deployment.h"

namespace gw {

namespace {

const std::vector<std::string>& all_policies() {
  // On a tie the earlier wins: queue depth (it sees the backlog) before concurrency.
  static const std::vector<std::string> names = {"static-peak", "cpu", "gpu-duty-cycle", "queue-depth", "concurrency", "scale-to-zero"};
  return names;
}

// A daily shape for traffic given only as average and peak rates: a cosine peaking at 14:00 with
// the given peak-to-average ratio (amplitude capped at the average, so night never goes negative).
std::vector<double> daily_shape(double average, double peak) {
  double amplitude = std::min(1.0, peak / average - 1);
  std::vector<double> hours;
  for (int h = 0; h < 24; ++h) hours.push_back(1.0 + amplitude * std::cos((h - 14) * 2 * M_PI / 24));
  return hours;
}

// The demand over time and the span to simulate: rates with a peak but no profile follow a
// daily cosine; a profile, measured series or trace sets its own span.
void shape_traffic(ServiceSpec& service, ArrivalOptions& arrivals, ScalingReport& report) {
  if (arrivals.process == "poisson" || arrivals.process == "gamma" || arrivals.process == "mmpp") {
    if (service.traffic.peak_rps > service.traffic.average_rps * 1.0001) {
      service.traffic.profile = daily_shape(service.traffic.average_rps, service.traffic.peak_rps);
      arrivals.process = "curve";
      arrivals.profile = service.traffic.profile;
      report.traffic = fmt::format("average {:.3g}/s, peak {:.3g}/s on a daily cosine (peak 14:00)", service.traffic.average_rps,
                                   service.traffic.peak_rps);
      report.duration_s = 86400;
    } else {
      report.traffic = fmt::format("flat {:.3g}/s ({})", service.traffic.average_rps, arrivals.process);
      report.duration_s = 3600;
    }
  } else if (arrivals.process == "curve") {
    report.duration_s = service.traffic.profile.size() * 3600.0;
    report.traffic = fmt::format("average {:.3g}/s on a {}-hour profile (peak {:.3g}/s)", service.traffic.average_rps,
                                 service.traffic.profile.size(), service.traffic.peak_rps);
    // Say what a weekly shape does at the weekend: profiles differ there most (weekdays-only
    // drops it, weekday-business-hours keeps a trickle).
    const auto& profile = service.traffic.profile;
    if (profile.size() == 168) {
      double week = 0, weekend = 0;
      for (size_t h = 0; h < 168; ++h) (h >= 120 ? weekend : week) += profile[h];
      week += weekend;
      if (week > 0)
        report.traffic += fmt::format("; Saturday and Sunday carry {:.1f}% of the week's requests", weekend / week * 100);
    }
  } else if (arrivals.process == "series") {
    report.duration_s = service.traffic.rates->duration_s;
    report.traffic = fmt::format("measured rates {} ({} points every {:.0f} s, mean {:.3g}/s, peak {:.3g}/s)",
                                 service.traffic.rates->path, service.traffic.rates->points.size(),
                                 service.traffic.rates->step_s, service.traffic.rates->mean_rps, service.traffic.rates->peak_rps);
  } else {
    report.duration_s = service.traffic.trace->duration_s;
    report.traffic = fmt::format("trace {} ({} requests over {:.0f} s)", service.traffic.trace_path,
                                 service.traffic.trace->requests, service.traffic.trace->duration_s);
  }
}

// One policy's scaler and its simulated outcome.
struct PolicyRun {
  ScalerConfig c;
  std::vector<ScalerConfig> pools;  // a disaggregated layout's: prefill, then decode
  PolicyOutcome outcome;
  double mean_latency_s = 0, mean_wait_s = 0, mean_ttft_s = 0;
  std::optional<Error> error;
};

// What every policy simulated for one replica layout shares.
struct LayoutContext {
  LayoutContext(const Spec& spec, const ServiceSpec& service, const ScalingPlanOptions& options, const ScalingReport& report,
                const ArrivalOptions& arrivals, const std::vector<ReplicaConfig>& replicas)
      : spec(spec), service(service), options(options), report(report), arrivals(arrivals), replicas(replicas) {}
  const Spec& spec;
  const ServiceSpec& service;
  const ScalingPlanOptions& options;
  const ScalingReport& report;
  const ArrivalOptions& arrivals;
  const std::vector<ReplicaConfig>& replicas;
  Router router = Router::round_robin;  // every policy's, the scale-to-zero one's too (routing_as_deployed)
  bool llm = true;
  int router_instances = 1;  // copies of the router dealing requests (router_instances_as_deployed)
  int static_replicas = 0, max_replicas = 0;
  // A disaggregated layout's pools (prefill, then decode): each one's static and largest count.
  struct PoolLimits {
    int static_replicas = 0, max_replicas = 0;
  };
  std::vector<PoolLimits> pools;
};

// What the metric policies' targets came from, for --explain; a disaggregated layout's per pool.
struct PolicyTargets {
  double queue = 0, concurrency = 0, capacity_at_limit_rps = 0, measured_latency_s = 0, measured_service_s = 0;
  std::vector<double> pool_queue, pool_concurrency;
  double pool_prefill_compute_s = 0, pool_decode_s = 0;
  double pool_prefill_duty_pct = 0;  // the prefill pool's duty cycle target (the spec's, or the verified one at peak)
};

// The scaler a named policy runs; the metric policies' targets are passed in because static
// peak's simulation sets their defaults.
PolicyRun configure_policy(const LayoutContext& layout, const std::string& name, double queue_target,
                           double concurrency_target) {
  const ScalingSpec& scaling = layout.service.scaling;
  PolicyRun run;
  ScalerConfig& c = run.c;
  PolicyOutcome& outcome = run.outcome;
  // The metric policies keep the replicas the service's availability asks for (what plan
  // enforces); only the scale-to-zero policy goes under it, recommended only where that is 1.
  c.min_replicas = std::min(layout.max_replicas, std::max(scaling.min_replicas, layout.service.min_replicas));
  c.max_replicas = layout.max_replicas;
  c.scale_up_window_s = scaling.scale_up_window_s;
  c.scale_down_window_s = scaling.scale_down_window_s;
  c.period_s = scaling.interval_s;
  c.keep_alive_s = scaling.keep_alive_s;
  c.cpu.cores = scaling.cpu_cores;
  c.cpu.cpu_ms_per_request = scaling.cpu_ms_per_request;
  outcome.name = name;
  if (name == "static-peak") {
    c.policy = ScalePolicy::static_peak;
    c.static_replicas = layout.static_replicas;
    outcome.signal = "none: the peak plan's replicas around the clock";
    outcome.target = layout.static_replicas;
  } else if (name == "cpu") {
    c.policy = ScalePolicy::cpu;
    c.target = scaling.cpu_target_pct;
    outcome.signal = fmt::format("CPU utilization, % of {} cores (HPA Resource metric)", c.cpu.cores);
  } else if (name == "gpu-duty-cycle") {
    c.policy = ScalePolicy::duty_cycle;
    c.target = scaling.duty_cycle_target_pct;
    outcome.signal = "GPU duty cycle, % (DCGM_FI_DEV_GPU_UTIL)";
  } else if (name == "concurrency") {
    c.policy = ScalePolicy::concurrency;
    c.target = concurrency_target;
    outcome.signal = "requests in service per replica";
  } else if (name == "queue-depth") {
    c.policy = ScalePolicy::queue_depth;
    c.target = queue_target;
    outcome.signal = "requests queued or in service per replica (KEDA Prometheus trigger)";
  } else if (name == "scheduled") {
    // Queue depth, and beside it what each hour of the traffic's profile needs in proportion to
    // the plan's verified pool at the busiest hour (the static pool there), asked for a cold
    // start before the hour: a replica slower to start than a ramp to arrive is started ahead.
    c.policy = ScalePolicy::queue_depth;
    c.target = queue_target;
    const ArrivalOptions& a = layout.arrivals;
    const double busiest = a.profile.empty() ? 0 : *std::max_element(a.profile.begin(), a.profile.end());
    if (!layout.report.hourly_profile || busiest <= 0) {
      run.error = Error{layout.spec.path, scaling.line, "services." + layout.service.name + ".scaling.policies",
                        "'scheduled' follows an hourly profile: give traffic.profile, or a peak above the average (a daily "
                        "cosine), not a flat rate, a trace or measured rates"};
      return run;
    }
    for (double f : a.profile)
      c.schedule.push_back(
          std::clamp(static_cast<int>(std::ceil(layout.static_replicas * f / busiest - 1e-9)), c.min_replicas, c.max_replicas));
    // In whole minutes, cron's resolution, so that the triggers `plan --emit-k8s` writes are
    // the schedule simulated here.
    c.schedule_lead_s = std::ceil((layout.report.start_s + scaling.interval_s) / 60) * 60;
    outcome.schedule = c.schedule;
    outcome.schedule_lead_s = c.schedule_lead_s;
    outcome.signal = fmt::format("queue depth as above, and each hour's need by the traffic's profile ({}..{} replicas) asked for "
                                 "{:.0f} s before the hour (a cold start and a scrape; KEDA cron triggers, or CronJobs setting an HPA's floor)",
                                 *std::min_element(c.schedule.begin(), c.schedule.end()),
                                 *std::max_element(c.schedule.begin(), c.schedule.end()), c.schedule_lead_s);
  } else {  // scale-to-zero
    c.policy = ScalePolicy::queue_depth;
    c.target = queue_target;
    c.min_replicas = 0;
    outcome.signal = fmt::format("queue depth as above, to zero after {:.0f} s without a request", scaling.keep_alive_s);
  }
  if (c.policy != ScalePolicy::static_peak) outcome.target = c.target;
  // Scale-to-zero is the one policy under the floor: fit for a service that may go down
  // (min_replicas 1, a dev endpoint), never recommended for one that asks for more.
  outcome.below_min_replicas = name == "scale-to-zero" ? layout.service.min_replicas > 1
                                                       : c.policy != ScalePolicy::static_peak && c.min_replicas < layout.service.min_replicas;
  outcome.min_replicas = c.policy == ScalePolicy::static_peak ? layout.static_replicas : c.min_replicas;
  outcome.max_replicas = c.policy == ScalePolicy::static_peak ? layout.static_replicas : layout.max_replicas;
  return run;
}

// A policy on a disaggregated layout: the same policy on each pool, with the pool's own counts
// and targets; the outcome's counts are the pools' sums.
PolicyRun configure_run(const LayoutContext& layout, const std::string& name, const PolicyTargets& targets) {
  if (layout.pools.empty()) return configure_policy(layout, name, targets.queue, targets.concurrency);
  PolicyRun run;
  static const char* const roles[] = {"prefill", "decode"};
  for (size_t p = 0; p < layout.pools.size(); ++p) {
    LayoutContext pool = layout;
    pool.pools.clear();
    pool.static_replicas = layout.pools[p].static_replicas;
    pool.max_replicas = layout.pools[p].max_replicas;
    // pool-signals: each pool on the signal that follows its load: a prefill replica is busy in
    // proportion to the prompts it computes (its duty cycle), a decode replica steps whenever one
    // sequence runs (its duty cycle stays high at any load), so it scales on its requests.
    const std::string own = name != "pool-signals" ? name : p == 0 ? "gpu-duty-cycle" : "queue-depth";
    PolicyRun one = configure_policy(pool, own, targets.pool_queue.at(p), targets.pool_concurrency.at(p));
    if (one.error) return one;
    if (p == 0 && one.c.policy == ScalePolicy::duty_cycle && targets.pool_prefill_duty_pct > 0)
      one.c.target = one.outcome.target = targets.pool_prefill_duty_pct;
    if (p == 0) {
      run.c = one.c;
      run.outcome = one.outcome;
      run.outcome.name = name;
      run.outcome.min_replicas = run.outcome.max_replicas = 0;
      run.outcome.signal = name == "pool-signals" ? "prefill pool: " + one.outcome.signal : "each pool on its own: " + one.outcome.signal;
    } else if (name == "pool-signals") {
      run.outcome.signal += "; decode pool: " + one.outcome.signal;
    }
    run.pools.push_back(one.c);
    run.outcome.min_replicas += one.outcome.min_replicas;
    run.outcome.max_replicas += one.outcome.max_replicas;
    run.outcome.below_min_replicas = run.outcome.below_min_replicas || one.outcome.below_min_replicas;
    PolicyOutcome::Pool outcome;
    outcome.role = roles[p];
    outcome.target = one.outcome.target;
    outcome.min_replicas = one.outcome.min_replicas;
    outcome.max_replicas = one.outcome.max_replicas;
    outcome.schedule = one.outcome.schedule;
    run.outcome.pools.push_back(outcome);
  }
  return run;
}

// Saturday and Sunday's cost of a weekly profile (which starts on Monday 00:00).
double weekend_usd(const SimResult& r, const ScalingReport& report) {
  double weekend_node_s = 0;
  for (size_t i = 0; i < r.scale_series.size(); ++i) {
    double t = r.scale_series[i].time_s;
    double next = i + 1 < r.scale_series.size() ? r.scale_series[i + 1].time_s : report.duration_s;
    double day = std::fmod(t, 7 * 86400.0) / 86400;
    if (day >= 5 && t < report.duration_s) weekend_node_s += r.scale_series[i].billed * (std::min(next, report.duration_s) - t);
  }
  return weekend_node_s / 3600 * report.usd_per_replica_hour;
}

// Runs one policy over the span; the outcome (or the error) lands in run.
void simulate_policy(const LayoutContext& layout, PolicyRun& run) {
  const ScalingSpec& scaling = layout.service.scaling;
  const ScalingReport& report = layout.report;
  const ScalerConfig& c = run.c;
  PolicyOutcome& outcome = run.outcome;
  const std::string& name = outcome.name;
  if (run.error) return;  // configured wrong: said there
  ScalingOptions s;
  s.interval_s = scaling.interval_s;
  s.max_replicas = outcome.max_replicas;
  s.lanes_per_replica = std::max(1, report.plan.config.pipeline_parallel);  // one node per stage: build_replicas's lanes
  s.initial_replicas = c.policy == ScalePolicy::static_peak ? layout.static_replicas
                                                             : std::clamp(layout.static_replicas, c.min_replicas, layout.max_replicas);
  // A started replica gets requests once the router has found it; a pool woken from zero once
  // the router is ready too.
  const double join_s = router_join_s(layout.router, layout.llm, false);
  s.start_s = report.start_s + (name == "scale-to-zero" ? router_join_s(layout.router, layout.llm, true) : join_s);
  s.warm_start_s = report.warm_start_s + join_s;
  s.node_provisioning_s = scaling.node_provisioning_s;
  s.warm_pool = c.policy == ScalePolicy::static_peak ? 0 : scaling.warm_pool;  // a fixed pool starts nothing
  s.account_until_s = report.duration_s;
  auto scaler = std::make_shared<Autoscaler>(c);
  s.decide = [scaler](const ScaleObservation& o) { return scaler->decide(o); };
  s.expected_changes = [scaler](const std::vector<ScaleObservation>& window, double ahead) {
    return scaler->expected_changes(window, ahead);
  };
  s.would_hold = [scaler](const std::vector<ScaleObservation>& again) { return scaler->would_hold(again); };
  if (!c.schedule.empty()) s.scaler_steady_until = [scaler](double t) { return scaler->schedule_holds_until(t); };
  s.fast_forward = !layout.options.exact && (layout.options.fast_forward || report.duration_s > kExactSpanS);
  for (size_t p = 0; p < run.pools.size(); ++p) {
    // Disaggregated: each pool on its own scaler, simulated request by request.
    const ScalerConfig& pc = run.pools[p];
    const PolicyOutcome::Pool& limits = outcome.pools[p];
    auto pool_scaler = std::make_shared<Autoscaler>(pc);
    const int static_count = layout.pools[p].static_replicas;
    s.pools.push_back({limits.max_replicas,
                       pc.policy == ScalePolicy::static_peak ? static_count : std::clamp(static_count, pc.min_replicas, limits.max_replicas),
                       [pool_scaler](const ScaleObservation& o) { return pool_scaler->decide(o); }});
  }
  if (!s.pools.empty()) s.fast_forward = false;  // pools are simulated request by request

  Rng rng(layout.options.seed);
  auto process = make_arrivals(layout.arrivals, layout.service, rng);
  SimOptions sim;
  sim.seed = layout.options.seed;
  sim.max_requests = 1LL << 40;
  sim.max_duration_s = report.duration_s;
  sim.slo = layout.service.slo;
  sim.client_timeout_s = layout.service.traffic.client_timeout_s;
  sim.router = layout.router;
  sim.decode_router = decode_routing_as_deployed(sim.router);
  sim.router_instances = layout.router_instances;
  sim.timeseries_points = 0;
  sim.scaling = s;
  if (layout.options.on_progress) sim.on_progress = [&](long long admitted) { layout.options.on_progress(name, admitted); };
  auto result = simulate(*process, layout.replicas, sim);
  if (!result.ok()) {
    Error e = result.error();
    if (e.file.empty()) e.file = layout.spec.path;
    run.error = e;
    return;
  }
  const SimResult& r = result.value();
  outcome.replica_hours = r.billed_node_s / 3600;
  outcome.gpu_hours = outcome.replica_hours * report.gpus_per_replica;
  // Billed as the cloud bills it: a reservation covers its floor every hour of the span, used or
  // not; replicas above the floor run on demand.
  const double span_h = report.duration_s / 3600;
  outcome.reserved_replicas = report.reserved ? outcome.min_replicas : 0;
  outcome.burst_replica_hours = std::max(0.0, outcome.replica_hours - outcome.reserved_replicas * span_h);
  outcome.usd = report.reserved ? outcome.reserved_replicas * span_h * report.usd_per_replica_hour +
                                      outcome.burst_replica_hours * report.burst_usd_per_replica_hour
                                : outcome.replica_hours * report.usd_per_replica_hour;
  if (!outcome.pools.empty()) {
    // Each pool at its replicas' price: the sums above, pool by pool.
    outcome.gpu_hours = outcome.usd = outcome.burst_replica_hours = 0;
    for (size_t p = 0; p < outcome.pools.size(); ++p) {
      PolicyOutcome::Pool& pool = outcome.pools[p];
      const ScalingReport::Pool& price = report.pools[p];
      pool.replica_hours = r.pool_billed_node_s.at(p) / 3600;
      const double floor = report.reserved ? pool.min_replicas : 0;
      const double burst_hours = std::max(0.0, pool.replica_hours - floor * span_h);
      pool.usd = report.reserved ? floor * span_h * price.usd_per_replica_hour + burst_hours * price.burst_usd_per_replica_hour
                                 : pool.replica_hours * price.usd_per_replica_hour;
      outcome.gpu_hours += pool.replica_hours * price.gpus_per_replica;
      outcome.usd += pool.usd;
      outcome.burst_replica_hours += burst_hours;
      double ready_sum = 0;
      int scrapes = 0;
      for (const ScaleSample& sample : r.scale_series) {
        if (sample.pool_ready.size() <= p) continue;
        pool.peak_ready = std::max(pool.peak_ready, sample.pool_ready[p]);
        if (sample.time_s <= report.duration_s) ready_sum += sample.pool_ready[p], ++scrapes;
      }
      pool.mean_ready = scrapes > 0 ? ready_sum / scrapes : 0;
    }
  }
  outcome.usd_per_month = outcome.usd * kHoursPerMonth * 3600 / report.duration_s;
  outcome.slo_attainment = r.slo_attainment;
  // The plan's rule: every p99 target of the SLO (attainment, the share of requests within all
  // of them at once, is reported beside it).
  outcome.meets_slo = slo_miss(layout.service.slo, r).empty();
  outcome.requests = r.requests;
  outcome.cold_starts = r.cold_starts;
  outcome.held_requests = r.held_requests;
  outcome.timed_out = r.timed_out;
  outcome.scale_events = r.scale_ups + r.scale_downs;
  outcome.latency_p99_s = r.latency.quantile(0.99);
  outcome.ttft_p99_s = r.ttft.quantile(0.99);
  outcome.mean_ready = r.serving_replica_s / report.duration_s;
  for (const auto& p : r.scale_series) outcome.peak_ready = std::max(outcome.peak_ready, p.ready);
  outcome.series = r.scale_series;
  outcome.fast_forwarded_s = r.fast_forwarded_s;
  if (layout.arrivals.process == "curve" && layout.service.traffic.profile.size() == 168) outcome.weekend_usd = weekend_usd(r, report);
  run.mean_latency_s = r.latency.mean();
  run.mean_wait_s = r.wait.mean();
  run.mean_ttft_s = r.ttft.mean();
}


void add_assumptions(ScalingReport& report, const ServiceSpec& service, const ScalingPlanOptions& options,
                     const PolicyTargets& targets, double max_utilization, double load_gbps, const LayoutContext& layout) {
  const ScalingSpec& scaling = service.scaling;
  const PlanOption& best = report.plan;
  auto& a = report.assumptions;
  a.push_back(fmt::format("{}: {} x {} ({}), {} batching, ${:.4g} per replica-hour ({} {}, {})", best.decode ? "prefill replica" : "replica",
                          best.config.devices(), best.config.accelerator->name, parallel_layout(best.config),
                          batching_name(best.config.batching), report.usd_per_replica_hour, best.offering->cloud,
                          best.offering->instance_type, pricing_name(best.pricing)));
  if (report.reserved)
    a.push_back(fmt::format("billing: a {} reservation is paid every hour whether used or not; each policy reserves its floor "
                            "(min replicas) at ${:.4g} per replica-hour and runs replicas above it on demand at ${:.4g}",
                            pricing_name(best.pricing), report.usd_per_replica_hour, report.burst_usd_per_replica_hour));
  a.push_back(fmt::format("floor: the metric policies keep at least {} replica(s), the service's min_replicas (plan's availability "
                          "rule); scale-to-zero goes under it and is recommended only where min_replicas is 1",
                          service.min_replicas));
  if (best.decode) {
    a.push_back(fmt::format("disaggregated pools, each scaled on its own signal under the same policy: {} prefill replica(s) of {} x {} "
                            "at ${:.4g} per replica-hour and {} decode replica(s) of {} x {} at ${:.4g} at peak (the plan's counts, "
                            "static-peak's), KV over {}; a prefill pool's queue is the prompts waiting for it or being computed, a "
                            "decode pool's the requests whose KV waits for it or that it decodes; a decode pool at zero leaves "
                            "computed prompts' KV on the prefill replicas until one is ready; each pool's floor is the service's "
                            "min_replicas; replicas are billed per pool, each at its GPUs' share of the node",
                            best.replicas, best.config.devices(), best.config.accelerator->name, report.pools[0].usd_per_replica_hour,
                            best.decode->replicas, best.decode->config.devices(), best.decode->config.accelerator->name,
                            report.pools[1].usd_per_replica_hour, best.decode->link));
    a.push_back("pool-signals (disaggregated layouts only): the prefill pool on its GPU duty cycle, the decode pool on queue depth: "
                "a prefill replica is busy in proportion to the prompts it computes, while a decode replica steps whenever one "
                "sequence runs, so its duty cycle stays high at any load and only its requests follow the demand");
    a.push_back(fmt::format("pool targets: queue depth {:.3g} per prefill replica and {:.3g} per decode replica, concurrency {:.3g} and "
                            "{:.3g} (the peak rate over the replicas each pool's load needs, min_replicas aside, x the time a request spends in it at the peak rate, "
                            "in the simulation that verified the layout: until its first token in the prefill pool, {:.3g} s of it "
                            "computing; {:.3g} s in the decode pool)",
                            targets.pool_queue[0], targets.pool_queue[1], targets.pool_concurrency[0], targets.pool_concurrency[1],
                            targets.pool_prefill_compute_s, targets.pool_decode_s));
  } else {
    a.push_back(fmt::format("static-peak: {} replicas, the plan's count at peak {:.3g}/s with utilization at most {:.0f}%",
                            best.replicas, service.traffic.peak_rps, max_utilization * 100));
  }
  a.push_back(fmt::format("traffic: {}; simulated {:.1f} h, seed {}", report.traffic, report.duration_s / 3600, options.seed));
  a.push_back(fmt::format("cold start {:.0f} s = node provisioning {:.0f} s + container start {:.0f} s + model load {:.0f} s "
                          "({:.1f} GiB of weights at {:.2g} GB/s from {}); on a warm node {:.0f} s. Delays are assumed defaults "
                          "unless the spec's scaling section sets them: measure yours",
                          report.start_s, scaling.node_provisioning_s, scaling.container_start_s, report.model_load_s,
                          report.weights_gib, load_gbps, scaling.model_source, report.warm_start_s));
  const double join_s = router_join_s(layout.router, layout.llm, false);
  const double wake_s = router_join_s(layout.router, layout.llm, true);
  std::string joins;
  if (join_s > 0)
    joins = fmt::format("; a started replica gets requests {:.3g} s after it is ready on average (the proxy's DNS cache, "
                        "re-resolution and first health check, every {} s), {:.3g} s from zero (the proxy's readiness probe too)",
                        join_s, kRouterProbePeriodS, wake_s);
  else if (wake_s > 0)
    joins = fmt::format("; from zero, the router's readiness probe (every {} s) adds {:.3g} s on average", kRouterProbePeriodS, wake_s);
  a.push_back(fmt::format("routing, every policy's{}: {}{}",
                          wake_s > 0 ? " (scale-to-zero's too: the HTTP add-on's interceptor holds requests until the router is "
                                       "ready, which it is while a replica is)"
                                     : "",
                          routing_words(layout.router, layout.llm), joins));
  if (best.config.pipeline_parallel > 1)
    a.push_back(fmt::format("a replica spans {} nodes ({} x {} {}, a LeaderWorkerSet group): the autoscaler counts and starts whole "
                            "replicas; a replica's nodes are ordered together and it serves once all have loaded (every node fetches "
                            "the whole weights, as `plan --emit-k8s` writes it), it drains as one, and its nodes are billed until its "
                            "last micro-batch lane has drained; a warm pool counts replicas' worth of nodes",
                            best.config.pipeline_parallel, best.config.devices(), best.config.accelerator->name,
                            parallel_layout(best.config)));
  a.push_back(fmt::format("HPA mechanics (Kubernetes defaults, kubernetes.io HPA docs): sync every {:.0f} s, tolerance 10%, "
                          "scale-up stabilization {:.0f} s, scale-down stabilization {:.0f} s, up by max(4 pods, 100%) and down by "
                          "up to 100% per period; KEDA activation wakes a pool at zero on the first request; every policy starts "
                          "with the plan's replicas already running (their count in the scale-down window)",
                          scaling.interval_s, scaling.scale_up_window_s, scaling.scale_down_window_s));
  if (best.decode)
    a.push_back(fmt::format("targets on each pool: GPU duty cycle {:.0f}% on the prefill pool ({}) and {:.0f}% on the decode pool, "
                            "CPU {:.0f}%{}", targets.pool_prefill_duty_pct,
                            scaling.duty_cycle_target_given ? "the spec's" : "its replicas' duty cycle in the simulation that verified the plan at the peak",
                            scaling.duty_cycle_target_pct, scaling.cpu_target_pct,
                            scaling.queue_depth_target > 0 || scaling.concurrency_target > 0 ? "; queue depth and concurrency as set in the spec" : ""));
  else
    a.push_back(fmt::format("targets{}: queue depth {:.3g} per replica (capacity at the SLO {:.3g} requests/s per replica x the peak plan's "
                            "simulated mean latency {:.3g} s), concurrency {:.3g} in service per replica (x mean service time {:.3g} s), "
                            "GPU duty cycle {:.0f}%, CPU {:.0f}%",
                            scaling.queue_depth_target > 0 || scaling.concurrency_target > 0 ? " (some set in the spec)" : "",
                            targets.queue, targets.capacity_at_limit_rps, targets.measured_latency_s, targets.concurrency,
                            targets.measured_service_s, scaling.duty_cycle_target_pct, scaling.cpu_target_pct));
  a.push_back(fmt::format("CPU model of a GPU-bound server: {:.0f}% idle floor + one core driving the GPU while it works + "
                          "{:.3g} ms per request, over {} cores: at a fully busy GPU the CPU reads {:.0f}%",
                          CpuModel{}.idle_pct, scaling.cpu_ms_per_request, scaling.cpu_cores,
                          CpuModel{scaling.cpu_cores, 3, 1.0, scaling.cpu_ms_per_request}.utilization_pct(1.0, best.level.capacity_rps)));
  a.push_back(fmt::format("billing: every node from the request to launch until its replica has drained and stopped, and "
                          "{} warm node(s) throughout{}; GPU-hours = replica-hours x {}", scaling.warm_pool, best.decode ? " in each pool" : "",
                          best.decode ? fmt::format("each pool's GPUs per replica ({} and {})", report.pools[0].gpus_per_replica,
                                                    report.pools[1].gpus_per_replica)
                                      : fmt::format("{} GPU(s)", report.gpus_per_replica)));
  a.push_back("an SLO is met, as in plan verification, when every p99 target holds over all requests (each metric's "
              "own p99, a timed-out request counted as longer than any served) and no prompt is rejected; attainment is the "
              "share within all targets at once");
  a.push_back(client_timeout_text(service.traffic) +
              (service.traffic.client_timeout_s > 0 ? "; a policy that falls behind loses those requests rather than holding "
                                                      "them for ever"
                                                    : ""));
  std::string replayed;
  for (const auto& p : report.policies)
    if (p.fast_forwarded_s > 0) replayed += fmt::format("{}{} {:.1f} h", replayed.empty() ? "" : ", ", p.name, p.fast_forwarded_s / 3600);
  const ScalingOptions window;  // the simulator's fast-forward window, as simulate_policy leaves it
  if (!replayed.empty())
    a.push_back(fmt::format("fast-forward: steady stretches (pool settled, arrival rate holding, requests in the system steady "
                            "over >= {:.0f} minutes and {} requests) replayed from that window to the end of the rate's run "
                            "instead of simulated: {} of {:.1f} h; --exact simulates every request",
                            window.fast_forward_window_s / 60, format_number(static_cast<double>(window.fast_forward_requests), 0), replayed,
                            report.duration_s / 3600));
}

}  // namespace

std::vector<int> schedule_by_minute(const PolicyOutcome& scheduled) {
  ScalerConfig c;
  c.schedule = scheduled.schedule;
  c.schedule_lead_s = scheduled.schedule_lead_s;
  const Autoscaler scaler(c);
  std::vector<int> by_minute(c.schedule.size() * 60);
  for (size_t m = 0; m < by_minute.size(); ++m) by_minute[m] = scaler.scheduled(static_cast<double>(m) * 60);
  return by_minute;
}

std::vector<CronWindow> schedule_windows(const PolicyOutcome& scheduled) { return cron_windows(schedule_by_minute(scheduled), scheduled.min_replicas); }

Result<ScalingReport> scale_layout(const Catalog& catalog, const Spec& spec, const ServiceSpec& service_in,
                                    const ScalingPlanOptions& options, const PlanOption& replica, const VerifyOptions& verify) {
  ServiceSpec service = service_in;
  const ModelSpec& model = spec.models.at(service.model_key);
  const ScalingSpec& scaling = service.scaling;
  const bool llm = model.arch.kind == ModelKind::decoder;
  const std::string field = "services." + service.name;

  ScalingReport report;
  report.service = service.name;
  report.plan = replica;
  const PlanOption& best = report.plan;
  report.gpus_per_replica = best.config.devices();
  report.usd_per_replica_hour = best.usd_per_hour / std::max(1, best.replicas);
  report.reserved = best.pricing == Pricing::reserved_1y || best.pricing == Pricing::reserved_3y;
  // On demand, a replica costs its share of a node, or its nodes when it spans several.
  const double nodes_per_replica = static_cast<double>(best.config.pipeline_parallel) / best.replicas_per_node();
  report.burst_usd_per_replica_hour =
      report.reserved ? best.offering->usd_per_hour(Pricing::on_demand).value_or(report.usd_per_replica_hour / nodes_per_replica) *
                            nodes_per_replica
                      : report.usd_per_replica_hour;
  report.service_min_replicas = service.min_replicas;
  report.capacity_rps_per_replica = best.level.capacity_rps;
  if (best.decode) {
    // Disaggregated: two pools on one offering, each replica priced by its GPUs.
    const double usd_per_gpu_hour = best.usd_per_hour / std::max(1, best.gpus());
    const double burst_per_gpu_hour =
        report.reserved ? best.offering->usd_per_hour(Pricing::on_demand).value_or(usd_per_gpu_hour * best.offering->accelerator_count) /
                              std::max(1, best.offering->accelerator_count)
                        : usd_per_gpu_hour;
    const std::pair<const Configuration*, int> pools[] = {{&best.config, best.replicas}, {&best.decode->config, best.decode->replicas}};
    for (const auto& [config, count] : pools) {
      ScalingReport::Pool pool;
      pool.role = report.pools.empty() ? "prefill" : "decode";
      pool.tensor_parallel = config->tensor_parallel;
      pool.gpus_per_replica = config->devices();
      pool.peak_replicas = count;
      pool.usd_per_replica_hour = usd_per_gpu_hour * pool.gpus_per_replica;
      pool.burst_usd_per_replica_hour = burst_per_gpu_hour * pool.gpus_per_replica;
      report.pools.push_back(pool);
    }
    report.usd_per_replica_hour = report.pools.front().usd_per_replica_hour;
    report.burst_usd_per_replica_hour = report.pools.front().burst_usd_per_replica_hour;
    // The demand chart's "replicas needed": both pools' replicas at peak, in proportion.
    report.capacity_rps_per_replica = service.traffic.peak_rps / (best.replicas + best.decode->replicas) / spec.constraints.max_utilization;
  }

  Deployment deployment = deployment_of(best, llm, verify.prefill_chunk_tokens, service.deployment ? &*service.deployment : nullptr);
  for (DeploymentGroup& group : deployment.groups) group.count = 1;
  auto replicas = build_replicas(catalog, model, service, deployment, verify.build);
  if (!replicas.ok()) return replicas.error();

  const ColdStart start = cold_start(model, scaling);
  report.weights_gib = start.weights_gib;
  report.model_load_s = start.model_load_s;
  report.warm_start_s = start.warm_start_s;
  report.start_s = start.start_s;

  ArrivalOptions arrivals = arrival_options(service, service.traffic.average_rps);
  shape_traffic(service, arrivals, report);
  report.hourly_profile = arrivals.process == "curve";
  if (options.duration_s > 0) report.duration_s = options.duration_s;
  if (report.duration_s > kMaxTrafficSpanS)
    return Error{spec.path, service.line, field + ".traffic",
                 fmt::format("the traffic spans {:.0f} days; gpuwise scale simulates at most 366 (use --hours)", report.duration_s / 86400)};

  const double max_utilization = spec.constraints.max_utilization;
  LayoutContext layout(spec, service, options, report, arrivals, replicas.value());
  layout.router = *parse_router(deployment.router);
  layout.llm = llm;
  layout.router_instances = router_instances_as_deployed(layout.router, llm, service.deployment ? &*service.deployment : nullptr);
  layout.static_replicas = best.replicas;
  layout.max_replicas = scaling.max_replicas > 0 ? scaling.max_replicas : std::max(2 * best.replicas, best.replicas + 4);
  for (const ScalingReport::Pool& pool : report.pools)
    layout.pools.push_back({pool.peak_replicas, scaling.max_replicas > 0 ? scaling.max_replicas
                                                                           : std::max(2 * pool.peak_replicas, pool.peak_replicas + 4)});
  std::vector<std::string> names = scaling.policies.empty() ? all_policies() : scaling.policies;
  // pool-signals runs on disaggregated pools only; there it runs unless the policies are named.
  if (layout.pools.empty()) names.erase(std::remove(names.begin(), names.end(), "pool-signals"), names.end());
  else if (scaling.policies.empty()) names.push_back("pool-signals");
  const bool show_static = std::find(names.begin(), names.end(), "static-peak") != names.end();
  names.erase(std::remove(names.begin(), names.end(), "static-peak"), names.end());
  names.insert(names.begin(), "static-peak");
  if (options.scheduled_on_hourly_traffic && report.hourly_profile && std::find(names.begin(), names.end(), "scheduled") == names.end())
    names.push_back("scheduled");
  // Static peak first: its simulated latency sets the metric policies' default targets. The
  // others are independent: simulated in parallel, kept in the order named.
  PolicyTargets targets;
  targets.queue = scaling.queue_depth_target;
  targets.concurrency = scaling.concurrency_target;
  targets.pool_queue.assign(layout.pools.size(), 0);
  targets.pool_concurrency.assign(layout.pools.size(), 0);
  PolicyRun fixed = configure_run(layout, names.front(), targets);
  simulate_policy(layout, fixed);
  if (fixed.error) return *fixed.error;
  // What one replica holds when it serves its capacity at the SLO (the planner's rate at the
  // utilization limit), by Little's law on the mean latency (backlog) and mean service time
  // (in service) simulated for the peak plan.
  targets.capacity_at_limit_rps = best.level.capacity_rps * max_utilization;
  targets.measured_latency_s = fixed.mean_latency_s;
  targets.measured_service_s = std::max(0.0, fixed.mean_latency_s - fixed.mean_wait_s);
  if (targets.queue <= 0) targets.queue = std::max(1.0, targets.capacity_at_limit_rps * targets.measured_latency_s);
  if (targets.concurrency <= 0) targets.concurrency = std::max(0.5, targets.capacity_at_limit_rps * targets.measured_service_s);
  if (!layout.pools.empty()) {
    // What each pool holds per replica at peak, where the plan sized its count: its share of the
    // peak rate over the replicas the load needs (not those min_replicas adds: a pool held at its
    // floor would otherwise be asked for one more at every burst), by Little's law on the time a
    // request spends in it in the simulation at the peak rate that verified the plan (a prompt in
    // the prefill pool until its first token, queued then computed; a request in the decode pool
    // for the rest); the static run's means cover the traffic's whole span, mostly below the peak.
    const double peak = service.traffic.peak_rps;
    const bool at_peak = best.simulated && best.simulated->ttft_mean_s > 0;
    const double ttft_s = at_peak ? best.simulated->ttft_mean_s : fixed.mean_ttft_s;
    const double wait_s = at_peak ? best.simulated->wait_mean_s : fixed.mean_wait_s;
    const double latency_s = at_peak ? best.simulated->latency_mean_s : fixed.mean_latency_s;
    const double in_prefill_s = ttft_s, computing_s = std::max(0.0, ttft_s - wait_s);
    const double in_decode_s = std::max(0.0, latency_s - ttft_s);
    targets.pool_prefill_compute_s = computing_s;
    targets.pool_decode_s = in_decode_s;
    // A prefill replica is busy in proportion to the prompts it computes: unless the spec sets a
    // duty-cycle target, its pool holds the duty cycle at which the plan's count met the SLO at
    // the peak (a lower target asks for more replicas than the plan verified, at the peak itself).
    const double verified_duty = at_peak ? best.simulated->prefill_duty_cycle : 0;
    targets.pool_prefill_duty_pct = scaling.duty_cycle_target_given || verified_duty <= 0 ? scaling.duty_cycle_target_pct
                                                                                          : std::clamp(verified_duty * 100, 1.0, 100.0);
    for (size_t p = 0; p < layout.pools.size(); ++p) {
      const int needed = p == 0 ? best.needed_replicas : best.decode ? best.decode->needed_replicas : 0;
      const int sized = needed > 0 ? std::min(needed, layout.pools[p].static_replicas) : layout.pools[p].static_replicas;
      const double per_replica = peak / std::max(1, sized);
      targets.pool_queue[p] = scaling.queue_depth_target > 0 ? scaling.queue_depth_target
                                                             : std::max(1.0, per_replica * (p == 0 ? in_prefill_s : in_decode_s));
      targets.pool_concurrency[p] = scaling.concurrency_target > 0 ? scaling.concurrency_target
                                                                   : std::max(0.5, per_replica * (p == 0 ? computing_s : in_decode_s));
    }
  }
  std::vector<PolicyRun> runs;
  for (size_t i = 1; i < names.size(); ++i) runs.push_back(configure_run(layout, names[i], targets));
  parallel_for(runs.size(), options.jobs, [&](size_t i) { simulate_policy(layout, runs[i]); });
  if (show_static) report.policies.push_back(std::move(fixed.outcome));
  for (auto& run : runs) {
    if (run.error) return *run.error;
    report.policies.push_back(std::move(run.outcome));
  }
  for (size_t i = 0; i < report.policies.size(); ++i) {
    const auto& p = report.policies[i];
    if (p.meets_slo && !p.below_min_replicas &&
        (report.recommended < 0 || p.usd < report.policies[static_cast<size_t>(report.recommended)].usd))
      report.recommended = static_cast<int>(i);
  }
  add_assumptions(report, service, options, targets, max_utilization, start.load_gbps, layout);
  return report;
}

}  // namespace gw
