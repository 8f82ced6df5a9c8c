#include "plan/inference.h"

#include "core/serving_defaults.h"

#include "perf/layer_operators.h"
#include "catalog/precision_support.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <set>

#include "core/text.h"
#include "plan/disaggregated_plan.h"
#include "plan/screen_engine.h"
#include "plan/service_level.h"

namespace gw {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::vector<int> batch_limits(const ServiceSpec& service, Batching batching, bool llm) {
  if (batching == Batching::none) return {1};
  if (service.max_batch > 0) return {service.max_batch};
  if (llm) return {256};  // vLLM's default max_num_seqs; the KV cache usually binds first
  return {2, 4, 8, 16, 32, 64, 128, 256};
}

}  // namespace

void place_replicas(PlanOption& option, int needed) {
  const int per_node = option.replicas_per_node();
  const int needed_nodes = option.nodes_for(needed, option.config.tensor_parallel, option.config.pipeline_parallel);
  option.needed_replicas = needed;
  option.nodes.clear();
  option.reclaim_replicas = 0;
  if (!option.spot_with_floor()) {
    option.replicas = std::max(needed, option.min_nodes);
    // A replica across nodes has nodes of its own: min_nodes replicas are on that many node sets.
    const int nodes = option.config.pipeline_parallel > 1 ? option.nodes_for(option.replicas, option.config.tensor_parallel,
                                                                              option.config.pipeline_parallel)
                                                          : std::max(needed_nodes, option.min_nodes);
    option.nodes.push_back({option.offering, option.pricing, nodes, ""});
  } else {
    // N+1: one node more than the load needs, so a reclaim leaves N serving; one of them on
    // demand, the rest spot, spread over the spot zones in turn.
    const int nodes = std::max({needed_nodes + 1, option.min_nodes, 2});
    option.replicas = std::max(needed + per_node, nodes);
    option.reclaim_replicas = (option.replicas + nodes - 1) / nodes;
    // The catalog prices one zone per region: the second zone is priced as the first.
    const int spot = nodes - 1;
    option.nodes.push_back({option.floor_offering, Pricing::on_demand, 1, spot == 1 ? "another zone" : ""});
    option.nodes.push_back({option.offering, Pricing::spot, (spot + 1) / 2, ""});
    if (spot >= 2) option.nodes.push_back({option.offering, Pricing::spot, spot / 2, "a second zone"});
  }
  option.price_nodes();
}

void place_replicas_cheapest(PlanOption& option, int needed) {
  place_replicas(option, needed);
  if (!option.placements) return;
  PlanOption cheapest = option;
  for (const Placement& placement : *option.placements) {
    PlanOption trial = option;
    trial.offering = placement.offering;
    trial.pricing = placement.pricing;
    trial.floor_offering = placement.floor_offering;
    place_replicas(trial, needed);
    if (trial.usd_per_hour < cheapest.usd_per_hour - 1e-9 ||
        (trial.usd_per_hour < cheapest.usd_per_hour + 1e-9 && trial.instances < cheapest.instances))
      cheapest = std::move(trial);
  }
  option = std::move(cheapest);
}

void PlanOption::price_nodes() {
  instances = 0;
  usd_per_hour = 0;
  for (const NodeGroup& g : nodes) {
    instances += g.instances;
    usd_per_hour += g.offering->usd_per_hour(g.pricing).value_or(0) * g.instances;
  }
}

bool same_layout(const PlanOption& a, const PlanOption& b) {
  if (!(a.config == b.config) || a.replicas != b.replicas || a.disaggregated() != b.disaggregated()) return false;
  return !a.decode || (a.decode->config == b.decode->config && a.decode->replicas == b.decode->replicas);
}

std::string PlanOption::layout() const {
  if (!decode) return "aggregated";
  return fmt::format("{}:{}", config.devices() * replicas, decode->config.devices() * decode->replicas);
}

std::string parallel_layout(const Configuration& config) {
  if (config.pipeline_parallel > 1) return fmt::format("tp{} pp{}", config.tensor_parallel, config.pipeline_parallel);
  return fmt::format("tp{}", config.tensor_parallel);
}

