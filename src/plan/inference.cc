#include "plan/inference.h"

#include "perf/layer_operators.h"
#include "catalog/precision_support.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <set>

#include "core/text.h"
#include "model/memory.h"
#include "perf/step_time.h"
#include "perf/throughput.h"
#include "plan/queueing.h"
#include "plan/disaggregated_plan.h"
#include "plan/screen_engine.h"

namespace gw {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

ServiceLevel classic_level(const ModelSpec& model, const ServiceSpec& service, const Configuration& config,
                           int replicas, double rate, const PlannerOptions& options) {
  ServiceLevel level;
  const ModelArch& arch = model.arch;
  PerfSetup setup = screen_setup(config, model.precision, options);
  double tokens = service.input_tokens.mean();
  if (!model.measured) {
    // Weights and the activations of a full batch must fit on the device.
    InferenceMemoryOptions memory;
    memory.weight_precision = model.precision;
    memory.tensor_parallel = config.tensor_parallel;
    memory.batch = config.max_batch;
    memory.context = std::max(1.0, tokens);
    memory.overhead_gib = options.overhead_gib;
    if (estimate_inference(arch, memory).total_bytes_per_device >
        config.accelerator->memory_bytes() * options.usable_fraction) {
      level.binding = "memory: weights and a full batch do not fit";
      return level;
    }
  }
  auto service_time = [&](double b) {
    if (model.measured) return model.measured->at(std::max(1.0, b));
    return item_step(arch, setup, std::max(1.0, b), tokens).time_s;
  };
  double per_replica = rate / replicas;
  if (config.batching == Batching::none) {
    double s = service_time(1);
    level.batch = 1;
    level.capacity_rps = 1.0 / s;
    level.utilization = rate * s / replicas;
    double wait99 = mgc_wait_quantile(replicas, rate, s, 0.0, 0.99);
    double wait50 = mgc_wait_quantile(replicas, rate, s, 0.0, 0.50);
    level.latency_p99_s = s + wait99;
    level.latency_p50_s = s + wait50;
    level.feasible = std::isfinite(level.latency_p99_s);
    if (!level.feasible) level.binding = "overloaded";
    return level;
  }
  // Dynamic batching (zero queue delay): each pass takes what has queued, up to max_batch.
  // Capacity is max_batch / S(max_batch). Under load the server runs back to back and the batch
  // settles where it equals the arrivals during one pass: b = rate x S(b).
  double max_batch = config.max_batch;
  level.capacity_rps = max_batch / service_time(max_batch);
  level.utilization = per_replica / level.capacity_rps;
  if (per_replica >= level.capacity_rps) {
    level.binding = "overloaded";
    level.latency_p99_s = level.latency_p50_s = kInfinity;
    return level;
  }
  double light = per_replica * service_time(1);  // busy fraction if every pass held one request
  if (light < 1.0) {
    // Light load: a request finds the server idle, or waits for the pass in progress.
    double b = 1.0 + per_replica * service_time(1) / 2;
    double s = service_time(b);
    level.batch = b;
    level.latency_p99_s = s + service_time(1) * std::max(0.0, 1.0 - 0.01 / light);
    level.latency_p50_s = s + service_time(1) * std::max(0.0, 1.0 - 0.50 / light);
  } else {
    double b = 1;
    for (int i = 0; i < 200; ++i) b = std::clamp(per_replica * service_time(b), 1.0, max_batch);
    double s = service_time(b);
    level.batch = b;
    // Wait for the pass in progress (uniform residual), then one's own pass; when the mean batch
    // nears max_batch, Poisson bursts leave requests for later passes (Kingman at the batch
    // level, cv^2 of batch arrivals 1/max_batch, deterministic service, exponential tail).
    double rho = std::min(0.999, b / max_batch);
    double queue_mean = service_time(max_batch) * rho / (1.0 - rho) * (1.0 / max_batch) / 2.0;
    level.latency_p99_s = s + 0.99 * s + queue_mean * std::log(100.0);
    level.latency_p50_s = s + 0.50 * s + queue_mean * std::log(2.0);
  }
  level.feasible = true;
  return level;
}

// The requests' lengths as continuous batching sees them: a trace's own (input, output) pairs
// (its sample), where long answers hold their batch slots longer; else the spec's means.
RequestLengths service_lengths(const ServiceSpec& service) {
  std::vector<std::pair<double, double>> pairs = trace_request_pairs(service);
  if (pairs.empty())
    return RequestLengths::fixed(service.input_tokens.mean(), std::max(1.0, service.output_tokens.mean()));
  return RequestLengths::from_pairs(pairs);
}

// lengths: service_lengths(service), worked out once per search. The service's prompts are
// what the replicas hold (screen_service widens them by traffic.prefix); engine says what of
// them prefill computes and how the engine decodes.
ServiceLevel llm_level(const ModelArch& arch, Precision precision, const ServiceSpec& service, const ScreenEngine& engine,
                       const RequestLengths& lengths, const Configuration& config, int replicas, double rate,
                       const PlannerOptions& options) {
  ServiceLevel level;
  PerfSetup setup = screen_setup(config, precision, options);
  const double input = service.input_tokens.mean(), output = std::max(1.0, service.output_tokens.mean());
  const double input99 = service.input_tokens.quantile(0.99), output99 = std::max(1.0, service.output_tokens.quantile(0.99));
  // What prefill computes: the prompt less what the prefix cache holds.
  const double computed = engine.computed_mean(replicas, true), computed99 = engine.computed_quantile(0.99, replicas, true);
  const double per_replica = rate / replicas;
  auto step = [&](double n, double context, double prefill, double prompts, double prompt_context) {
    return screen_step_s(engine, arch, setup, n, context, prefill, prompts, prompt_context);
  };
  double kv_per_token = 0;
  double free = screen_kv_free_bytes(arch, precision, config, options, engine, kv_per_token);
  if (free <= 0) {
    level.binding = "weights do not fit";
    return level;
  }

  if (config.batching == Batching::none) {
    // One request at a time per replica: M/G/c over the replicas.
    double prefill = step(0, 0, computed, 1, input);
    double decode = step(1, input + output / 2, 0, 0, 0);
    double s = prefill + output * decode;
    double kv_needed = kv_per_token * (input99 + output99);
    if (kv_needed > free) {
      level.binding = "KV cache too small for one p99 request";
      return level;
    }
    level.batch = 1;
    level.capacity_rps = 1.0 / s;
    level.utilization = per_replica * s;
    double wait99 = mgc_wait_quantile(replicas, rate, s, 1.0, 0.99);
    level.ttft_p99_s = wait99 + step(0, 0, computed99, 1, input99);
    level.tpot_p99_s = step(1, input99 + output99, 0, 0, 0);
    level.latency_p99_s = level.ttft_p99_s + output99 * level.tpot_p99_s;
    level.latency_p50_s = prefill + output * decode + mgc_wait_quantile(replicas, rate, s, 1.0, 0.5);
    level.feasible = std::isfinite(level.latency_p99_s);
    if (!level.feasible) level.binding = "overloaded";
    return level;
  }

  // Continuous batching with chunked prefill: the batch is limited by the KV cache and by
  // max_batch. Capacity is the steady-state throughput at that batch.
  if (kv_per_token * (input99 + output99) > free) {
    level.binding = "KV cache cannot hold one p99 request";
    return level;
  }
  const double slot_context = lengths.slot_context_tokens(), prompt_context = lengths.prefill_context_tokens();
  // Each slot reserves its request's tokens, and under speculative decoding its k lookahead slots.
  double kv_batch = std::floor(free / (kv_per_token * (lengths.slot_reserved_tokens() + engine.lookahead_tokens())));
  double batch_cap = std::min<double>(kv_batch, config.max_batch);
  if (batch_cap < 1) {
    level.binding = "KV cache too small for one request";
    return level;
  }
  // At the largest batch the cache holds: each step decodes batch_cap sequences and prefills
  // the computed prompts of the requests that replace finished ones.
  level.capacity_rps =
      engine.speculative || computed < input
          ? batch_cap / output / std::max(1e-12, step(batch_cap, slot_context, batch_cap / output * computed, batch_cap / output, prompt_context))
          : continuous_max_throughput(arch, setup, kv_per_token, free, lengths, batch_cap).requests_per_s;
  level.utilization = per_replica / std::max(1e-12, level.capacity_rps);
  if (per_replica >= level.capacity_rps) {
    level.binding = "overloaded";
    level.ttft_p99_s = level.tpot_p99_s = level.latency_p99_s = kInfinity;
    return level;
  }
  // Steady state at this rate: the step time tau solves tau = step(n = rate x output x tau
  // sequences decoding, rate x input x tau prompt tokens).
  const double chunk = options.prefill_chunk_tokens;
  double tau = step(1, input, 0, 0, 0);
  for (int i = 0; i < 200; ++i) {
    double n = std::min(batch_cap, per_replica * output * tau);
    double admitted = per_replica * tau;
    double next = step(n, slot_context, admitted * computed, admitted, prompt_context);
    if (std::fabs(next - tau) < 1e-9) break;
    tau = 0.5 * tau + 0.5 * next;
  }
  double sequences = per_replica * output * tau;
  level.batch = sequences;
  // Steps with a burst of new prompts are slower: p99 arrivals per step, their prompts chunked.
  double arrivals99 = poisson_quantile(per_replica * tau, 0.99);
  double budget = std::max(1.0, chunk - sequences);
  double prefill99 = std::min(budget, arrivals99 * computed);
  double step99 = step(sequences, slot_context, prefill99, std::min(arrivals99, 1.0 + arrivals99), prompt_context);
  // TPOT is per request (its decode time over its tokens, as vLLM's benchmark reports it): an
  // average over ~output steps, so a slow step's excess shrinks by sqrt(output).
  level.tpot_p99_s = tau + (step99 - tau) / std::sqrt(std::max(1.0, output));
  // A p99 prompt is prefilled in chunks of the free token budget, one chunk per step; it may
  // first wait for the step in progress and, near the KV limit, for a free slot.
  double chunks = std::ceil(computed99 / budget);
  double chunk_step = step(sequences, slot_context, std::min(budget, computed99), 1, input99);
  double slot_wait = mgc_wait_quantile(static_cast<int>(batch_cap), per_replica, output * tau, 1.0, 0.99);
  level.ttft_p99_s = tau + chunks * chunk_step + (std::isfinite(slot_wait) ? slot_wait : kInfinity);
  level.latency_p99_s = level.ttft_p99_s + output99 * step99;
  level.latency_p50_s = tau + std::ceil(engine.computed_quantile(0.5, replicas, true) / budget) * chunk_step +
                        service.output_tokens.quantile(0.5) * tau;
  level.feasible = std::isfinite(level.latency_p99_s);
  if (!level.feasible) level.binding = "overloaded";
  return level;
}

std::vector<int> batch_limits(const ServiceSpec& service, Batching batching, bool llm) {
  if (batching == Batching::none) return {1};
  if (service.max_batch > 0) return {service.max_batch};
  if (llm) return {256};  // vLLM's default max_num_seqs; the KV cache usually binds first
  return {2, 4, 8, 16, 32, 64, 128, 256};
}

}  // namespace

