// gpuwise plan SPEC: the cheapest configuration that meets each service's SLO, and why.
#include <CLI/CLI.hpp>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/context.h"
#include "plan/spec_names.h"
#include "cli/training_table.h"
#include "report/style.h"
#include "core/numbers.h"
#include "core/text.h"
#include "plan/training_plan.h"
#include "core/atomic_file.h"
#include "k8s/manifests.h"
#include "plan/quotas.h"
#include "plan/spot.h"
#include "plan/scaling_plan.h"
#include "plan/verify.h"
#include <filesystem>

namespace gw {

namespace {

using nlohmann::json;

struct PlanArgs {
  std::string spec;
  std::string calibration;
  double usable_fraction = 0.90;
  double overhead_gib = 1.0;
  int prefill_chunk = 2048;
  bool no_simulate = false;
  long long sim_requests = 20000;
  uint64_t seed = 1;
  std::string emit_k8s;  // folder for KEDA, HPA and Karpenter manifests
  std::string prometheus_url = "http://prometheus-operated.monitoring.svc:9090";
};

// KEDA, HPA and Karpenter manifests for each planned service. The queue-depth threshold and
// whether scale to zero pays come from simulating both on the service's traffic (gpuwise scale's
// policies); the cooldown is the cold start's billed time (ski rental: idle as long as a restart
// costs), unless the spec sets keep_alive_s.
void emit_k8s(CommandContext& context, const Spec& spec, const std::vector<ServicePlan>& plans, const PlanArgs& args,
              const VerifyOptions& verify) {
  std::error_code error;
  std::filesystem::create_directories(args.emit_k8s, error);
  if (error) fail("--emit-k8s", "cannot create the folder '" + args.emit_k8s + "': " + error.message());
  std::vector<Manifest> manifests;
  for (size_t i = 0; i < spec.services.size(); ++i) {
    const ServicePlan& plan = plans[i];
    if (!plan.feasible || !plan.best) continue;
    ServiceSpec service = spec.services[i];
    ScalingPlanOptions options;
    options.calibration = verify.build.calibration;
    options.seed = args.seed;
    const double start_s = cold_start(spec.models.at(service.model_key), service.scaling).start_s;
    double cooldown = service.scaling.keep_alive_given ? service.scaling.keep_alive_s : std::max(60.0, std::ceil(start_s / 30) * 30);
    service.scaling.keep_alive_s = cooldown;
    service.scaling.policies = {"queue-depth", "scale-to-zero"};
    // The printed plan was verified with the command's options: scale that layout. Screen-only
    // plans are verified here first, as the manifests' counts must hold in simulation.
    auto result = args.no_simulate ? plan_scaling(context.catalog(), spec, service, options)
                                   : scale_layout(context.catalog(), spec, service, options, *plan.best, verify);
    if (!result.ok()) throw InputError{result.error()};
    const ScalingReport& r = result.value();
    const PolicyOutcome& queue = r.policies[0];
    const PolicyOutcome& zero = r.policies[1];
    ManifestInput in;
    in.service = service.name;
    in.llm = spec.models.at(service.model_key).arch.kind == ModelKind::decoder;
    in.queue_threshold = queue.target;
    in.peak_replicas = r.plan.replicas;
    in.max_replicas = queue.max_replicas;
    bool zero_pays = zero.meets_slo && zero.usd < 0.99 * queue.usd;
    in.min_replicas = zero_pays ? 0 : std::max(1, service.scaling.min_replicas);
    in.why_min = zero_pays ? fmt::format("scaling to zero met the SLO ({:.2f}%) for {}/month against {}/month kept warm, over {:.0f} h of "
                                         "this service's traffic", zero.slo_attainment * 100, format_usd(zero.usd_per_month),
                                         format_usd(queue.usd_per_month), r.duration_s / 3600)
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
    in.prometheus_url = args.prometheus_url;
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
    in.gpu_memory_utilization = args.usable_fraction;
    // A replica's share of its node, less a tenth for the kubelet and daemons.
    in.cpu_per_replica = std::max(1.0, std::floor(best.offering->vcpus / per_node * 0.9));
    in.memory_gib_per_replica = std::max(4.0, best.offering->host_memory_gib / per_node * 0.9);
    in.startup_s = r.warm_start_s;
    in.termination_grace_s = best.spot_with_floor() ? std::max(30.0, reclaim_notice(best.offering->cloud).seconds) : 60;
    for (auto& m : service_manifests(in)) manifests.push_back(std::move(m));
  }
  for (const auto& m : manifests) {
    std::string path = (std::filesystem::path(args.emit_k8s) / m.file_name).string();
    if (auto e = write_file_atomically(path, m.yaml)) throw InputError{*e};
    context.note("wrote " + path);
  }
}

double usd_per_1k(const PlanOption& o, double average_rps) {
  return average_rps > 0 ? o.usd_per_hour / (average_rps * 3600.0) * 1000.0 : NAN;
}

double usd_per_million_tokens(const PlanOption& o, const ServicePlan& p) {
  double tokens_per_s = p.average_rps * (p.mean_input_tokens + p.mean_output_tokens);
  return tokens_per_s > 0 ? o.usd_per_hour / (tokens_per_s * 3600.0) * 1e6 : NAN;
}

json option_json(const PlanOption& o, const ServicePlan& p, bool llm) {
  json j = {{"accelerator", o.config.accelerator->name},
            {"tensor_parallel", o.config.tensor_parallel},
            {"batching", std::string(batching_name(o.config.batching))},
            {"max_batch", o.config.max_batch},
            {"replicas", o.replicas},
            {"cloud", o.offering->cloud},
            {"region", o.offering->region},
            {"instance_type", o.offering->instance_type},
            {"instances", o.instances},
            {"pricing", std::string(pricing_name(o.pricing))},
            {"gpus", o.instances * o.offering->accelerator_count},
            {"utilization", o.level.utilization},
            {"operating_batch", o.level.batch},
            {"latency_p50_s", o.level.latency_p50_s},
            {"latency_p99_s", o.level.latency_p99_s},
            {"usd_per_hour", o.usd_per_hour},
            {"usd_per_month", o.usd_per_month()},
            {"usd_per_1k_inferences", usd_per_1k(o, p.average_rps)}};
  json nodes = json::array();
  for (const NodeGroup& g : o.nodes)
    nodes.push_back({{"cloud", g.offering->cloud}, {"region", g.offering->region}, {"zone", g.zone.empty() ? g.offering->zone : g.zone},
                     {"instance_type", g.offering->instance_type}, {"pricing", std::string(pricing_name(g.pricing))},
                     {"instances", g.instances}, {"usd_per_hour", g.offering->usd_per_hour(g.pricing).value_or(0) * g.instances}});
  j["nodes"] = nodes;
  j["min_nodes"] = o.min_nodes;
  if (llm) {
    j["ttft_p99_s"] = o.level.ttft_p99_s;
    j["tpot_p99_s"] = o.level.tpot_p99_s;
    j["usd_per_million_tokens"] = usd_per_million_tokens(o, p);
  }
  if (o.simulated) {
    json s = {{"meets_slo", o.simulated->meets}, {"requests", o.simulated->requests},
              {"latency_p99_s", o.simulated->latency_p99_s}, {"slo_attainment", o.simulated->slo_attainment}};
    if (llm) {
      s["ttft_p99_s"] = o.simulated->ttft_p99_s;
      s["tpot_p99_s"] = o.simulated->tpot_p99_s;
    }
    if (!o.simulated->meets) s["missed"] = o.simulated->miss;
    if (o.simulated->reclaimed) {
      const SimulatedCheck& c = *o.simulated;
      s["reclaim"] = {{"replicas_lost", c.reclaim_replicas}, {"at_s", c.reclaim_at_s}, {"replacement_s", c.replacement_s},
                      {"notice_s", c.notice_s}, {"rerouted_requests", c.rerouted}};
      if (c.drained_s >= 0) s["reclaim"]["drained_s"] = c.drained_s;
    }
    j["simulated"] = s;
  }
  return j;
}

// The cost-latency frontier: each option's monthly cost against its p99 latency (TTFT for LLMs),
// the chosen plan marked.
Chart pareto_chart(const ServicePlan& p, bool llm) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& o : p.pareto)
    values.push_back({{"option", fmt::format("{} x{} tp{} {} ({})", o.config.accelerator->name, o.replicas, o.config.tensor_parallel,
                                              batching_name(o.config.batching), pricing_name(o.pricing))},
                      {"usd_per_month", o.usd_per_month()},
                      {"latency_s", llm ? o.level.ttft_p99_s : o.level.latency_p99_s},
                      {"plan", p.best && o.usd_per_hour == p.best->usd_per_hour && o.config.accelerator == p.best->config.accelerator
                                   ? "chosen plan" : "alternatives"}});
  std::string y = llm ? "TTFT p99 (s)" : "latency p99 (s)";
  nlohmann::json spec = {
      {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
      {"width", 560},
      {"height", 300},
      {"data", {{"values", values}}},
      {"layer", nlohmann::json::array({
                    {{"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"color", "#9aa4b5"}}},
                     {"encoding", {{"x", {{"field", "usd_per_month"}, {"type", "quantitative"}, {"title", "USD per month"}}},
                                   {"y", {{"field", "latency_s"}, {"type", "quantitative"}, {"title", y}}}}}},
                    {{"mark", {{"type", "point"}, {"filled", true}, {"size", 90}, {"tooltip", {{"content", "data"}}}}},
                     {"encoding", {{"x", {{"field", "usd_per_month"}, {"type", "quantitative"}}},
                                   {"y", {{"field", "latency_s"}, {"type", "quantitative"}}},
                                   {"color", {{"field", "plan"}, {"type", "nominal"}, {"title", nullptr},
                                              {"scale", {{"domain", {"alternatives", "chosen plan"}}, {"range", {"#2458a6", "#c2410c"}}}}}}}}},
                })}};
  return {"Cost against latency: the frontier of candidate plans", spec};
}

// The training time-cost frontier: days against dollars per run.
Chart training_chart(const TrainingPlan& tp) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& c : tp.pareto)
    values.push_back({{"option", fmt::format("{} x{} {} ({})", c.offering->accelerator, c.devices, c.offering->instance_type, pricing_name(c.pricing))},
                      {"days", c.expected_time_s / 86400},
                      {"usd", c.usd}});
  nlohmann::json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
                         {"width", 560},
                         {"height", 300},
                         {"data", {{"values", values}}},
                         {"mark", {{"type", "point"}, {"filled", true}, {"size", 90}, {"tooltip", {{"content", "data"}}}}},
                         {"encoding", {{"x", {{"field", "usd"}, {"type", "quantitative"}, {"title", "USD per run"}}},
                                       {"y", {{"field", "days"}, {"type", "quantitative"}, {"title", "days per run"}}}}}};
  return {"Time against cost per run: the frontier", spec};
}