std::string describe_nodes(const PlanOption& option) {
  if (option.disaggregated())
    return fmt::format("{} x {} {} {} ({}): {} for prefill, {} for decode", option.instances, option.offering->cloud,
                       option.offering->region, option.offering->instance_type, pricing_name(option.pricing),
                       option.nodes[0].instances, option.nodes[1].instances);
  if (!option.spot_with_floor())
    return fmt::format("{} x {} {} {} ({})", option.instances, option.offering->cloud, offering_place(*option.offering, option.pricing),
                       option.offering->instance_type, pricing_name(option.pricing));
  std::string out;
  for (const NodeGroup& g : option.nodes) {
    if (!out.empty()) out += " + ";
    std::string zone = !g.zone.empty() ? g.zone : g.offering->zone;
    out += fmt::format("{}x {} {}{} {} ({}{})", g.instances, g.offering->cloud, g.offering->region,
                       !zone.empty() ? " " + zone : "", g.offering->instance_type, pricing_name(g.pricing),
                       g.pricing == Pricing::on_demand ? " floor" : "");
  }
  return out;
}

ServesOn model_serves_on(const Catalog& catalog, const ModelSpec& model, const Accelerator& accelerator) {
  if (model.measured) return {catalog.find_accelerator(model.measured->accelerator) == &accelerator, ""};
  if (auto why = unsupported_precision(accelerator, model.precision, PrecisionEngine::serving, model.weight_format))
    return {false, *why};
  return {};
}

namespace {

bool better(const PlanOption& a, const PlanOption& b) {
  if (a.usd_per_hour != b.usd_per_hour) return a.usd_per_hour < b.usd_per_hour;
  if (a.level.latency_p99_s != b.level.latency_p99_s) return a.level.latency_p99_s < b.level.latency_p99_s;
  if (a.instances != b.instances) return a.instances < b.instances;
  if (a.offering->key() != b.offering->key()) return a.offering->key() < b.offering->key();
  if (a.config.tensor_parallel != b.config.tensor_parallel) return a.config.tensor_parallel < b.config.tensor_parallel;
  if (a.config.pipeline_parallel != b.config.pipeline_parallel) return a.config.pipeline_parallel < b.config.pipeline_parallel;
  if (a.config.max_batch != b.config.max_batch) return a.config.max_batch < b.config.max_batch;
  return static_cast<int>(a.pricing) < static_cast<int>(b.pricing);
}

}  // namespace

std::vector<const Accelerator*> allowed_accelerators(const Catalog& catalog, const Constraints& c) {
  std::vector<const Accelerator*> out;
  for (const auto& accelerator : catalog.accelerators()) {
    auto named = [&](const std::vector<std::string>& names) {
      return std::any_of(names.begin(), names.end(),
                         [&](const std::string& n) { return catalog.find_accelerator(n) == &accelerator; });
    };
    if (!c.accelerators_include.empty() && !named(c.accelerators_include)) continue;
    if (named(c.accelerators_exclude)) continue;
    out.push_back(&accelerator);
  }
  return out;
}

std::vector<const Offering*> allowed_offerings(const Catalog& catalog, const Constraints& c,
                                               const Accelerator& accelerator, int min_count) {
  OfferingFilter filter;
  filter.clouds = c.clouds;
  filter.regions = c.regions;
  filter.accelerators = {accelerator.name};
  filter.complete_prices_only = true;  // a GPU-only price would undercut every whole instance
  std::vector<const Offering*> out;
  for (const Offering* o : catalog.select(filter)) {
    if (o->accelerator_count < min_count) continue;
    if (!c.cpu_architectures.empty() &&
        std::find(c.cpu_architectures.begin(), c.cpu_architectures.end(), cpu_architecture(*o)) == c.cpu_architectures.end())
      continue;
    out.push_back(o);
  }
  return out;
}

