#include "plan/plan_manifests.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/formatting.h"
#include "core/money.h"
#include "core/numbers.h"
#include "core/text.h"
#include "k8s/batch_job_manifests.h"
#include "k8s/cron_windows.h"
#include "k8s/disaggregated_manifests.h"
#include "k8s/multi_node_manifests.h"
#include "k8s/node_allocatable.h"
#include "plan/batch_plan.h"
#include "plan/cold_start.h"
#include "plan/scaling_plan.h"
#include "plan/spot.h"

namespace gw {
namespace {

// The spec's entry the manifests are for, as errors name it.
std::string spec_field(const ManifestInput& in, const ServiceSpec& service) {
  return (in.batch_job ? "batch_jobs." : "services.") + service.name;
}

// A pod's requests: its replica's share of what the node leaves for pods (capacity less the
// cloud's kubelet and system reservations, the eviction threshold and the GPU DaemonSets); never
// more, or the pod stays Pending.
std::optional<Error> size_pod(ManifestInput& in, const Offering& offering, int per_node, const Spec& spec, const ServiceSpec& service) {
  const NodeAllocatable node = node_allocatable(offering.cloud, offering.vcpus, offering.host_memory_gib);
  if (offering.vcpus <= 0 || offering.host_memory_gib <= 0) {
    // GPUs attached to a VM the user picks (GCP's n1 + GPU): the catalog does not know the host.
    in.cpu_per_replica = 4;
    in.memory_gib_per_replica = 16;
    in.why_resources = fmt::format("the catalog has no host CPU and memory for {}: 4 CPU and 16 GiB per replica, which its "
                                   "node's allocatable share ({} replica(s) per node) must cover", offering.instance_type, per_node);
    return std::nullopt;
  }
  in.cpu_per_replica = std::floor(node.cpu_for_pods / per_node * 10) / 10;
  in.memory_gib_per_replica = std::floor(node.memory_gib_for_pods / per_node);
  if (in.cpu_per_replica < 1 || in.memory_gib_per_replica < 4)
    return Error{spec.path, service.line, spec_field(in, service),
                 fmt::format("{} leaves {:.1f} CPU and {:.1f} GiB for pods per replica ({} per node; {}): too little to run a "
                             "serving replica (1 CPU and 4 GiB at least)",
                             offering.instance_type, node.cpu_for_pods / per_node, node.memory_gib_for_pods / per_node, per_node,
                             node.formula)};
  in.why_resources = fmt::format("{} has {} vCPU and {} GiB; {:.2f} CPU and {:.2f} GiB allocatable ({}); {} replica(s) per node",
                                 offering.instance_type, offering.vcpus, offering.host_memory_gib, node.cpu, node.memory_gib,
                                 node.formula, per_node);
  return std::nullopt;
}

// What every pod of the service runs on this offering, for one pool or two: the model and its
// weights, the engine's settings, the node pool's instance and the pod's share of a node.
std::optional<Error> fill_pod(ManifestInput& in, const Spec& spec, const ServiceSpec& service, const Offering& offering,
                              const Configuration& config, int per_node, int token_budget, double usable_fraction) {
  in.service = service.name;
  in.llm = spec.models.at(service.model_key).arch.kind == ModelKind::decoder;
  in.cloud = offering.cloud;
  in.instance_types = {offering.instance_type};
  in.capacity_types = {"on-demand"};
  if (offering.cloud == "gcp") {
    // GKE provisions the nodes through a ComputeClass of GKE's own node shapes.
    std::string why;
    auto shape = gke_node_shape(config.accelerator->name, offering.instance_type, offering.accelerator_count, &why);
    if (!shape)
      return Error{spec.path, service.line, spec_field(in, service), "--emit-k8s: the plan's nodes cannot be written for GKE: " + why};
    in.gke_nodes = {*shape};
    if (shape->tpu && !in.llm && service.scaling.image.empty())
      return Error{spec.path, service.line, spec_field(in, service),
                   "--emit-k8s: Triton, the default server for a model that is not an LLM, does not run on TPUs: name an image "
                   "that serves it there (scaling.image; a batch job's image), speaking KServe v2 on port 8000"};
  }
  in.gpus_per_replica = config.tensor_parallel;
  in.accelerator = config.accelerator->name;
  in.cold_start_s = cold_start(spec.models.at(service.model_key), service.scaling).start_s;
  in.model_name = service.model_key;
  in.model_uri = service.scaling.model_uri;
  in.image = service.scaling.image;
  in.max_batch = config.max_batch;
  in.token_budget = token_budget;
  in.gpu_memory_utilization = usable_fraction;
  return size_pod(in, offering, per_node, spec, service);
}

// Where the plan reserves capacity, the autoscaled bill reserved the floor alone: the comment
// line that says how much to reserve (not the peak's count the plan priced).
std::string reserved_floor_note(const ScalingReport& r, const PolicyOutcome& p, const std::string& pool) {
  if (!r.reserved) return "";
  const std::string pricing(pricing_name(r.plan.pricing));
  auto note = [&](const std::string& whose, int floor, double burst_usd, int peak) {
    return fmt::format("# Pricing: {} for the floor: the simulation reserved {} {} replica(s) every hour and billed those above them on "
                       "demand (${:.4g}/replica-hour); {}.\n",
                       pricing, whose, floor, burst_usd,
                       floor == 0 ? "reserve none: a reservation would be paid through the hours at zero"
                       : floor < peak ? fmt::format("reserve the floor's nodes, not the peak's {} replicas'", peak)
                                      : "reserve the floor's nodes");
  };
  if (pool.empty()) return note("min_replicas'", p.min_replicas, r.burst_usd_per_replica_hour, r.plan.replicas);
  const size_t i = pool == "prefill" ? 0 : 1;
  return note("this pool's", p.pools.at(i).min_replicas, r.pools.at(i).burst_usd_per_replica_hour, r.pools.at(i).peak_replicas);
}

// Whether to scale the pools, and how: the pools simulated over the service's traffic fixed at
// the plan's counts, on queue depth each, and on their own signals (the prefill pool's duty
// cycle, the decode pool's queue depth); the cheaper of the two that meets the SLO for at least
// 1% less than fixed pools (or where fixed pools miss it) is written.
const PolicyOutcome* choose_pool_scaling(const ScalingReport& r, std::string& why) {
  const PolicyOutcome* fixed = r.policy("static-peak");
  if (!fixed || r.pools.size() != 2) {
    why = "the pools were not simulated over the traffic: kept at the plan's counts";
    return nullptr;
  }
  const PolicyOutcome* chosen = nullptr;
  for (const char* name : {"pool-signals", "queue-depth"}) {
    const PolicyOutcome* p = r.policy(name);
    if (p && p->meets_slo && !p->below_min_replicas && (p->usd < 0.99 * fixed->usd || !fixed->meets_slo) &&
        (!chosen || p->usd < chosen->usd))
      chosen = p;
  }
  const std::string span = fmt::format("{:.0f} h of this service's traffic", r.duration_s / 3600);
  auto figures = [&](const PolicyOutcome& p) {
    return fmt::format("{} ({:.2f}% within the SLO, {}/month, {:.1f} + {:.1f} replicas on average)", p.name, p.slo_attainment * 100,
                       format_usd(p.usd_per_month), p.pools[0].mean_ready, p.pools[1].mean_ready);
  };
  if (chosen) {
    why = fmt::format("simulated over {}, scaling each pool on its own met the SLO for less: {} against the fixed pools' {}/month{}",
                      span, figures(*chosen), format_usd(fixed->usd_per_month),
                      fixed->meets_slo ? "" : fmt::format(" (which missed it, {:.2f}%)", fixed->slo_attainment * 100));
    return chosen;
  }
  std::vector<std::string> verdicts;
  for (const char* name : {"pool-signals", "queue-depth"})
    if (const PolicyOutcome* p = r.policy(name))
      verdicts.push_back(figures(*p) + (!p->meets_slo ? " misses the SLO" : p->usd >= fixed->usd ? " costs more" : " saves under 1%"));
  why = fmt::format("simulated over {}, no autoscaler is written: the fixed pools cost {}/month ({:.2f}% within the SLO); {}", span,
                    format_usd(fixed->usd_per_month), fixed->slo_attainment * 100, join_list(verdicts));
  return nullptr;
}

// A disaggregated plan: each pool at the counts the plan verified, the vLLM Router in front, and
// each pool's autoscaler where scaling the pools pays.
Result<std::vector<Manifest>> disaggregated_plan_manifests(const Catalog& catalog, const Spec& spec, const ServiceSpec& service,
                                                           const ServicePlan& plan, const PlanSpecOptions& plan_options,
                                                           const VerifyOptions& verify, const std::string& prometheus_url) {
  const int token_budget = verify.prefill_chunk_tokens;
  const PlanOption& best = *plan.best;
  const DecodePool& decode = *best.decode;
  auto pool = [&](const Configuration& config, int replicas, int instances) -> Result<ManifestInput> {
    ManifestInput in;
    if (auto e = fill_pod(in, spec, service, *best.offering, config, best.replicas_per_node_of(config.tensor_parallel), token_budget,
                          plan_options.usable_fraction))
      return *e;
    in.min_replicas = in.max_replicas = in.peak_replicas = in.replicas = replicas;
    in.usd_per_replica_hour = best.usd_per_hour / std::max(1, best.gpus()) * config.tensor_parallel;
    in.min_nodes = std::min(replicas, std::max(1, instances));
    in.cooldown_s = std::max(60.0, std::ceil(in.cold_start_s / 30) * 30);
    in.startup_s = in.cold_start_s;
    in.termination_grace_s = 60;
    return in;
  };
  auto prefill = pool(best.config, best.replicas, best.nodes.size() > 0 ? best.nodes[0].instances : 1);
  if (!prefill.ok()) return prefill.error();
  auto decoding = pool(decode.config, decode.replicas, best.nodes.size() > 1 ? best.nodes[1].instances : 1);
  if (!decoding.ok()) return decoding.error();
  DisaggregatedManifestInput in;
  in.prefill = prefill.value();
  in.decode = decoding.value();
  ServiceSpec scaled = service;
  scaled.scaling.policies = {"static-peak", "queue-depth", "pool-signals"};
  ScalingPlanOptions options;
  options.calibration = verify.build.calibration;
  options.seed = plan_options.seed;
  auto report = scale_layout(catalog, spec, scaled, options, best, verify);
  if (!report.ok()) return report.error();
  const ScalingReport& r = report.value();
  if (const PolicyOutcome* p = choose_pool_scaling(r, in.why_scaling)) {
    in.autoscaled = true;
    in.prefill.reserve_note = reserved_floor_note(r, *p, "prefill");
    in.decode.reserve_note = reserved_floor_note(r, *p, "decode");
    ManifestInput* pools[] = {&in.prefill, &in.decode};
    for (size_t i = 0; i < 2; ++i) {
      ManifestInput& pool = *pools[i];
      const PolicyOutcome::Pool& outcome = p->pools[i];
      const bool duty = p->name == "pool-signals" && i == 0;
      (duty ? pool.duty_cycle_target_pct : pool.queue_threshold) = outcome.target;
      pool.min_replicas = outcome.min_replicas;
      pool.max_replicas = outcome.max_replicas;
      pool.why_min = fmt::format("the service's min_replicas ({}), as each pool was simulated", outcome.min_replicas);
      pool.why_threshold =
          duty ? fmt::format("{:.3g}% GPU duty cycle per replica ({}): a prefill replica is busy in proportion to the prompts it "
                             "computes; simulated {} over {:.0f} h: {:.1f} replicas on average, at most {}",
                             outcome.target, service.scaling.duty_cycle_target_given ? "scaling.targets.gpu_duty_cycle_pct"
                                                                                      : "its replicas' duty cycle where the plan's count met the SLO at the peak",
                             p->name, r.duration_s / 3600, outcome.mean_ready, outcome.peak_ready)
               : fmt::format("{:.3g} requests {} per replica = the peak rate over the replicas the pool's load needs x the time a "
                             "request spends in it at the peak; simulated {} over {:.0f} h: {:.1f} replicas on average, at most {}",
                             outcome.target, i == 0 ? "queued for or in prefill" : "waiting for their KV or decoding", p->name,
                             r.duration_s / 3600, outcome.mean_ready, outcome.peak_ready);
      pool.polling_interval_s = service.scaling.interval_s;
      pool.scale_down_window_s = service.scaling.scale_down_window_s;
      pool.scale_up_window_s = service.scaling.scale_up_window_s;
      pool.prometheus_url = prometheus_url;
    }
  }
  const Router routed = routing_as_deployed(best, true, service.deployment ? &*service.deployment : nullptr);
  in.router_policy = vllm_router_policy(routed);
  if (service.deployment && service.deployment->router_replicas) in.router_replicas = *service.deployment->router_replicas;
  if (in.router_policy.empty()) {
    in.router_policy = "round_robin";
    in.router_note = fmt::format("the plan was verified with {} routing (deployment.router), which the router has no policy for",
                                 router_name(routed));
  }
  in.link = fmt::format("{} at {:.4g} Gb/s per GPU", decode.link, decode.link_gbps_per_gpu);
  in.planned_kv_pulled_between_steps = decode.kv_pulled_between_steps;
  in.why_layout = best.simulated ? fmt::format("prefill:decode GPUs {}, simulated TTFT p99 {:.3g} s and TPOT p99 {:.3g} s at the peak",
                                               best.layout(), best.simulated->ttft_p99_s, best.simulated->tpot_p99_s)
                                 : fmt::format("prefill:decode GPUs {}, screened at the peak", best.layout());
  return disaggregated_manifests(in);
}

// A batch job's Indexed Job (or CronJob) and its nodes: the plan's replicas, each pod's share
// of its node, spot first where the plan put the job on spot (on-demand where spot is short).
Result<std::vector<Manifest>> batch_job_plan_manifests(const Spec& spec, const BatchJobSpec& job, const BatchOption& best,
                                                       const BatchJobPlan& plan, const VerifyOptions& verify, double usable_fraction) {
  const bool llm = spec.models.at(job.model_key).arch.kind == ModelKind::decoder;
  const ServiceSpec as_service = batch_job_service(job, llm, 1);
  BatchJobManifestInput b;
  b.pod.batch_job = true;
  const int per_node = std::max(1, best.replicas / std::max(1, best.nodes));
  if (auto e = fill_pod(b.pod, spec, as_service, *best.offering, best.config, per_node, verify.prefill_chunk_tokens, usable_fraction))
    return *e;
  b.pod.role = "batch";
  b.pod.replicas = b.pod.peak_replicas = b.pod.max_replicas = best.replicas;
  b.pod.min_nodes = best.nodes;
  b.pod.cooldown_s = 60;  // nodes go a minute after the run's last pod
  b.pod.startup_s = best.startup_s;
  b.pod.usd_per_replica_hour = *best.offering->usd_per_hour(best.pricing) / per_node;
  b.spot = best.pricing == Pricing::spot;
  if (auto on_demand = best.offering->usd_per_hour(Pricing::on_demand))
    b.usd_per_run_on_demand = *on_demand * best.nodes * (best.run_hours - best.run_hours * best.spot_loss_share);
  if (b.spot) b.pod.capacity_types = {"spot", "on-demand"};
  if (b.spot) b.pod.local_zone_id = local_zone(*best.offering);
  b.schedule = job.schedule;
  b.runs_per_month = plan.runs_per_month;
  b.deadline_hours = job.deadline_hours;
  b.run_hours = best.run_hours;
  b.items = job.items;
  b.usd_per_run = best.usd_per_run;
  b.input_uri = job.input_uri;
  b.output_uri = job.output_uri;
  return batch_job_manifests(b);
}

}  // namespace

Result<std::vector<Manifest>> plan_manifests(const Catalog& catalog, const PlanResult& plans, const PlanSpecOptions& plan_options,
                                             const std::string& prometheus_url) {
  const Spec& spec = plans.spec;
  const VerifyOptions verify = verify_options(plan_options);
  std::vector<Manifest> manifests;
  for (size_t i = 0; i < spec.services.size(); ++i) {
    const ServicePlan& plan = plans.services[i];
    if (!plan.feasible || !plan.best) continue;
    ServiceSpec service = spec.services[i];
    if (plan.best->disaggregated()) {
      auto pools = disaggregated_plan_manifests(catalog, spec, service, plan, plan_options, verify, prometheus_url);
      if (!pools.ok()) return pools.error();
      for (auto& m : pools.value()) manifests.push_back(std::move(m));
      continue;
    }
    ScalingPlanOptions options;
    options.calibration = verify.build.calibration;
    options.seed = plan_options.seed;
    const double start_s = cold_start(spec.models.at(service.model_key), service.scaling).start_s;
    double cooldown = service.scaling.keep_alive_given ? service.scaling.keep_alive_s : std::max(60.0, std::ceil(start_s / 30) * 30);
    service.scaling.keep_alive_s = cooldown;
    // Replicas across nodes are scaled in whole groups and kept warm (the HTTP add-on's
    // scale-from-zero is written for Deployments only).
    const bool across_nodes = plan.best->config.pipeline_parallel > 1;
    service.scaling.policies = across_nodes ? std::vector<std::string>{"queue-depth"} : std::vector<std::string>{"queue-depth", "scale-to-zero"};
    // Traffic on an hourly curve may need replicas started ahead of its hours (cron triggers).
    options.scheduled_on_hourly_traffic = true;
    // The printed plan was verified with the command's options: scale that layout. Screen-only
    // plans are verified here first, as the manifests' counts must hold in simulation.
    auto result = !plan_options.simulate ? plan_scaling(catalog, spec, service, options)
                                   : scale_layout(catalog, spec, service, options, *plan.best, verify);
    if (!result.ok()) return result.error();
    const ScalingReport& r = result.value();
    const PolicyOutcome& queue = *r.policy("queue-depth");
    const PolicyOutcome* zero = r.policy("scale-to-zero");
    // Kept warm: queue depth, or with the schedule beside it where that meets the SLO and queue
    // depth alone does not, or costs at least 1% more.
    const PolicyOutcome* scheduled = r.policy("scheduled");
    const bool follow_schedule = scheduled && scheduled->meets_slo && (!queue.meets_slo || scheduled->usd < 0.99 * queue.usd);
    const PolicyOutcome& best_warm = follow_schedule ? *scheduled : queue;
    const PlanOption& best = r.plan;
    const int per_node = across_nodes ? 1 : best.replicas_per_node();  // a pod per node across nodes
    ManifestInput in;
    if (auto e = fill_pod(in, spec, service, *best.offering, best.config, per_node, verify.prefill_chunk_tokens, plan_options.usable_fraction))
      return *e;
    in.queue_threshold = queue.target;
    in.peak_replicas = r.plan.replicas;
    in.max_replicas = best_warm.max_replicas;
    const bool zero_pays = zero && zero->meets_slo && !zero->below_min_replicas && zero->usd < 0.99 * best_warm.usd;
    in.min_replicas = zero_pays ? 0 : queue.min_replicas;
    const bool cron = follow_schedule && !zero_pays;  // the schedule's triggers beside the metric
    const PolicyOutcome& kept_warm = cron ? *scheduled : queue;  // the warm policy the manifests write
    in.why_min = across_nodes ? fmt::format("the service's min_replicas ({}); a replica spans {} nodes and is kept warm (not scaled to zero)",
                                            queue.min_replicas, best.config.pipeline_parallel)
                 : zero_pays ? fmt::format("scaling to zero met the SLO ({:.2f}%) for {}/month against {}/month kept warm, over {:.0f} h of "
                                         "this service's traffic", zero->slo_attainment * 100, format_usd(zero->usd_per_month),
                                         format_usd(best_warm.usd_per_month), r.duration_s / 3600)
                           : zero->below_min_replicas ? fmt::format("the service's min_replicas is {} (availability): it does not scale "
                                                                    "to zero", service.min_replicas)
                           : zero->meets_slo ? fmt::format("scaling to zero saved under 1% ({}/month against {}/month)",
                                                           format_usd(zero->usd_per_month), format_usd(best_warm.usd_per_month))
                                             : fmt::format("scaling to zero missed the SLO ({:.2f}% within it) over {:.0f} h of this service's traffic",
                                                           zero->slo_attainment * 100, r.duration_s / 3600);
    in.why_threshold = fmt::format("{:.3g} requests queued or in service per replica = capacity at the SLO {:.3g}/s x mean latency "
                                   "(simulated {}: SLO {:.2f}%, {} GPU-hours over {:.0f} h){}",
                                   queue.target, r.capacity_rps_per_replica * spec.constraints.max_utilization,
                                   cron ? "with the cron triggers" : "queue-depth scaling", kept_warm.slo_attainment * 100,
                                   format_number(kept_warm.gpu_hours, 1), r.duration_s / 3600,
                                   in.llm ? "" : "; Triton's pending count leaves out requests in service, so compare it with the same figure less what a replica serves at once");
    if (cron) {
      const std::vector<int> by_minute = schedule_by_minute(*scheduled);
      in.schedule = cron_windows(by_minute, scheduled->min_replicas);
      in.schedule_changes = cron_changes(by_minute, std::max(1, scheduled->min_replicas));
      in.timezone = service.traffic.timezone;
      in.why_schedule = fmt::format(
          "each hour's replicas by the traffic's profile in proportion to the peak pool, asked {:.0f} min before the hour (a cold "
          "start of {:.0f} s and a scrape); simulated over {:.0f} h, queue depth alone {} ({:.2f}% within the SLO{}, {}/month), "
          "with the schedule the SLO is met at {}/month",
          scheduled->schedule_lead_s / 60, r.start_s, r.duration_s / 3600, queue.meets_slo ? "met the SLO" : "missed the SLO",
          queue.slo_attainment * 100, queue.timed_out > 0 ? fmt::format(", {} requests timed out", format_number(static_cast<double>(queue.timed_out), 0)) : "",
          format_usd(queue.usd_per_month), format_usd(scheduled->usd_per_month));
    }
    in.cooldown_s = cooldown;
    in.polling_interval_s = service.scaling.interval_s;
    in.scale_down_window_s = service.scaling.scale_down_window_s;
    in.scale_up_window_s = service.scaling.scale_up_window_s;
    in.prometheus_url = prometheus_url;
    for (const auto& o : plan.pareto)
      if (o.offering && o.offering->cloud == in.cloud && o.config.accelerator == r.plan.config.accelerator &&
          std::find(in.instance_types.begin(), in.instance_types.end(), o.offering->instance_type) == in.instance_types.end()) {
        if (on_gke(in)) {
          // A TPU pod takes its node's slice as planned: no other slice shape. GPUs: any shape GKE has.
          if (on_tpu(in)) continue;
          auto shape = gke_node_shape(o.config.accelerator->name, o.offering->instance_type, o.offering->accelerator_count, nullptr);
          if (!shape) continue;
          in.gke_nodes.push_back(*shape);
        }
        in.instance_types.push_back(o.offering->instance_type);
      }
    // Spot only where the plan put the service on spot (interruptible services).
    if (r.plan.spot_with_floor()) in.capacity_types.push_back("spot");
    for (const NodeGroup& g : r.plan.nodes)
      if (g.offering && g.pricing == Pricing::spot && !local_zone(*g.offering).empty()) in.local_zone_id = local_zone(*g.offering);
    in.usd_per_replica_hour = r.usd_per_replica_hour;
    in.reserve_note = reserved_floor_note(r, zero_pays ? *zero : kept_warm, "");
    in.replicas = best.replicas;
    in.min_nodes = best.min_nodes;
    in.spot_floor = best.spot_with_floor();
    in.floor_replicas = best.spot_with_floor() ? per_node : 0;
    in.startup_s = r.warm_start_s;
    in.termination_grace_s = best.spot_with_floor() ? std::max(30.0, reclaim_notice(best.offering->cloud).seconds) : 60;
    // The routing the plan was verified with (a pool scaled to zero too: the interceptor forwards
    // to the router once it is ready).
    const Router routed = routing_as_deployed(best, in.llm, service.deployment ? &*service.deployment : nullptr);
    // The router's policies that the simulation's routers are (vllm-project/router: power_of_two,
    // round_robin), else HAProxy's (a shared queue, leastconn, roundrobin, random(2)).
    const FrontRouter front = front_router(routed, in.llm);
    in.vllm_router_policy = front.vllm_router_policy;
    in.haproxy_balance = front.haproxy.balance;
    in.haproxy_maxconn_per_replica = front.haproxy.maxconn_per_replica;
    in.client_timeout_s = service.traffic.client_timeout_s;
    if (service.deployment && service.deployment->router_replicas) in.router_replicas = *service.deployment->router_replicas;
    if (in.vllm_router_policy.empty() && in.haproxy_balance.empty() && routed != Router::random)
      in.verified_routing = std::string(router_name(routed));
    if (across_nodes) {
      in.nodes_per_replica = best.config.pipeline_parallel;
      in.min_nodes = best.instances;
      for (auto& m : multi_node_manifests(in)) manifests.push_back(std::move(m));
      continue;
    }
    for (auto& m : service_manifests(in)) manifests.push_back(std::move(m));
  }
  for (size_t i = 0; i < spec.batch_jobs.size() && i < plans.batch_jobs.size(); ++i) {
    const BatchJobPlan& plan = plans.batch_jobs[i];
    if (!plan.feasible || !plan.best) continue;
    auto job = batch_job_plan_manifests(spec, spec.batch_jobs[i], *plan.best, plan, verify, plan_options.usable_fraction);
    if (!job.ok()) return job.error();
    for (auto& m : job.value()) manifests.push_back(std::move(m));
  }
  return manifests;
}

}  // namespace gw