// The plan's latency: the simulation's where it ran (the screen only prunes), else the screen's.
std::string latency_text(const PlanOption& o, bool llm) {
  auto screen = [&] {
    return llm ? fmt::format("ttft p99 {:.3f} s, tpot p99 {:.1f} ms", o.level.ttft_p99_s, o.level.tpot_p99_s * 1e3)
               : fmt::format("p99 {:.1f} ms", o.level.latency_p99_s * 1e3);
  };
  if (!o.simulated || !o.simulated->requests) return screen() + " (screen)";
  const SimulatedCheck& s = *o.simulated;
  return (llm ? fmt::format("simulated ttft p99 {:.3f} s, tpot p99 {:.1f} ms", s.ttft_p99_s, s.tpot_p99_s * 1e3)
              : fmt::format("simulated p99 {:.1f} ms", s.latency_p99_s * 1e3)) +
         " (screen: " + screen() + ")";
}

int run_plan(CommandContext& context, const PlanArgs& args) {
  auto spec = load_spec(args.spec);
  if (!spec.ok()) throw InputError{spec.error()};
  if (auto missing = require_slos(spec.value(), "plan")) throw InputError{*missing};
  context.add_input(args.spec);
  const Catalog& catalog = context.catalog();
  std::optional<Calibration> calibration = load_calibration_option(args.calibration);
  if (calibration) context.add_input(args.calibration);
  if (auto bad_name = check_spec_names(spec.value(), catalog, args.spec)) throw InputError{*bad_name};

  PlannerOptions options;
  options.calibration = calibration ? &*calibration : nullptr;
  options.usable_fraction = args.usable_fraction;
  options.overhead_gib = args.overhead_gib;
  options.prefill_chunk_tokens = args.prefill_chunk;

  VerifyOptions verify;
  verify.build.calibration = options.calibration;
  verify.build.usable_fraction = options.usable_fraction;
  verify.build.overhead_gib = options.overhead_gib;
  verify.requests = args.sim_requests;
  verify.seed = args.seed;
  verify.prefill_chunk_tokens = options.prefill_chunk_tokens;
  std::vector<ServicePlan> plans;
  for (const auto& service : spec.value().services) {
    plans.push_back(plan_service(catalog, spec.value(), service, options));
    if (!args.no_simulate) verify_plan(catalog, spec.value(), service, plans.back(), verify);
  }

  // Training jobs: every offering x device count x pricing, against the deadline.
  std::vector<TrainingPlan> training_plans;
  std::vector<std::optional<SpotAvailability>> traces;
  for (const auto& t : spec.value().training) {
    const ModelSpec& model = spec.value().models.at(t.model_key);
    TrainingJob job;
    job.arch = &model.arch;
    bool generic = model.arch.kind == ModelKind::generic;
    job.tokens = generic ? t.items : t.tokens;
    job.sequence_length = t.sequence_length;
    job.global_batch_tokens = generic ? 256 : t.global_batch_tokens;
    job.precision = t.precision;
    job.zero_stage = t.zero_stage;
    job.recompute = t.recompute;
    TrainingSearch search;
    search.allow_unfabric_clusters = t.allow_tcp_clusters;
    search.clouds = spec.value().constraints.clouds;
    search.regions = spec.value().constraints.regions;
    search.calibration = options.calibration;
    search.pricing = spec.value().constraints.pricing;
    search.interruptible = t.interruptible;
    if (t.interruptible && std::find(search.pricing.begin(), search.pricing.end(), Pricing::spot) == search.pricing.end())
      search.pricing.push_back(Pricing::spot);
    if (t.deadline_days) search.deadline_s = *t.deadline_days * 86400;
    search.device_counts = t.counts;
    std::vector<std::string> names = t.accelerators;
    if (names.empty())
      for (const Accelerator* a : allowed_accelerators(catalog, spec.value().constraints)) search.accelerators.push_back(a);
    for (const auto& name : names) {
      auto named = catalog.accelerator_named(name);
      if (!named.ok()) throw InputError{Error{args.spec, t.line, "training." + t.name + ".accelerators", named.error().message}};
      const Accelerator* a = named.value();
      if (t.precision == Precision::fp8 && !a->peak(Precision::fp8))
        throw InputError{Error{args.spec, t.precision_line, "training." + t.name + ".precision",
                               a->name + " has no FP8 tensor cores: FP8 training needs Hopper, Ada, Blackwell, MI300 or newer"}};
      search.accelerators.push_back(a);
    }
    SpotSettings spot;
    spot.storage_gbps = t.storage_gbps;
    if (t.checkpoint_interval_min) spot.interval_s = *t.checkpoint_interval_min * 60;
    if (t.preemptions_per_hour) {
      spot.preemptions_per_hour = *t.preemptions_per_hour;
      spot.rate_assumed = false;
    }
    traces.emplace_back();
    if (!t.spot_trace.empty()) {
      auto trace = load_spot_trace(t.spot_trace);
      if (!trace.ok()) throw InputError{trace.error()};
      traces.back() = trace.value();
      spot.trace = &*traces.back();
    }
    training_plans.push_back(plan_training(catalog, job, search, spot));
  }

  if (!args.emit_k8s.empty()) emit_k8s(context, spec.value(), plans, args, verify);

  double total_per_month = 0;
  bool all_feasible = true;
  for (const auto& p : plans) {
    if (p.best) total_per_month += p.best->usd_per_month();
    all_feasible = all_feasible && p.feasible;
  }
  for (size_t i = 0; i < training_plans.size(); ++i) {
    const auto& tp = training_plans[i];
    all_feasible = all_feasible && tp.feasible;
    if (tp.best) total_per_month += tp.best->usd * spec.value().training[i].runs_per_month;
  }
  const auto& budget = spec.value().constraints.budget_usd_per_month;
  bool over_budget = budget && total_per_month > *budget;
  std::vector<QuotaUse> uses;
  for (const auto& p : plans)
    if (p.best)
      for (const NodeGroup& g : p.best->nodes) uses.push_back({g.offering, g.pricing, g.instances, p.service});
  for (size_t i = 0; i < training_plans.size(); ++i)
    if (training_plans[i].best)
      uses.push_back({training_plans[i].best->offering, training_plans[i].best->pricing, training_plans[i].best->instances,
                      spec.value().training[i].name});
  std::vector<QuotaNeed> quotas = quota_needs(uses, spec.value().constraints.quotas);
  bool short_of_quota = std::any_of(quotas.begin(), quotas.end(), [](const QuotaNeed& q) { return q.short_of_quota(); });
  int exit_code = all_feasible && !over_budget && !short_of_quota ? 0 : 3;
  // Cost per unit across the spec, the largest monthly cost first (one-off runs by their cost).
  struct UnitCost {
    std::string name, kind;
    double usd_per_month = 0, per_unit = 0;
    std::string unit;
  };
  std::vector<UnitCost> unit_costs;
  for (const auto& p : plans)
    if (p.best) unit_costs.push_back({p.service, "service", p.best->usd_per_month(), usd_per_1k(*p.best, p.average_rps), "1k inferences"});
  for (size_t i = 0; i < training_plans.size(); ++i)
    if (training_plans[i].best) {
      const auto& t = spec.value().training[i];
      double monthly = t.runs_per_month > 0 ? training_plans[i].best->usd * t.runs_per_month : training_plans[i].best->usd;
      unit_costs.push_back({t.name, "training", monthly, training_plans[i].best->usd, "run"});
    }
  std::sort(unit_costs.begin(), unit_costs.end(), [](const UnitCost& a, const UnitCost& b) { return a.usd_per_month > b.usd_per_month; });
  double unit_total = 0;
  for (const auto& u : unit_costs) unit_total += u.usd_per_month;
  auto quota_json = [&] {
    json list = json::array();
    for (const auto& q : quotas)
      list.push_back({{"cloud", q.cloud}, {"region", q.region}, {"family", q.family}, {"unit", q.unit}, {"needed", q.needed},
                      {"have", q.have ? json(*q.have) : json(nullptr)}, {"short_by", q.short_of_quota() ? json(q.needed - *q.have) : json(0)},
                      {"by", q.by}, {"lead_time", q.lead_time}});
    return list;
  };
  auto quota_warnings = [&] {
    for (const auto& q : quotas)
      if (q.short_of_quota())
        context.err() << fmt::format("gpuwise: the plan needs {:.0f} {} of {} in {} {} ({}); the account has {:.0f}: request an increase "
                                     "(lead time: {})\n",
                                     q.needed, q.unit, q.family, q.cloud, q.region, fmt::join(q.by, ", "), *q.have, q.lead_time);
  };

  if (context.options.format == "json") {
    json services = json::array();
    for (size_t i = 0; i < plans.size(); ++i) {
      const auto& p = plans[i];
      const auto& s = spec.value().services[i];
      bool llm = spec.value().models.at(s.model_key).arch.kind == ModelKind::decoder;
      json pareto = json::array();
      for (const auto& o : p.pareto) pareto.push_back(option_json(o, p, llm));
      json j = {{"name", p.service},
                {"model", s.model_key},
                {"feasible", p.feasible},
                {"average_rps", p.average_rps},
                {"peak_rps", p.peak_rps},
                {"mean_input_tokens", p.mean_input_tokens},
                {"mean_output_tokens", p.mean_output_tokens},
                {"candidates_evaluated", p.candidates_evaluated},
                {"best", p.best ? option_json(*p.best, p, llm) : json(nullptr)},
                {"pareto", pareto},
                {"no_batching", p.no_batching ? option_json(*p.no_batching, p, llm) : json(nullptr)},
                {"assumptions", p.assumptions},
                {"dropped_after_simulation", p.dropped}};
      if (!p.feasible) j["binding_constraint"] = p.binding;
      if (p.best && p.no_batching)
        j["batching_saves_usd_per_month"] = p.no_batching->usd_per_month() - p.best->usd_per_month();
      if (!s.traffic.trace_path.empty()) j["trace"] = s.traffic.trace_path;
      services.push_back(j);
    }
    json training = json::array();
    for (size_t i = 0; i < training_plans.size(); ++i) {
      const auto& tp = training_plans[i];
      const auto& t = spec.value().training[i];
      auto candidate = [](const TrainingCandidate& c) {
        const auto& e = c.estimate;
        return json{{"accelerator", c.offering->accelerator}, {"count", c.devices}, {"cloud", c.offering->cloud},
                    {"region", c.offering->region}, {"instance_type", c.offering->instance_type},
                    {"instances", c.instances}, {"pricing", std::string(pricing_name(c.pricing))},
                    {"time_s", c.expected_time_s}, {"gpu_hours", c.expected_time_s / 3600 * c.devices}, {"usd", c.usd},
                    {"mfu", e.mfu}, {"tokens_per_s", e.tokens_per_s}, {"checkpoint_interval_s", c.checkpoint_interval_s},
                    {"bound", e.bound},
                    {"layout", {{"tensor_parallel", e.layout.tensor_parallel}, {"pipeline_parallel", e.layout.pipeline_parallel},
                                {"data_parallel", e.layout.data_parallel}, {"zero_stage", e.layout.zero_stage},
                                {"recompute", std::string(recompute_name(e.layout.recompute))}}},
                    {"warnings", e.warnings}};
      };
      json pareto = json::array();
      for (const auto& c : tp.pareto) pareto.push_back(candidate(c));
      json j = {{"name", t.name}, {"model", t.model_key}, {"feasible", tp.feasible}, {"candidates_evaluated", tp.candidates},
                {"best", tp.best ? candidate(*tp.best) : json(nullptr)}, {"pareto", pareto},
                {"runs_per_month", t.runs_per_month},
                {"deadline_days", t.deadline_days ? json(*t.deadline_days) : json(nullptr)}};
      if (!tp.feasible) j["binding_constraint"] = tp.binding;
      if (tp.best && t.runs_per_month > 0) j["usd_per_month"] = tp.best->usd * t.runs_per_month;
      training.push_back(j);
    }
    json document = {{"spec", args.spec},
                     {"services", services},
                     {"training", training},
                     {"total_usd_per_month", total_per_month},
                     {"one_off_training_usd", [&] {
                        double sum = 0;
                        for (size_t i = 0; i < training_plans.size(); ++i)
                          if (training_plans[i].best && spec.value().training[i].runs_per_month <= 0) sum += training_plans[i].best->usd;
                        return sum;
                      }()},
                     {"budget_usd_per_month", budget ? json(*budget) : json(nullptr)},
                     {"within_budget", !over_budget},
                     {"not_planned", spec.value().not_planned},
                     {"quota_needed", quota_json()},
                     {"cost_per_unit", [&] {
                        json list = json::array();
                        for (const auto& u : unit_costs)
                          list.push_back({{"name", u.name}, {"kind", u.kind}, {"usd_per_month", u.usd_per_month},
                                          {"share", unit_total > 0 ? u.usd_per_month / unit_total : 0}, {"unit", u.unit},
                                          {"usd_per_unit", std::isfinite(u.per_unit) ? json(u.per_unit) : json(nullptr)}});
                        return list;
                      }()}};
    context.emit_json(document, "plan");
    quota_warnings();
    return exit_code;
  }

  std::string out;
  bool markdown = context.options.format == "md";
  bool colour = colour_wanted_here(!context.options.output.empty(), context.options.format);
  // The same content as a report document, for --format html.
  Document doc;
  doc.kind = "plan";
  doc.title = "Plan: " + (spec.value().name.empty() ? args.spec : spec.value().name);
  // Lines written to `out` since `from`, as paragraphs.
  auto paragraphs_since = [&](size_t from) {
    std::vector<std::string> lines;
    for (auto& line : split(out.substr(from), '\n'))
      if (!gw::trim(line).empty()) lines.emplace_back(gw::trim(line));
    return lines;
  };
  if (markdown) out += "# Plan: " + (spec.value().name.empty() ? args.spec : spec.value().name) + "\n\n";
  for (size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    const auto& s = spec.value().services[i];
    const ModelSpec& m = spec.value().models.at(s.model_key);
    bool llm = m.arch.kind == ModelKind::decoder;
    std::string heading = fmt::format("{} ({} {}): {:.3g} requests/s average, {:.3g} at peak{}", p.service, m.arch.name,
                                      precision_name(m.precision), p.average_rps, p.peak_rps,
                                      llm ? fmt::format("; {:.0f} input / {:.0f} output tokens on average",
                                                        p.mean_input_tokens, p.mean_output_tokens)
                                          : "");
    out += markdown ? "## " + heading + "\n\n" : heading + "\n";
    size_t section_start = out.size();
    Section section;
    section.heading = heading;
    if (!p.best) {
      out += "  " + paint("no plan: " + p.binding, Style::bad, colour) + "\n\n";
      section.paragraphs = paragraphs_since(section_start);
      doc.sections.push_back(section);
      continue;
    }
    const PlanOption& b = *p.best;
    out += "  " + paint("best:", Style::good, colour) + fmt::format(" {}, {} replica{} of {}x {} (tp{}, {} batching{}), {}; "
                       "{:.0f}% of capacity at peak\n",
                       describe_nodes(b),
                       b.replicas, b.replicas == 1 ? "" : "s", b.config.tensor_parallel,
                       b.config.accelerator->name, b.config.tensor_parallel, batching_name(b.config.batching),
                       b.config.batching == Batching::none ? "" : fmt::format(", max {}", b.config.max_batch),
                       latency_text(b, llm), b.level.utilization * 100);
    if (b.simulated)
      out += fmt::format("  simulated ({} requests, {}): {}; SLO attainment {:.1f}%\n", b.simulated->requests,
                         s.traffic.trace_path.empty() ? "Poisson at the peak rate" : "replaying the trace",
                         llm ? fmt::format("ttft p99 {:.3f} s, tpot p99 {:.1f} ms", b.simulated->ttft_p99_s,
                                           b.simulated->tpot_p99_s * 1e3)
                             : fmt::format("p99 {:.1f} ms", b.simulated->latency_p99_s * 1e3),
                         b.simulated->slo_attainment * 100);
    if (b.simulated && b.simulated->duty_cycle > 0)
      out += fmt::format("  GPUs in steps {:.0f}% of the time in simulation (continuous batching steps whenever one sequence runs: "
                         "duty cycle, not load)\n", b.simulated->duty_cycle * 100);
    if (b.simulated && b.simulated->reclaimed) {
      const SimulatedCheck& c = *b.simulated;
      out += fmt::format("  reclaim simulated: one spot node ({} replica{}) taken at {:.0f} s, its replacement serving {:.0f} s later "
                         "(cold start); {} queued request{} moved to the others; the node {} ({:.0f} s notice on {})\n",
                         c.reclaim_replicas, c.reclaim_replicas == 1 ? "" : "s", c.reclaim_at_s, c.replacement_s, c.rerouted,
                         c.rerouted == 1 ? "" : "s",
                         c.drained_s >= 0 ? fmt::format("finished what it held in {:.1f} s", c.drained_s) : std::string("still held work when replaced"),
                         c.notice_s, b.offering->cloud);
    }
    for (const auto& dropped : p.dropped) out += "  dropped after simulation: " + dropped + "\n";
    out += fmt::format("  cost: {}/hour, {}/month, {} per 1k inferences{}\n", format_usd(b.usd_per_hour),
                       format_usd(b.usd_per_month()), format_usd(usd_per_1k(b, p.average_rps)),
                       llm ? fmt::format(", {} per 1M tokens", format_usd(usd_per_million_tokens(b, p))) : "");
    if (p.no_batching) {
      double saving = p.no_batching->usd_per_month() - b.usd_per_month();
      out += fmt::format("  without batching: {} replicas on {} x {} ({}), {}/month; batching saves {}/month ({:.0f}%)\n",
                         p.no_batching->replicas, p.no_batching->instances, p.no_batching->offering->instance_type,
                         p.no_batching->config.accelerator->name, format_usd(p.no_batching->usd_per_month()),
                         format_usd(saving), p.no_batching->usd_per_month() > 0 ? saving / p.no_batching->usd_per_month() * 100 : 0);
    }
    section.paragraphs = paragraphs_since(section_start);
    Table table;
    table.columns = {"accelerator", "tp", "batching", "replicas", "offering", "pricing", llm ? "ttft_p99_s" : "p99_ms",
                     llm ? "tpot_p99_ms" : "p50_ms", "simulated_p99", "load", "usd_per_month", "usd_per_1k"};
    table.align = {Align::left, Align::right, Align::left, Align::right, Align::left, Align::left,
                   Align::right, Align::right, Align::right, Align::right, Align::right, Align::right};
    for (const auto& o : p.pareto)
      table.add_row({o.config.accelerator->name, std::to_string(o.config.tensor_parallel),
                     std::string(batching_name(o.config.batching)), std::to_string(o.replicas),
                     o.spot_with_floor() ? fmt::format("{}x {} {} {} (2 zones)", o.instances, o.offering->cloud, o.offering->region, o.offering->instance_type)
                                         : fmt::format("{}x {} {} {}", o.instances, o.offering->cloud, o.offering->region, o.offering->instance_type),
                     o.spot_with_floor() ? std::string("spot+1 on-demand") : std::string(pricing_name(o.pricing)),
                     llm ? format_number(o.level.ttft_p99_s, 3) : format_number(o.level.latency_p99_s * 1e3, 1),
                     llm ? format_number(o.level.tpot_p99_s * 1e3, 1) : format_number(o.level.latency_p50_s * 1e3, 1),
                     !o.simulated ? std::string("-")
                     : llm ? fmt::format("{:.3f} s / {:.1f} ms", o.simulated->ttft_p99_s, o.simulated->tpot_p99_s * 1e3)
                           : fmt::format("{:.1f} ms", o.simulated->latency_p99_s * 1e3),
                     fmt::format("{:.0f}%", o.level.utilization * 100), format_usd(o.usd_per_month()),
                     format_usd(usd_per_1k(o, p.average_rps))});
    out += markdown ? "\nCost-latency frontier:\n\n" + render_markdown(table) : "  cost-latency frontier:\n" + render_text(table);
    section.charts.push_back(pareto_chart(p, llm));
    section.tables.push_back(table);
    doc.sections.push_back(section);
    if (context.options.explain) {
      out += "  assumptions:\n";
      for (const auto& a : p.assumptions) out += "    - " + a + "\n";
      out += "    - efficiency: " + efficiency_for(*b.config.accelerator, options.calibration).source + "\n";
      out += fmt::format("    - {} candidate evaluations\n", p.candidates_evaluated);
    }
    out += "\n";
  }
  for (size_t i = 0; i < training_plans.size(); ++i) {
    const auto& tp = training_plans[i];
    const auto& t = spec.value().training[i];
    const ModelSpec& m = spec.value().models.at(t.model_key);
    std::string work = m.arch.kind == ModelKind::generic ? format_count(t.items) + " items" : format_count(t.tokens) + " tokens";
    std::string heading = fmt::format("training {} ({}): {}{}", t.name, m.arch.name, work,
                                      t.deadline_days ? fmt::format(", deadline {:.3g} days", *t.deadline_days) : "");
    out += markdown ? "## " + heading + "\n\n" : heading + "\n";
    size_t section_start = out.size();
    Section section;
    section.heading = heading;
    if (!tp.best) {
      out += "  no plan: " + tp.binding + "\n\n";
      section.paragraphs = paragraphs_since(section_start);
      doc.sections.push_back(section);
      continue;
    }
    const auto& b = *tp.best;
    const auto& e = b.estimate;
    out += fmt::format("  best: {} x {} on {} {} {} x{} ({}): {:.1f} days, {} GPU-hours, {} per run{}\n", b.devices,
                       b.offering->accelerator, b.offering->cloud, b.offering->region, b.offering->instance_type, b.instances,
                       pricing_name(b.pricing), b.expected_time_s / 86400, format_number(b.expected_time_s / 3600 * b.devices, 0),
                       format_usd(b.usd),
                       t.runs_per_month > 0 ? fmt::format(" ({}/month at {:.0f} runs)", format_usd(b.usd * t.runs_per_month), t.runs_per_month) : "");
    out += fmt::format("  layout tp{} pp{} dp{}, ZeRO-{}, recompute {}; MFU {:.0f}%, {}-bound{}\n", e.layout.tensor_parallel,
                       e.layout.pipeline_parallel, e.layout.data_parallel, e.layout.zero_stage, recompute_name(e.layout.recompute),
                       e.mfu * 100, e.bound,
                       b.pricing == Pricing::spot
                           ? fmt::format("; checkpoint every {:.0f} min ({}), Daly's optimum {:.0f} min", b.checkpoint_interval_s / 60,
                                         std::fabs(b.checkpoint_interval_s - b.daly_interval_s) < 1 ? "Daly" : "as given",
                                         b.daly_interval_s / 60)
                           : "");
    for (const auto& w : e.warnings) out += "  warning: " + w + "\n";
    section.paragraphs = paragraphs_since(section_start);
    Table table = training_frontier_table(tp.pareto);
    out += markdown ? "\nTime-cost frontier:\n\n" + render_markdown(table) : "  time-cost frontier:\n" + render_text(table);
    section.charts.push_back(training_chart(tp));
    section.tables.push_back(table);
    doc.sections.push_back(section);
    out += "\n";
  }
  double one_off = 0;
  for (size_t i = 0; i < training_plans.size(); ++i)
    if (training_plans[i].best && spec.value().training[i].runs_per_month <= 0) one_off += training_plans[i].best->usd;
  if (unit_costs.size() > 1) {
    out += "Cost per unit, the largest first:";
    for (const auto& u : unit_costs)
      out += fmt::format(" {} {} per {} ({:.0f}% of the spec's cost{});", u.name, format_usd(u.per_unit), u.unit,
                         unit_total > 0 ? 100 * u.usd_per_month / unit_total : 0, u.kind == "training" ? ", counting runs per month or one run" : "");
    out.back() = '\n';
  }
  out += fmt::format("Total: {}/month", format_usd(total_per_month));
  if (one_off > 0) out += fmt::format(", plus {} for one-off training runs", format_usd(one_off));
  if (budget) out += fmt::format(" (budget {}/month{})", format_usd(*budget), over_budget ? ": EXCEEDED" : "");
  out += "\n";
  for (const auto& skipped : spec.value().not_planned) out += "Not planned by this version: " + skipped + "\n";
  if (!quotas.empty()) {
    Table q;
    q.columns = {"cloud", "region", "quota family", "needed", "have", "for"};
    q.align = {Align::left, Align::left, Align::left, Align::right, Align::right, Align::left};
    for (const auto& n : quotas)
      q.add_row({n.cloud, n.region, n.family, fmt::format("{:.0f} {}", n.needed, n.unit),
                 n.have ? fmt::format("{:.0f}{}", *n.have, n.short_of_quota() ? " (short)" : "") : "not given",
                 fmt::format("{}", fmt::join(n.by, ", "))});
    out += (markdown ? "\nQuotas the plan needs:\n\n" + render_markdown(q) : "Quotas the plan needs:\n" + render_text(q));
  }
  if (context.options.format == "html") {
    doc.facts.emplace_back("total per month", format_usd(total_per_month));
    if (one_off > 0) doc.facts.emplace_back("one-off training", format_usd(one_off));
    if (budget) doc.facts.emplace_back("budget per month", format_usd(*budget) + (over_budget ? " (exceeded)" : ""));
    for (const auto& p : plans) doc.assumptions.insert(doc.assumptions.end(), p.assumptions.begin(), p.assumptions.end());
    for (const auto& skipped : spec.value().not_planned) doc.assumptions.push_back("not planned by this version: " + skipped);
    context.emit_document(doc);
  } else {
    context.emit(out);
  }
  for (const auto& p : plans)
    if (!p.feasible) context.err() << "gpuwise: service '" << p.service << "' cannot be planned: " << p.binding << "\n";
  for (size_t i = 0; i < training_plans.size(); ++i)
    if (!training_plans[i].feasible)
      context.err() << "gpuwise: training job '" << spec.value().training[i].name << "' cannot be planned: "
                    << training_plans[i].binding << "\n";
  quota_warnings();
  if (over_budget)
    context.err() << fmt::format("gpuwise: the plan costs {}/month, over the budget of {}/month\n",
                                 format_usd(total_per_month), format_usd(*budget));
  return exit_code;
}

}  // namespace