namespace {

// A spot plan's on-demand floor: the cheapest on-demand node of the same shape and host CPU in the
// same cloud and region (one cluster, one autoscaler, one serving image: an arm64 floor under x86
// spot nodes would need a second build); the spot nodes spread over two zones of the region.
// False when the region sells no such node on demand.
bool place_on_spot(PlanOption& option, const std::vector<const Offering*>& offerings) {
  const Offering* first = option.offering;
  const Offering* floor = nullptr;
  for (const Offering* o : offerings) {
    if (o->cloud != first->cloud || o->region != first->region || o->accelerator_count != first->accelerator_count ||
        cpu_architecture(*o) != cpu_architecture(*first))
      continue;
    auto od = o->usd_per_hour(Pricing::on_demand);
    if (od && (!floor || *od < *floor->usd_per_hour(Pricing::on_demand))) floor = o;
  }
  if (!floor) return false;
  option.floor_offering = floor;
  return true;
}

// What the search over configurations gathers for one service.
struct PlanSearch {
  PlanSearch(const ModelSpec& model, const ScreenedService& screened, const PlannerOptions& options, const Spec& spec, ServicePlan& plan)
      : model(model), service(screened.service), engine(screened.engine), lengths(service_lengths(service)), options(options),
        spec(spec), plan(plan) {}
  const ModelSpec& model;
  const ServiceSpec& service;  // prompts as the replicas hold them (traffic.prefix's history included)
  const ScreenEngine& engine;
  const RequestLengths lengths;  // the service's request lengths, worked out once
  const PlannerOptions& options;
  const Spec& spec;
  ServicePlan& plan;
  bool llm = false;
  double peak = 0, max_util = 0;
  std::vector<PlanOption> all;
  // The best value each SLO metric reaches in any configuration (at the most replicas), to say
  // which constraint binds when none meets them all.
  std::map<std::string, std::pair<double, std::string>> best_achieved;
  // Accelerators left out for want of kernels for the weights, by reason ("Turing has no fp8 ..."):
  // one note per reason.
  std::map<std::string, std::vector<std::string>> precision_left_out;
  bool spot_refused = false;
  std::set<std::string> multi_node;  // accelerators searched across nodes (no one node holds the model)
  bool multi_node_spot = false;      // and kept off spot
  std::set<std::string> spot_unspread;
};

// How close a configuration comes to each SLO metric at the most replicas allowed.
void record_best_achieved(PlanSearch& search, const Configuration& config) {
  ServiceLevel floor = evaluate_with(search.model, search.service, search.engine, search.lengths, config, search.options.max_replicas, search.peak, search.options);
  std::string where = fmt::format("{} {}, {} batching", config.accelerator->name, parallel_layout(config), batching_name(config.batching));
  auto record = [&](const char* key, double achieved) {
    if (!floor.feasible || !std::isfinite(achieved)) return;
    auto it = search.best_achieved.find(key);
    if (it == search.best_achieved.end() || achieved < it->second.first) search.best_achieved[key] = {achieved, where};
  };
  record("ttft_p99_s", floor.ttft_p99_s);
  record("tpot_p99_s", floor.tpot_p99_s);
  record("e2e_p99_s", floor.latency_p99_s);
  record("latency_p99_s", floor.latency_p99_s);
  record("latency_p50_s", floor.latency_p50_s);
}

// Fewest replicas of a configuration meeting the SLO at peak: capacity gives a lower bound;
// latency falls as replicas grow, so double until the SLO holds, then bisect. None when even the
// most replicas allowed miss it.
std::optional<int> fewest_replicas(PlanSearch& search, const Configuration& config, const ServiceLevel& one) {
  const PlannerOptions& options = search.options;
  auto ok = [&](int replicas, std::string* why) {
    ++search.plan.candidates_evaluated;
    ServiceLevel level = evaluate_with(search.model, search.service, search.engine, search.lengths, config, replicas, search.peak, options);
    return meets_slo(level, search.service.slo, search.max_util, why);
  };
  const int base = std::max(1, static_cast<int>(std::floor(search.peak / (one.capacity_rps * search.max_util))));
  int low = std::min(base, options.max_replicas), high = low;
  std::string why;
  if (!ok(options.max_replicas, &why)) return std::nullopt;
  while (!ok(high, &why)) {
    low = high + 1;
    high = std::min(options.max_replicas, high * 2);
  }
  while (high - low > 0) {
    int mid = low + (high - low) / 2;
    if (ok(mid, nullptr)) high = mid; else low = mid + 1;
  }
  return high;
}

// The configuration at that count on every offering and pricing the constraints allow.
void add_priced_options(PlanSearch& search, const Configuration& config, int replicas, const std::vector<const Offering*>& offerings) {
  auto placements = std::make_shared<std::vector<Placement>>();
  for (const Offering* offering : offerings) {
    for (Pricing pricing : search.spec.constraints.pricing) {
      if (!offering->usd_per_hour(pricing)) continue;
      PlanOption probe;
      probe.offering = offering;
      if (pricing == Pricing::spot && config.pipeline_parallel > 1) {
        // One reclaimed node stops a replica across nodes whole, and its other nodes idle
        // billed until the replacement joins: not planned on spot.
        search.multi_node_spot = true;
        continue;
      }
      if (pricing == Pricing::spot) {
        // A real-time service on spot only when it may lose a node, and then never
        // on one zone alone: N+1 with an on-demand floor.
        if (!search.service.interruptible) {
          search.spot_refused = true;
          continue;
        }
        if (!place_on_spot(probe, offerings)) {
          search.spot_unspread.insert(offering->cloud + " " + offering->instance_type);
          continue;
        }
      }
      placements->push_back({offering, pricing, probe.floor_offering});
    }
  }
  ServiceLevel level = evaluate_with(search.model, search.service, search.engine, search.lengths, config, replicas, search.peak, search.options);
  for (const Placement& placement : *placements) {
    PlanOption option;
    option.config = config;
    option.offering = placement.offering;
    option.pricing = placement.pricing;
    option.floor_offering = placement.floor_offering;
    option.min_nodes = search.service.min_replicas;
    option.placements = placements;
    place_replicas(option, replicas);
    option.level = option.replicas == replicas
                       ? level
                       : evaluate_with(search.model, search.service, search.engine, search.lengths, config, option.replicas, search.peak, search.options);
    search.all.push_back(option);
  }
}

// Whether the model's weights and one p99 request's KV (LLMs) fit on a replica of tp x pp devices.
bool layout_fits(const PlanSearch& search, const Accelerator* accelerator, int tp, int pp) {
  Configuration probe{accelerator, tp, Batching::none, 1, pp};
  double kv_per_token = 0;
  const double free = screen_kv_free_bytes(search.model.arch, search.model.precision, search.model.weight_format, probe, search.options, search.engine, kv_per_token);
  const ServiceSpec& service = search.service;
  const double need =
      search.llm ? kv_per_token * search.engine.kv_tokens(search.model.arch, *accelerator, service.input_tokens.quantile(0.99) + service.output_tokens.quantile(0.99))
                 : 0;
  return free > need;
}

// Every batching policy and batch limit of one layout, each at its fewest replicas, priced.
void search_layout(PlanSearch& search, const Accelerator* accelerator, int tp, int pp, const std::vector<Batching>& policies,
                   const std::vector<const Offering*>& offerings) {
  for (Batching batching : policies) {
    for (int limit : batch_limits(search.service, batching, search.llm)) {
      Configuration config{accelerator, tp, batching, limit, pp};
      ServiceLevel one = evaluate_with(search.model, search.service, search.engine, search.lengths, config, 1, search.peak, search.options);
      record_best_achieved(search, config);
      if (one.capacity_rps <= 0) continue;
      if (auto replicas = fewest_replicas(search, config, one)) add_priced_options(search, config, *replicas, offerings);
    }
  }
}

// Every accelerator, tensor-parallel size, batching policy and batch limit the model fits; an
// LLM that no one node of an accelerator holds, across 2 to kMaxPipelineNodes whole nodes.
void search_configurations(PlanSearch& search, const Catalog& catalog, const std::vector<Batching>& policies) {
  const ModelSpec& model = search.model;
  const ModelArch& arch = model.arch;
  bool any_fit = false, any_offering = false;
  for (const Accelerator* accelerator : allowed_accelerators(catalog, search.spec.constraints)) {
    if (const ServesOn serves = model_serves_on(catalog, model, *accelerator); !serves.ok) {
      if (!serves.why.empty()) search.precision_left_out[serves.why].push_back(accelerator->name);
      continue;
    }
    bool fits_one_node = false;
    for (int tp : {1, 2, 4, 8}) {
      if (arch.kind != ModelKind::generic && arch.num_heads % tp != 0) continue;
      if (arch.kind == ModelKind::generic && tp > 1) continue;
      if (!layout_fits(search, accelerator, tp, 1)) continue;
      any_fit = fits_one_node = true;
      auto offerings = allowed_offerings(catalog, search.spec.constraints, *accelerator, tp);
      if (offerings.empty()) continue;
      any_offering = true;
      search_layout(search, accelerator, tp, 1, policies, offerings);
    }
    // Across nodes on NVIDIA and AMD GPUs, where vLLM documents multi-node serving (not on TPUs
    // or Gaudi): each stage a whole node of 8, as few stages as hold the model and each more up
    // to the limit (more KV room, more lanes).
    const bool gpu = accelerator->vendor == "nvidia" || accelerator->vendor == "amd";
    if (fits_one_node || !gpu || !search.llm || model.measured) continue;
    const int tp = 8;
    if (arch.num_heads % tp != 0) continue;
    std::vector<const Offering*> whole_nodes;
    for (const Offering* o : allowed_offerings(catalog, search.spec.constraints, *accelerator, tp))
      if (o->accelerator_count == tp) whole_nodes.push_back(o);
    for (int pp = 2; pp <= kMaxPipelineNodes; ++pp) {
      if (!layout_fits(search, accelerator, tp, pp)) continue;
      any_fit = true;
      if (whole_nodes.empty()) break;
      any_offering = true;
      search.multi_node.insert(accelerator->name);
      search_layout(search, accelerator, tp, pp, policies, whole_nodes);
    }
  }
  if (!any_fit) {
    search.plan.binding = fmt::format("memory: the model does not fit on any allowed accelerator (up to tp=8 on one node, or {} nodes of 8)",
                                      kMaxPipelineNodes);
  } else if (!any_offering) {
    search.plan.binding = "offerings: no allowed cloud/region offers an accelerator the model fits on";
  }
}

// Which SLO target binds when no configuration meets them all.
std::string binding_targets(const ServiceSpec& service, const std::map<std::string, std::pair<double, std::string>>& best_achieved) {
  std::string binding;
  const std::pair<const char*, std::optional<double>> targets[] = {
      {"ttft_p99_s", service.slo.ttft_p99_s}, {"tpot_p99_s", service.slo.tpot_p99_s},
      {"e2e_p99_s", service.slo.e2e_p99_s}, {"latency_p99_s", service.slo.latency_p99_s},
      {"latency_p50_s", service.slo.latency_p50_s}};
  for (const auto& [key, target] : targets) {
    if (!target) continue;
    auto it = best_achieved.find(key);
    if (it == best_achieved.end() || it->second.first > *target) {
      if (!binding.empty()) binding += "; ";
      binding += it == best_achieved.end()
                     ? fmt::format("{} {:.3g} s: no configuration serves the load", key, *target)
                     : fmt::format("{} {:.3g} s cannot be met: the fastest configuration reaches {:.3g} s ({})",
                                   key, *target, it->second.first, it->second.second);
    }
  }
  if (binding.empty()) binding = "each SLO target is reachable alone, but no configuration meets them together";
  return binding;
}

// The cost-ranked list and the cost-latency Pareto set over distinct configurations. The list
// holds the 12 cheapest one-pool layouts and the disaggregated ones among them: weighing
// disaggregation never pushes a one-pool layout out of what the simulation verifies.
void rank_options(ServicePlan& plan, std::vector<PlanOption>& batched, bool llm, int pareto_size) {
  std::sort(batched.begin(), batched.end(), better);
  int one_pool = 0;
  for (const auto& option : batched) {
    bool seen = std::any_of(plan.ranked.begin(), plan.ranked.end(), [&](const PlanOption& o) { return same_layout(o, option); });
    if (seen) continue;
    plan.ranked.push_back(option);
    if (!option.disaggregated() && ++one_pool >= 12) break;
  }
  double best_latency = kInfinity;
  for (const auto& option : batched) {
    double latency = llm ? option.level.ttft_p99_s + option.level.tpot_p99_s * plan.mean_output_tokens
                         : option.level.latency_p99_s;
    if (latency < best_latency - 1e-12) {
      best_latency = latency;
      plan.pareto.push_back(option);
      if (static_cast<int>(plan.pareto.size()) >= pareto_size) break;
    }
  }
}

void add_plan_assumptions(const PlanSearch& search) {
  ServicePlan& plan = search.plan;
  const ServiceSpec& service = search.service;
  plan.assumptions.push_back(fmt::format("sized for the peak rate {:.3g} requests/s, replicas at most {:.0f}% busy",
                                         search.peak, search.max_util * 100));
  for (const auto& [why, names] : search.precision_left_out)
    plan.assumptions.push_back("not considered: " + join_list(names) + ": " + why + " (" + precision_support_source(search.model.weight_format) + ")");
  plan.assumptions.insert(plan.assumptions.end(), search.engine.notes.begin(), search.engine.notes.end());
  plan.assumptions.push_back(
      service.min_replicas >= 2
          ? fmt::format("replicas on at least {} nodes (min_replicas: {}{}), so one lost node leaves the service up",
                        service.min_replicas, service.min_replicas, service.min_replicas_given ? "" : ", the default for a real-time service")
          : "min_replicas: 1 as the spec states: a single node is a single point of failure");
  if (search.spot_refused)
    plan.assumptions.push_back("spot not considered: a real-time service loses its replicas with the node; set interruptible: true "
                               "on the service to allow spot as N+1 nodes across zones with an on-demand floor, checked by a simulated reclaim");
  if (!search.spot_unspread.empty())
    plan.assumptions.push_back("spot not considered on " +
                               join_list(std::vector<std::string>(search.spot_unspread.begin(), search.spot_unspread.end())) +
                               ": the region sells no such node on demand for the floor");
  if (service.interruptible)
    plan.assumptions.push_back("interruptible: spot plans keep N+1 nodes, one on demand, the spot nodes spread over two zones of the "
                               "region (the catalog holds one zone's spot price per region: the second zone is priced as the first); "
                               "the simulation reclaims one spot node a third of the way in and its replacement serves after the cold start");
  if (!search.multi_node.empty()) {
    // What crosses between stages per token: one hidden-state vector (bf16).
    const double per_token_bytes = 2.0 * search.model.arch.hidden_size;
    const double chunk_bytes = per_token_bytes * search.options.prefill_chunk_tokens;
    plan.assumptions.push_back(fmt::format(
        "{} fits on no one node of {}: replicas across 2 to {} whole nodes of 8, tensor parallel within a node "
        "and one pipeline stage per node (vLLM's rule for a model no node holds: tensor parallel size the GPUs per node, pipeline "
        "parallel size the nodes; docs.vllm.ai serving/parallelism_scaling, read 2026-12-05), each replica running one "
        "micro-batch per stage at once with its share of the KV cache; the hidden states handed between "
        "nodes ({:.0f} KiB a token; a {}-token prefill chunk {:.0f} MB, {:.1f} ms over a 100 Gb/s instance network) are not counted",
        search.model.arch.name, join_list(std::vector<std::string>(search.multi_node.begin(), search.multi_node.end())),
        kMaxPipelineNodes, per_token_bytes / 1024, search.options.prefill_chunk_tokens, chunk_bytes / 1e6,
        chunk_bytes * 8 / 100e9 * 1e3));
  }
  if (search.multi_node_spot)
    plan.assumptions.push_back("replicas across nodes are not planned on spot: one reclaimed node stops its whole replica");
  if (search.llm)
    plan.assumptions.push_back(fmt::format("continuous batching with chunked prefill ({} tokens per step); "
                                           "steady-state step time from the roofline; TTFT p99 from Poisson bursts per step "
                                           "and Erlang-C waits for a KV slot; TPOT p99 over requests of every answer length, "
                                           "each answer's decode steps waiting for the prompts that arrive meanwhile (the busy "
                                           "period of their prefill, Takacs; as bursty as the router leaves a replica's arrivals; "
                                           "a pipeline's lanes waiting for every lane's chunks; gamma tails)",
                                           search.options.prefill_chunk_tokens));
  else
    plan.assumptions.push_back("dynamic batching takes what has queued when a pass ends (no extra delay); "
                               "p99 from the pass in progress plus Kingman's batch-level queue with an exponential tail");
  plan.assumptions.push_back("no batching: M/G/c over the replicas (Erlang C with the Allen-Cunneen correction)");
}

}  // namespace