void place_replicas(PlanOption& option, int needed) {
  const int per_node = option.replicas_per_node();
  const int needed_nodes = option.nodes_for(needed, option.config.tensor_parallel);
  option.needed_replicas = needed;
  option.nodes.clear();
  if (!option.spot_with_floor()) {
    const int nodes = std::max(needed_nodes, option.min_nodes);
    option.replicas = std::max(needed, option.min_nodes);
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
  return fmt::format("{}:{}", config.tensor_parallel * replicas, decode->config.tensor_parallel * decode->replicas);
}

std::string describe_nodes(const PlanOption& option) {
  if (option.disaggregated())
    return fmt::format("{} x {} {} {} ({}): {} for prefill, {} for decode", option.instances, option.offering->cloud,
                       option.offering->region, option.offering->instance_type, pricing_name(option.pricing),
                       option.nodes[0].instances, option.nodes[1].instances);
  if (!option.spot_with_floor())
    return fmt::format("{} x {} {} {} ({})", option.instances, option.offering->cloud, option.offering->region,
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

namespace {

bool better(const PlanOption& a, const PlanOption& b) {
  if (a.usd_per_hour != b.usd_per_hour) return a.usd_per_hour < b.usd_per_hour;
  if (a.level.latency_p99_s != b.level.latency_p99_s) return a.level.latency_p99_s < b.level.latency_p99_s;
  if (a.instances != b.instances) return a.instances < b.instances;
  if (a.offering->key() != b.offering->key()) return a.offering->key() < b.offering->key();
  if (a.config.tensor_parallel != b.config.tensor_parallel) return a.config.tensor_parallel < b.config.tensor_parallel;
  if (a.config.max_batch != b.config.max_batch) return a.config.max_batch < b.config.max_batch;
  return static_cast<int>(a.pricing) < static_cast<int>(b.pricing);
}

ServiceLevel evaluate_with(const ModelSpec& model, const ServiceSpec& service, const ScreenEngine& engine, const RequestLengths& lengths,
                           const Configuration& config, int replicas, double rate_rps, const PlannerOptions& options) {
  if (model.arch.kind == ModelKind::decoder)
    return llm_level(model.arch, model.precision, service, engine, lengths, config, replicas, rate_rps, options);
  return classic_level(model, service, config, replicas, rate_rps, options);
}

}  // namespace

std::vector<std::pair<double, double>> trace_request_pairs(const ServiceSpec& service) {
  std::vector<std::pair<double, double>> pairs;
  const auto& trace = service.traffic.trace;
  if (!trace || trace->input_sample.size() != trace->output_sample.size()) return pairs;
  pairs.reserve(trace->input_sample.size());
  for (size_t i = 0; i < trace->input_sample.size(); ++i) pairs.emplace_back(trace->input_sample[i], trace->output_sample[i]);
  return pairs;
}

ServiceLevel evaluate_service(const ModelSpec& model, const ServiceSpec& service, const Configuration& config,
                              int replicas, double rate_rps, const PlannerOptions& options) {
  auto screened = screen_service(service);
  if (!screened.ok()) {
    ServiceLevel level;
    level.binding = screened.error().message;
    return level;
  }
  const ScreenedService& s = screened.value();
  return evaluate_with(model, s.service, s.engine, service_lengths(s.service), config, replicas, rate_rps, options);
}

bool meets_slo(const ServiceLevel& level, const Slo& slo, double max_utilization, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (!level.feasible) return fail(level.binding.empty() ? "infeasible" : level.binding);
  if (level.utilization > max_utilization + 1e-12)
    return fail(fmt::format("utilization {:.0f}% above the {:.0f}% limit", level.utilization * 100, max_utilization * 100));
  if (slo.ttft_p99_s && level.ttft_p99_s > *slo.ttft_p99_s) return fail("ttft_p99_s");
  if (slo.tpot_p99_s && level.tpot_p99_s > *slo.tpot_p99_s) return fail("tpot_p99_s");
  if (slo.e2e_p99_s && level.latency_p99_s > *slo.e2e_p99_s) return fail("e2e_p99_s");
  if (slo.latency_p99_s && level.latency_p99_s > *slo.latency_p99_s) return fail("latency_p99_s");
  if (slo.latency_p50_s && level.latency_p50_s > *slo.latency_p50_s) return fail("latency_p50_s");
  return true;
}

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

// A spot plan's on-demand floor: the cheapest on-demand node of the same shape in the same cloud
// and region (one cluster, one autoscaler); the spot nodes spread over two zones of the region.
// False when the region sells no such node on demand.
bool place_on_spot(PlanOption& option, const std::vector<const Offering*>& offerings) {
  const Offering* first = option.offering;
  const Offering* floor = nullptr;
  for (const Offering* o : offerings) {
    if (o->cloud != first->cloud || o->region != first->region || o->accelerator_count != first->accelerator_count) continue;
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
  std::set<std::string> precision_notes;
  bool spot_refused = false;
  std::set<std::string> spot_unspread;
};

// How close a configuration comes to each SLO metric at the most replicas allowed.
void record_best_achieved(PlanSearch& search, const Configuration& config) {
  ServiceLevel floor = evaluate_with(search.model, search.service, search.engine, search.lengths, config, search.options.max_replicas, search.peak, search.options);
  std::string where = fmt::format("{} tp{}, {} batching", config.accelerator->name, config.tensor_parallel, batching_name(config.batching));
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
  ServiceLevel level = evaluate_with(search.model, search.service, search.engine, search.lengths, config, replicas, search.peak, search.options);
  for (const Offering* offering : offerings) {
    for (Pricing pricing : search.spec.constraints.pricing) {
      if (!offering->usd_per_hour(pricing)) continue;
      PlanOption option;
      option.config = config;
      option.offering = offering;
      option.pricing = pricing;
      option.min_nodes = search.service.min_replicas;
      if (pricing == Pricing::spot) {
        // A real-time service on spot only when it may lose a node, and then never
        // on one zone alone: N+1 with an on-demand floor.
        if (!search.service.interruptible) {
          search.spot_refused = true;
          continue;
        }
        if (!place_on_spot(option, offerings)) {
          search.spot_unspread.insert(offering->cloud + " " + offering->instance_type);
          continue;
        }
      }
      place_replicas(option, replicas);
      option.level = option.replicas == replicas
                         ? level
                         : evaluate_with(search.model, search.service, search.engine, search.lengths, config, option.replicas, search.peak, search.options);
      search.all.push_back(option);
    }
  }
}

// Every accelerator, tensor-parallel size, batching policy and batch limit the model fits.
void search_configurations(PlanSearch& search, const Catalog& catalog, const std::vector<Batching>& policies) {
  const ModelSpec& model = search.model;
  const ModelArch& arch = model.arch;
  const ServiceSpec& service = search.service;
  bool any_fit = false, any_offering = false;
  for (const Accelerator* accelerator : allowed_accelerators(catalog, search.spec.constraints)) {
    // Measured service times hold for the accelerator they were measured on only.
    if (model.measured && catalog.find_accelerator(model.measured->accelerator) != accelerator) continue;
    // Weights the device has no kernels for are never planned there; the plan says so.
    if (!model.measured) {
      if (auto why = unsupported_precision(*accelerator, model.precision)) {
        search.precision_notes.insert("not considered: " + accelerator->name + ": " + *why + " (" + kPrecisionSupportSource + ")");
        continue;
      }
    }
    for (int tp : {1, 2, 4, 8}) {
      if (arch.kind != ModelKind::generic && arch.num_heads % tp != 0) continue;
      if (arch.kind == ModelKind::generic && tp > 1) continue;
      auto offerings = allowed_offerings(catalog, search.spec.constraints, *accelerator, tp);
      // Memory: the weights (and for LLMs one p99 request's KV) must fit at this tp.
      Configuration probe{accelerator, tp, Batching::none, 1};
      double kv_per_token = 0;
      double free = screen_kv_free_bytes(arch, model.precision, probe, search.options, search.engine, kv_per_token);
      double need = search.llm ? kv_per_token * (service.input_tokens.quantile(0.99) + service.output_tokens.quantile(0.99)) : 0;
      if (free <= need) continue;
      any_fit = true;
      if (offerings.empty()) continue;
      any_offering = true;
      for (Batching batching : policies) {
        for (int limit : batch_limits(service, batching, search.llm)) {
          Configuration config{accelerator, tp, batching, limit};
          ServiceLevel one = evaluate_with(model, service, search.engine, search.lengths, config, 1, search.peak, search.options);
          record_best_achieved(search, config);
          if (one.capacity_rps <= 0) continue;
          if (auto replicas = fewest_replicas(search, config, one)) add_priced_options(search, config, *replicas, offerings);
        }
      }
    }
  }
  if (!any_fit) {
    search.plan.binding = "memory: the model does not fit on any allowed accelerator (up to tp=8)";
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

// The cost-ranked list and the cost-latency Pareto set over distinct configurations.
void rank_options(ServicePlan& plan, std::vector<PlanOption>& batched, bool llm, int pareto_size) {
  std::sort(batched.begin(), batched.end(), better);
  for (const auto& option : batched) {
    bool seen = std::any_of(plan.ranked.begin(), plan.ranked.end(), [&](const PlanOption& o) { return same_layout(o, option); });
    if (!seen) plan.ranked.push_back(option);
    if (plan.ranked.size() >= 12) break;
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
  plan.assumptions.insert(plan.assumptions.end(), search.precision_notes.begin(), search.precision_notes.end());
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
  if (search.llm)
    plan.assumptions.push_back(fmt::format("continuous batching with chunked prefill ({} tokens per step); "
                                           "steady-state step time from the roofline; TTFT and TPOT p99 from "
                                           "Poisson bursts per step and Erlang-C waits for a KV slot",
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
    disaggregation_note = (
        "disaggregated prefill and decode considered beside one pool: a prefill pool sized by the prompt tokens and TTFT p99, a "
        "decode pool by the KV cache and TPOT p99, each with its own tensor-parallel size on nodes of its own (at least "
        "min_replicas each) of one offering; every prompt's KV sent over the offering's fabric, streamed behind its prefill; not "
        "on spot; verified as screened, not grown");
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