void add_plan_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* plan = app.add_subcommand("plan", "Cheapest configuration meeting each service's SLO (workload spec in YAML)");
  auto args = std::make_shared<PlanArgs>();
  plan->add_option("SPEC", args->spec, "Workload spec (YAML); see examples/")->required();
  plan->add_option("--calibration", args->calibration, "Efficiency factors from `gpuwise calibrate`");
  plan->add_option("--usable-fraction", args->usable_fraction, "Share of device memory the server may use")
      ->check(CLI::Range(0.05, 1.0));
  plan->add_option("--overhead-gib", args->overhead_gib, "Runtime overhead per device")->check(CLI::Range(0.0, 1024.0));
  plan->add_option("--prefill-chunk", args->prefill_chunk, "Token budget per step (chunked prefill)")
      ->check(CLI::Range(64, 1 << 20));
  plan->add_flag("--no-simulate", args->no_simulate, "Screen only; do not verify candidates in the simulator");
  plan->add_option("--sim-requests", args->sim_requests, "Requests per simulated candidate")
      ->check(CLI::Range(100LL, 100000000LL));
  plan->add_option("--seed", args->seed, "Simulation seed");
  plan->add_option("--emit-k8s", args->emit_k8s, "Write KEDA ScaledObject, HPA and Karpenter NodePool manifests per service here");
  plan->add_option("--prometheus-url", args->prometheus_url, "Prometheus the KEDA trigger queries (with --emit-k8s)");
  plan->callback([&context, &action, args] { action = [&context, args] { return run_plan(context, *args); }; });
}

}  // namespace gw