ServicePlan plan_service(const Catalog& catalog, const Spec& spec, const ServiceSpec& service,
                         const PlannerOptions& options) {
  ServicePlan plan;
  plan.service = service.name;
  const ModelSpec& model = spec.models.at(service.model_key);
  const bool llm = model.arch.kind == ModelKind::decoder;
  plan.average_rps = service.traffic.average_rps;
  plan.peak_rps = service.traffic.peak_rps;
  plan.mean_input_tokens = service.input_tokens.mean();
  plan.mean_output_tokens = service.output_tokens.mean();

  std::vector<Batching> policies;
  if (service.batching == Batching::automatic) {
    policies = {Batching::none, llm ? Batching::continuous : Batching::dynamic};
  } else {
    policies = {service.batching};
  }
  bool want_contrast = std::find(policies.begin(), policies.end(), Batching::none) == policies.end();
  if (want_contrast) policies.insert(policies.begin(), Batching::none);

  auto screened = screen_service(service);
  if (!screened.ok()) {
    plan.binding = screened.error().message;
    return plan;
  }
  PlanSearch search(model, screened.value(), options, spec, plan);
  search.llm = llm;
  search.peak = service.traffic.peak_rps;
  search.max_util = spec.constraints.max_utilization;
  search_configurations(search, catalog, policies);

  std::vector<PlanOption> disaggregated;
  std::string disaggregation_note;
  if (options.consider_disaggregated && llm && service.batching != Batching::none && plan.binding.empty()) {
    DisaggregatedSearch in{catalog, spec, model, search.service, search.engine, search.lengths, options, search.peak, search.max_util};
    disaggregated = search_disaggregated(in, plan.candidates_evaluated);
    search.all.insert(search.all.end(), disaggregated.begin(), disaggregated.end());
    const bool pulled = service.deployment && service.deployment->disaggregation &&
                        service.deployment->disaggregation->pulled_between_steps();
    disaggregation_note = fmt::format(
        "disaggregated prefill and decode considered beside one pool: a prefill pool sized by the prompt tokens and TTFT p99, a "
        "decode pool by the KV cache and TPOT p99, each with its own tensor-parallel size on nodes of its own (at least "
        "min_replicas each) of one offering; every prompt's KV sent over the offering's fabric, {}; not on spot; verified as "
        "screened, not grown",
        pulled ? fmt::format("pulled by the decode replica between its steps (disaggregation.kv_transfer: between_steps): no step "
                             "while it pulls, each pull the slower end's transfer plus a worker call of {:.2f} ms (a Ray actor's "
                             "synchronous call, ray-project/ray PR #51427)",
                             kEngineWorkerCallS * 1e3)
               : std::string("streamed behind its prefill"));
  }
  std::vector<PlanOption> batched, unbatched;
  for (const auto& option : search.all) {
    bool is_none = option.config.batching == Batching::none;
    bool allowed = !(want_contrast && is_none);
    if (allowed) batched.push_back(option);
    if (is_none) unbatched.push_back(option);
  }
  auto cheapest = [](std::vector<PlanOption>& options) -> std::optional<PlanOption> {
    if (options.empty()) return std::nullopt;
    return *std::min_element(options.begin(), options.end(), better);
  };
  plan.best = cheapest(batched);
  std::sort(disaggregated.begin(), disaggregated.end(), better);
  for (const PlanOption& o : disaggregated)
    if (plan.disaggregated_ranked.size() < 4 &&
        std::none_of(plan.disaggregated_ranked.begin(), plan.disaggregated_ranked.end(), [&](const PlanOption& r) { return same_layout(r, o); }))
      plan.disaggregated_ranked.push_back(o);
  if (!disaggregated.empty()) plan.disaggregated = disaggregated.front();
  if (service.batching != Batching::none) plan.no_batching = cheapest(unbatched);
  plan.feasible = plan.best.has_value();
  if (!plan.feasible && plan.binding.empty()) plan.binding = binding_targets(service, search.best_achieved);
  rank_options(plan, batched, llm, options.pareto_size);
  add_plan_assumptions(search);
  if (!disaggregation_note.empty()) plan.assumptions.push_back(disaggregation_note);
  return plan;
}

}  // namespace gw
