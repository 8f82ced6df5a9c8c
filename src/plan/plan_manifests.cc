#include "plan/plan_manifests.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/formatting.h"
#include "core/money.h"
#include "core/numbers.h"
#include "k8s/node_allocatable.h"
#include "plan/cold_start.h"
#include "plan/scaling_plan.h"
#include "plan/spot.h"

namespace gw {

Result<std::vector<Manifest>> plan_manifests(const Catalog& catalog, const PlanResult& plans, const PlanSpecOptions& plan_options,
                                             const std::string& prometheus_url) {
  const Spec& spec = plans.spec;
  const VerifyOptions verify = verify_options(plan_options);
  std::vector<Manifest> manifests;
  for (size_t i = 0; i < spec.services.size(); ++i) {
    const ServicePlan& plan = plans.services[i];
    if (!plan.feasible || !plan.best) continue;
    ServiceSpec service = spec.services[i];
    ScalingPlanOptions options;
    options.calibration = verify.build.calibration;
    options.seed = plan_options.seed;
    const double start_s = cold_start(spec.models.at(service.model_key), service.scaling).start_s;
    double cooldown = service.scaling.keep_alive_given ? service.scaling.keep_alive_s : std::max(60.0, std::ceil(start_s / 30) * 30);
    service.scaling.keep_alive_s = cooldown;
    service.scaling.policies = {"queue-depth", "scale-to-zero"};
    // The printed plan was verified with the command's options: scale that layout. Screen-only
    // plans are verified here first, as the manifests' counts must hold in simulation.
    auto result = !plan_options.simulate ? plan_scaling(catalog, spec, service, options)
                                   : scale_layout(catalog, spec, service, options, *plan.best, verify);
    if (!result.ok()) return result.error();
    const ScalingReport& r = result.value();
    const PolicyOutcome& queue = r.policies[0];
    const PolicyOutcome& zero = r.policies[1];
    ManifestInput in;
    in.service = service.name;
    in.llm = spec.models.at(service.model_key).arch.kind == ModelKind::decoder;
    in.queue_threshold = queue.target;
    in.peak_replicas = r.plan.replicas;
    in.max_replicas = queue.max_replicas;
    bool zero_pays = zero.meets_slo && !zero.below_min_replicas && zero.usd < 0.99 * queue.usd;
    in.min_replicas = zero_pays ? 0 : queue.min_replicas;
    in.why_min = zero_pays ? fmt::format("scaling to zero met the SLO ({:.2f}%) for {}/month against {}/month kept warm, over {:.0f} h of "
                                         "this service's traffic", zero.slo_attainment * 100, format_usd(zero.usd_per_month),
                                         format_usd(queue.usd_per_month), r.duration_s / 3600)
                           : zero.below_min_replicas ? fmt::format("the service's min_replicas is {} (availability): it does not scale "
                                                                   "to zero", service.min_replicas)
                           : zero.meets_slo ? fmt::format("scaling to zero saved under 1% ({}/month against {}/month)",
                                                          format_usd(zero.usd_per_month), format_usd(queue.usd_per_month))
                                            : fmt::format("scaling to zero missed the SLO ({:.2f}% within it) over {:.0f} h of this service's traffic",
                                                          zero.slo_attainment * 100, r.duration_s / 3600);
    in.why_threshold = fmt::format("{:.3g} requests queued or in service per replica = capacity at the SLO {:.3g}/s x mean latency "
                                   "(simulated queue-depth scaling: SLO {:.2f}%, {} GPU-hours over {:.0f} h){}",
                                   queue.target, r.capacity_rps_per_replica * spec.constraints.max_utilization,
                                   queue.slo_attainment * 100, format_number(queue.gpu_hours, 1), r.duration_s / 3600,
                                   in.llm ? "" : "; Triton's pending count leaves out requests in service, so compare it with the same figure less what a replica serves at once");
    in.cooldown_s = cooldown;
    in.polling_interval_s = service.scaling.interval_s;
    in.scale_down_window_s = service.scaling.scale_down_window_s;
    in.scale_up_window_s = service.scaling.scale_up_window_s;
    in.prometheus_url = prometheus_url;
    in.cloud = r.plan.offering->cloud;
    in.instance_types = {r.plan.offering->instance_type};
    for (const auto& o : plan.pareto)
      if (o.offering && o.offering->cloud == in.cloud && o.config.accelerator == r.plan.config.accelerator &&
          std::find(in.instance_types.begin(), in.instance_types.end(), o.offering->instance_type) == in.instance_types.end())
        in.instance_types.push_back(o.offering->instance_type);
    // Spot only where the plan put the service on spot (interruptible services).
    in.capacity_types = {"on-demand"};
    if (r.plan.spot_with_floor()) in.capacity_types.push_back("spot");
    in.gpus_per_replica = r.gpus_per_replica;
    in.accelerator = r.plan.config.accelerator->name;
    in.usd_per_replica_hour = r.usd_per_replica_hour;
    in.cold_start_s = r.start_s;
    const PlanOption& best = r.plan;
    const int per_node = best.replicas_per_node();
    in.replicas = best.replicas;
    in.min_nodes = best.min_nodes;
    in.spot_floor = best.spot_with_floor();
    in.floor_replicas = best.spot_with_floor() ? per_node : 0;
    in.model_name = service.model_key;
    in.model_uri = service.scaling.model_uri;
    in.image = service.scaling.image;
    in.max_batch = best.config.max_batch;
    in.token_budget = verify.prefill_chunk_tokens;
    in.gpu_memory_utilization = plan_options.usable_fraction;
    // A replica's share of what the node leaves for pods: capacity less the cloud's kubelet and
    // system reservations, the eviction threshold and the GPU DaemonSets; never more, or the pod
    // stays Pending.
    const NodeAllocatable node = node_allocatable(best.offering->cloud, best.offering->vcpus, best.offering->host_memory_gib);
    if (best.offering->vcpus <= 0 || best.offering->host_memory_gib <= 0) {
      // GPUs attached to a VM the user picks (GCP's n1 + GPU): the catalog does not know the host.
      in.cpu_per_replica = 4;
      in.memory_gib_per_replica = 16;
      in.why_resources = fmt::format("{} names GPUs, not the host VM: give its node pool a machine type whose allocatable share per "
                                     "replica ({} per node) covers 4 CPU and 16 GiB", best.offering->instance_type, per_node);
    } else {
      in.cpu_per_replica = std::floor(node.cpu_for_pods / per_node * 10) / 10;
      in.memory_gib_per_replica = std::floor(node.memory_gib_for_pods / per_node);
      if (in.cpu_per_replica < 1 || in.memory_gib_per_replica < 4)
        return Error{spec.path, service.line, "services." + service.name,
                     fmt::format("{} leaves {:.1f} CPU and {:.1f} GiB for pods per replica ({} per node; {}): too little to run a "
                                 "serving replica (1 CPU and 4 GiB at least)",
                                 best.offering->instance_type, node.cpu_for_pods / per_node, node.memory_gib_for_pods / per_node, per_node,
                                 node.formula)};
      in.why_resources = fmt::format("{} has {} vCPU and {} GiB; {:.2f} CPU and {:.2f} GiB allocatable ({}); {} replica(s) per node",
                                     best.offering->instance_type, best.offering->vcpus, best.offering->host_memory_gib, node.cpu,
                                     node.memory_gib, node.formula, per_node);
    }
    in.startup_s = r.warm_start_s;
    in.termination_grace_s = best.spot_with_floor() ? std::max(30.0, reclaim_notice(best.offering->cloud).seconds) : 60;
    for (auto& m : service_manifests(in)) manifests.push_back(std::move(m));
  }
  return manifests;
}

}  // namespace gw
