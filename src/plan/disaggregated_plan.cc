#include "plan/disaggregated_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <tuple>

#include "core/formatting.h"
#include "core/money.h"
#include "core/serving_defaults.h"
#include "core/text.h"
#include "plan/queueing.h"

namespace gw {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// How far above a pool's capacity bound the search looks for its latency target.
constexpr int kReplicasPastCapacity = 24;

}  // namespace

PoolLayout pool_layout(const DisaggregatedSearch& in, const Configuration& config) {
  PoolLayout m;
  m.config = config;
  m.setup = screen_setup(config, in.model.precision, in.model.weight_format, in.options);
  m.free_bytes = screen_kv_free_bytes(in.model.arch, in.model.precision, in.model.weight_format, config, in.options, in.engine, m.kv_bytes_per_token,
                                      &m.model_kv_bytes_per_token);
  return m;
}

KvLink kv_link_for(const Offering& offering, const ServiceSpec& service) {
  const int gpus = std::max(1, offering.accelerator_count);
  if (service.deployment && service.deployment->disaggregation) {
    const DisaggregationSpec& d = *service.deployment->disaggregation;
    // The simulator's defaults for a named link (sim/deployment.cc), NVLink aside: the pools
    // of a plan sit on nodes of their own.
    double gbps = d.gbps_per_gpu ? *d.gbps_per_gpu : d.link == "tcp" ? 100.0 / 8 : 400;
    const bool pulled = d.pulled_between_steps();
    return {d.link == "nvlink" ? "infiniband" : d.link, gbps, pulled, pulled ? kEngineWorkerCallS : 0};
  }
  const std::string& fabric = offering.fabric;
  if (fabric == "efa" || fabric == "infiniband" || fabric == "roce")
    return {fabric, offering.network_gbps ? *offering.network_gbps / gpus : 400};
  return {"tcp", (offering.network_gbps ? *offering.network_gbps : 100) / gpus};
}

ServiceLevel disaggregated_level(const DisaggregatedSearch& in, const PoolLayout& pm, int prefill_replicas, const PoolLayout& dm,
                                 int decode_replicas, const KvLink& link, double rate, DecodePool* detail) {
  const Configuration &prefill = pm.config, &decode = dm.config;
  ServiceLevel level;
  const ModelArch& arch = in.model.arch;
  const ServiceSpec& service = in.service;
  const ScreenEngine& engine = in.engine;
  const double input = in.mean_input_tokens, input99 = service.input_tokens.quantile(0.99);
  const double output = std::max(1.0, in.mean_output_tokens), output99 = std::max(1.0, service.output_tokens.quantile(0.99));
  const double computed = engine.computed_mean(prefill_replicas, false), computed99 = engine.computed_quantile(0.99, prefill_replicas, false);
  const double budget = in.options.prefill_chunk_tokens;
  // Every layer's every token: a KV connector turns vLLM's hybrid KV cache manager off, so
  // sliding-window layers keep every token here (kv_layer_groups.h).
  if (pm.free_bytes <= pm.kv_bytes_per_token * input99 || dm.free_bytes <= dm.kv_bytes_per_token * (input99 + output99)) {
    level.binding = "memory: a p99 request's KV does not fit";
    return level;
  }
  // Prefill pool: prompt chunks only, at the full token budget when busy; a prompt waits for
  // the prompts before it (M/G/c over the pool) and is then computed in chunks.
  const PerfSetup& ps = pm.setup;
  const double prompt_context = in.lengths.prefill_context_tokens();
  const double full_step = screen_step_s(engine, arch, ps, 0, 0, budget, budget / std::max(1.0, computed), prompt_context);
  const double tokens_per_s = budget / std::max(1e-12, full_step);
  const double own_prefill = screen_step_s(engine, arch, ps, 0, 0, std::max(1.0, computed), 1, input);
  const double per_prefill = rate / prefill_replicas;
  const double prefill_util = per_prefill * computed / tokens_per_s;
  const double wait99 = mgc_wait_quantile(prefill_replicas, rate, computed / tokens_per_s, 1.0, 0.99);
  const double chunks = std::ceil(std::max(1.0, computed99) / budget);
  const double ttft99 = wait99 + chunks * screen_step_s(engine, arch, ps, 0, 0, std::min(budget, std::max(1.0, computed99)), 1, input99);
  // The KV of the whole prompt leaves over the prefill replica's link, one prompt at a time,
  // streamed layer by layer behind the prefill: what is left after it, plus the wait for the
  // link (M/D/1).
  const double link_bytes_per_s = link.gbps_per_gpu * 1e9 / 8 * prefill.tensor_parallel;
  const double transfer_s = input * pm.model_kv_bytes_per_token * prefill.tensor_parallel / link_bytes_per_s;
  const double link_util = per_prefill * transfer_s;
  const double link_wait = link_util < 1 ? link_util / (2 * (1 - link_util)) * transfer_s : kInfinity;
  const double handoff = std::max(transfer_s / std::max(1, arch.num_layers), transfer_s - own_prefill) + link_wait;
  // Pulled between steps (DistServe's decoding engine): no overlap with the prefill; the decode
  // replica steps none while it pulls, taking the slower of the two ends plus its worker call.
  // (Each end's GPUs move their own share of the KV, each at the link's rate per GPU.)
  const double receive_s = input * dm.model_kv_bytes_per_token / (link.gbps_per_gpu * 1e9 / 8);
  const double pull_s = link.pulled_between_steps ? std::max(transfer_s, receive_s) + link.pull_call_s : 0;
  if (detail) {
    detail->kv_transfer_s = transfer_s;
    detail->link_utilization = link_util;
    detail->kv_pulled_between_steps = link.pulled_between_steps;
    detail->prefill_level.utilization = prefill_util;
    detail->prefill_level.ttft_p99_s = ttft99;
  }
  if (decode_replicas <= 0) {  // the prefill pool alone
    level.utilization = std::max(prefill_util, link_util);
    level.ttft_p99_s = ttft99;
    level.feasible = prefill_util < 1 && link_util < 1 && std::isfinite(ttft99);
    if (!level.feasible) level.binding = link_util >= 1 ? "KV link overloaded" : "overloaded";
    return level;
  }
  // Decode pool: only decode steps, the batch held by the KV cache (every slot reserves its
  // prompt and answer) and max_batch; a slot's request waits for one to free when all are held.
  const PerfSetup& ds = dm.setup;
  const double slot_context = in.lengths.slot_context_tokens();
  const double batch_cap = std::min<double>(std::floor(dm.free_bytes / (dm.kv_bytes_per_token *
                                                                       (in.lengths.slot_reserved_tokens() + engine.lookahead_tokens()))),
                                            decode.max_batch);
  if (batch_cap < 1) {
    level.binding = "memory: the decode pool's KV cache holds no request";
    return level;
  }
  auto decode_step_s = [&](double n) { return screen_step_s(engine, arch, ds, n, slot_context, 0, 0, 0); };
  const double per_decode = rate / decode_replicas;
  // Pulls take their share of the decode replica's time off its steps.
  const double pull_share = per_decode * pull_s;
  const double decode_capacity = batch_cap / (output * decode_step_s(batch_cap));
  const double decode_util = per_decode / decode_capacity + pull_share;
  level.utilization = std::max({prefill_util, decode_util, link_util});
  level.capacity_rps = std::min(prefill_replicas * tokens_per_s / std::max(1.0, computed), decode_replicas * decode_capacity) /
                       (prefill_replicas + decode_replicas);
  if (detail) {
    detail->decode_level.utilization = decode_util;
    detail->pull_share_needed = pull_share;
  }
  if (prefill_util >= 1 || decode_util >= 1 || link_util >= 1) {
    level.binding = link_util >= 1 ? "KV link overloaded" : "overloaded";
    level.ttft_p99_s = level.tpot_p99_s = level.latency_p99_s = kInfinity;
    return level;
  }
  // tau: a decode step; per_token: the time between a sequence's tokens, the steps stretched by
  // the pulls between them.
  double tau = decode_step_s(1), per_token = tau / (1 - pull_share);
  for (int i = 0; i < 200; ++i) {
    const double next = decode_step_s(std::min(batch_cap, per_decode * output * per_token));
    if (std::fabs(next - tau) < 1e-9) break;
    tau = 0.5 * tau + 0.5 * next;
    per_token = tau / (1 - pull_share);
  }
  const double sequences = std::min(batch_cap, per_decode * output * per_token);
  const double step99 = decode_step_s(std::min(batch_cap, poisson_quantile(sequences, 0.99)));
  // The pulls between two steps: those of the requests that arrived over one token's time (few:
  // counted exactly), at least the request's own.
  const double gap99 =
      link.pulled_between_steps ? std::max(1.0, small_poisson_quantile(per_decode * per_token, 0.99)) * pull_s : 0;
  const double slot_wait = mgc_wait_quantile(static_cast<int>(batch_cap), per_decode, output * per_token, 1.0, 0.99);
  // A pulled request waits for the step in flight and the pulls before its own.
  const double arrival = link.pulled_between_steps ? tau + gap99 + link_wait : handoff;
  const double arrival50 = link.pulled_between_steps ? tau / 2 + pull_s + link_wait : handoff;
  // The first token comes from the prefill replica; the hand-off and a wait for a slot delay the
  // second, and TPOT spreads them over the answer's tokens.
  const double before_second = arrival + (std::isfinite(slot_wait) ? slot_wait : kInfinity);
  level.batch = sequences;
  level.ttft_p99_s = ttft99;
  level.tpot_p99_s = per_token + (step99 + gap99 - per_token) * in.lengths.tpot_p99_share() + before_second / std::max(1.0, output - 1);
  level.latency_p99_s = ttft99 + before_second + output99 * step99 / (1 - pull_share);
  level.latency_p50_s = own_prefill + arrival50 + service.output_tokens.quantile(0.5) * per_token;
  level.feasible = std::isfinite(level.latency_p99_s);
  if (!level.feasible) level.binding = "overloaded";
  if (detail) {
    detail->prefill_level.feasible = true;
    detail->decode_level.tpot_p99_s = level.tpot_p99_s;
    detail->decode_level.batch = sequences;
    detail->decode_level.feasible = true;
  }
  return level;
}

void place_disaggregated(PlanOption& option, int prefill_replicas, int decode_replicas) {
  DecodePool& decode = *option.decode;
  option.needed_replicas = prefill_replicas;
  option.replicas = std::max(prefill_replicas, option.min_nodes);
  decode.needed_replicas = decode_replicas;
  decode.replicas = std::max(decode_replicas, option.min_nodes);
  const int prefill_nodes = std::max(option.nodes_for(option.replicas, option.config.tensor_parallel), option.min_nodes);
  const int decode_nodes = std::max(option.nodes_for(decode.replicas, decode.config.tensor_parallel), option.min_nodes);
  option.nodes = {{option.offering, option.pricing, prefill_nodes, ""}, {option.offering, option.pricing, decode_nodes, ""}};
  option.price_nodes();
}

namespace {

// Fewest replicas from `low` for which `meets` holds, looking kReplicasPastCapacity past it.
template <typename Meets>
std::optional<int> fewest(int low, int max_replicas, Meets meets) {
  for (int n = std::max(1, low); n <= std::min(max_replicas, low + kReplicasPastCapacity); ++n)
    if (meets(n)) return n;
  return std::nullopt;
}

// What the pool would miss with one replica fewer (its binding constraint).
std::string binding_below(int replicas, int min_nodes, const std::function<std::string(int)>& why) {
  if (replicas < min_nodes) return fmt::format("min_replicas {} (the load needs {})", min_nodes, replicas);
  if (replicas <= 1) return "one replica's load";
  std::string reason = why(replicas - 1);
  return reason.empty() ? "the capacity bound" : reason;
}

}  // namespace

std::vector<PlanOption> search_disaggregated(const DisaggregatedSearch& in, long long& evaluated) {
  std::vector<PlanOption> out;
  const ModelArch& arch = in.model.arch;
  if (arch.kind != ModelKind::decoder || in.model.measured) return out;
  const Slo& slo = in.service.slo;
  const int max_batch = in.service.max_batch > 0 ? in.service.max_batch : 256;
  for (const Accelerator* accelerator : allowed_accelerators(in.catalog, in.spec.constraints)) {
    if (!model_serves_on(in.catalog, in.model, *accelerator).ok) continue;
    std::map<int, PoolLayout> layouts;  // by tensor-parallel size
    for (int tp : {1, 2, 4, 8})
      if (arch.num_heads % tp == 0) layouts[tp] = pool_layout(in, Configuration{accelerator, tp, Batching::continuous, max_batch});
    // The prefill pool's size depends on its own layout and link alone: found once for every decode pool.
    std::map<std::tuple<int, std::string, double>, std::pair<std::optional<int>, std::string>> prefill_sized;
    // (plain references, not structured bindings: lambdas below capture them, which clang before
    // 16 refuses)
    for (const auto& prefill_entry : layouts) {
      const int tp_prefill = prefill_entry.first;
      const PoolLayout& prefill = prefill_entry.second;
      for (const auto& decode_entry : layouts) {
        const int tp_decode = decode_entry.first;
        const PoolLayout& decode = decode_entry.second;
        const Configuration& prefill_config = prefill.config;
        const Configuration& decode_config = decode.config;
        if (disaggregated_level(in, prefill, 1, decode, 1, {"tcp", 1}, 1e-6).binding.starts_with("memory")) continue;
        auto offerings = allowed_offerings(in.catalog, in.spec.constraints, *accelerator, std::max(tp_prefill, tp_decode));
        // One sizing per link rate: offerings on the same fabric share it.
        std::map<std::pair<std::string, double>, std::optional<std::pair<int, int>>> sized;
        std::map<std::pair<std::string, double>, DecodePool> details;
        for (const Offering* offering : offerings) {
          const KvLink link = kv_link_for(*offering, in.service);
          const auto key = std::make_pair(link.name, link.gbps_per_gpu);
          if (!sized.count(key)) {
            // Prefill replicas by TTFT, its load and its link's; decode replicas by TPOT and load.
            auto prefill_miss = [&](int p) -> std::string {
              DecodePool d;
              ++evaluated;
              ServiceLevel l = disaggregated_level(in, prefill, p, decode, 0, link, in.peak_rps, &d);
              if (d.link_utilization > in.max_utilization) return "the KV link's load";
              if (d.prefill_level.utilization > in.max_utilization) return "the prompt tokens' load";
              if (!l.feasible) return l.binding;
              if (slo.ttft_p99_s && l.ttft_p99_s > *slo.ttft_p99_s) return "ttft_p99_s";
              return "";
            };
            auto decode_miss = [&](int p, int d) -> std::string {
              std::string why;
              ++evaluated;
              const ServiceLevel l = disaggregated_level(in, prefill, p, decode, d, link, in.peak_rps);
              return meets_slo(l, slo, in.max_utilization, &why) ? "" : why;
            };
            DecodePool probe;
            disaggregated_level(in, prefill, 1, decode, 1, link, in.peak_rps, &probe);
            const int prefill_low = static_cast<int>(std::floor(probe.prefill_level.utilization / in.max_utilization));
            auto& prefill_entry_sized = prefill_sized[std::make_tuple(tp_prefill, link.name, link.gbps_per_gpu)];
            std::optional<int>& p = prefill_entry_sized.first;
            std::string& prefill_binding = prefill_entry_sized.second;
            if (!p && prefill_binding.empty()) {
              p = fewest(prefill_low, in.options.max_replicas, [&](int n) { return prefill_miss(n).empty(); });
              prefill_binding = p ? binding_below(*p, in.service.min_replicas, [&](int n) { return prefill_miss(n); }) : "unmet";
            }
            std::optional<int> d;
            if (p) {
              const int decode_low = static_cast<int>(std::floor(probe.decode_level.utilization / in.max_utilization));
              d = fewest(decode_low, in.options.max_replicas, [&](int n) { return decode_miss(*p, n).empty(); });
            }
            sized[key] = p && d ? std::optional(std::make_pair(*p, *d)) : std::nullopt;
            if (p && d) {
              DecodePool& detail = details[key];
              disaggregated_level(in, prefill, *p, decode, *d, link, in.peak_rps, &detail);
              detail.prefill_binding = prefill_binding;
              detail.decode_binding = binding_below(*d, in.service.min_replicas, [&](int n) { return decode_miss(*p, n); });
            }
          }
          const auto& counts = sized[key];
          if (!counts) continue;
          for (Pricing pricing : in.spec.constraints.pricing) {
            if (pricing == Pricing::spot || !offering->usd_per_hour(pricing)) continue;
            PlanOption option;
            option.config = prefill_config;
            option.offering = offering;
            option.pricing = pricing;
            option.min_nodes = in.service.min_replicas;
            option.decode = details[key];
            option.decode->config = decode_config;
            option.decode->link = link.name;
            option.decode->link_gbps_per_gpu = link.gbps_per_gpu;
            place_disaggregated(option, counts->first, counts->second);
            option.level = disaggregated_level(in, prefill, option.replicas, decode, option.decode->replicas, link, in.peak_rps);
            out.push_back(std::move(option));
          }
        }
      }
    }
  }
  return out;
}

}  // namespace gw

namespace gw {

namespace {

std::string describe_pools(const PlanOption& o) {
  const DecodePool& d = *o.decode;
  return fmt::format("{} prefill replica(s) (tp{}) and {} decode (tp{}) of {}, {} GPUs, KV over {} at {:.0f} Gb/s per GPU "
                     "({:.1f} ms per mean prompt{})",
                     o.replicas, o.config.tensor_parallel, d.replicas, d.config.tensor_parallel, o.config.accelerator->name,
                     o.layout(), d.link, d.link_gbps_per_gpu, d.kv_transfer_s * 1e3,
                     d.kv_pulled_between_steps
                         ? fmt::format(", pulled by the decode replicas between their steps: {:.1f}% of their time at peak",
                                       d.pull_share() * 100)
                         : "");
}

// What one replica fewer of an aggregated option would miss in the screen.
std::string aggregated_binding(const Spec& spec, const ServiceSpec& service, const PlanOption& o, const PlannerOptions& planner) {
  const int needed = o.needed_replicas > 0 ? o.needed_replicas : o.replicas;
  if (needed < o.min_nodes) return fmt::format("min_replicas {} (the load needs {})", o.min_nodes, needed);
  if (needed <= 1) return "one replica";
  std::string why;
  ServiceLevel fewer = evaluate_service(spec.models.at(service.model_key), service, o.config, needed - 1, service.traffic.peak_rps, planner);
  if (meets_slo(fewer, service.slo, spec.constraints.max_utilization, &why)) return "its capacity";
  return why == "overloaded" ? "its load (one replica fewer is overloaded)" : why;
}

}  // namespace

void judge_disaggregation(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, ServicePlan& plan,
                          const PlannerOptions& planner, const VerifyOptions* verify) {
  if (!plan.disaggregated) return;
  // The cheapest disaggregated layout that passes in simulation (a few are tried in cost order),
  // and the cheaper ones that did not.
  std::vector<std::string> missed;
  if (plan.best && plan.best->disaggregated()) {
    plan.disaggregated = plan.best;
  } else if (verify) {
    bool passed = false;
    for (PlanOption& candidate : plan.disaggregated_ranked) {
      for (const PlanOption& r : plan.ranked)
        if (!candidate.simulated && r.simulated && same_layout(r, candidate)) candidate.simulated = r.simulated;
      if (verify_option(catalog, spec.models.at(service.model_key), service, candidate, brief_options(*verify))) {
        plan.disaggregated = candidate;
        passed = true;
        break;
      }
      if (!candidate.simulated) break;  // the caller gave up (cancelled): no more simulations
      missed.push_back(fmt::format("{} {} GPUs missed {}", candidate.config.accelerator->name, candidate.layout(), candidate.simulated->miss));
    }
    // None passed: the verdict speaks of the cheapest, as simulated.
    if (!passed && !plan.disaggregated_ranked.empty() && plan.disaggregated_ranked.front().simulated)
      plan.disaggregated = plan.disaggregated_ranked.front();
  }
  PlanOption& d = *plan.disaggregated;
  // The aggregated layout to weigh it against: the plan's, or the cheapest that passed.
  const PlanOption* aggregated = plan.best && !plan.best->disaggregated() ? &*plan.best : nullptr;
  for (const PlanOption& r : plan.ranked)
    if (!aggregated && !r.disaggregated() && (!verify || (r.simulated && r.simulated->meets))) aggregated = &r;
  // None passed as screened (the disaggregated layout won first, so the cheaper aggregated ones
  // were never replayed): the cheapest aggregated layouts, each replayed as screened (the
  // frontier's run where it had one) and grown until the simulation agrees where it misses, for
  // the comparison, as far as 3 times its cost.
  std::optional<PlanOption> grown;
  int grown_from = 0;  // the screen's replicas of the layout grown (0: it passed as screened)
  if (!aggregated && verify) {
    const VerifyOptions brief = brief_options(*verify);
    const ModelSpec& model = spec.models.at(service.model_key);
    int tried = 0;
    for (const PlanOption& r : plan.ranked) {
      if (r.disaggregated() || ++tried > 3) continue;
      PlanOption as_screened = r;
      for (const PlanOption& p : plan.pareto)
        if (!as_screened.simulated && p.simulated && same_layout(p, as_screened)) as_screened.simulated = p.simulated;
      std::optional<PlanOption> g;
      if (!as_screened.simulated) verify_option(catalog, model, service, as_screened, brief);
      if (as_screened.simulated && as_screened.simulated->meets) g = as_screened;
      else if (as_screened.simulated)
        g = grow_until_verified(catalog, model, service, r, brief, grown ? grown->usd_per_hour : 3 * d.usd_per_hour);
      if (g && (!grown || g->usd_per_hour < grown->usd_per_hour)) grown = g, grown_from = g->replicas == r.replicas ? 0 : r.replicas;
    }
    if (grown) aggregated = &*grown;
  }
  std::string aggregated_bound = aggregated ? aggregated_binding(spec, service, *aggregated, planner) : "";
  // Where cheaper aggregated layouts passed the screen but missed in simulation, that binds.
  std::vector<std::string> aggregated_misses;
  for (const PlanOption& r : plan.ranked)
    if (aggregated && !r.disaggregated() && r.usd_per_hour < aggregated->usd_per_hour && r.simulated && !r.simulated->meets &&
        std::find(aggregated_misses.begin(), aggregated_misses.end(), r.simulated->miss) == aggregated_misses.end())
      aggregated_misses.push_back(r.simulated->miss);
  if (!aggregated_misses.empty())
    aggregated_bound = "the simulation: cheaper aggregated layouts missed " + join_list(aggregated_misses);
  else if (grown && grown_from > 0)
    aggregated_bound = fmt::format("the simulation: the screen's {} replicas grown to {} before it met the SLO", grown_from, grown->replicas);
  if (grown) {
    // At equal cost one pool is kept: simpler to run, and it autoscales.
    // Grown on the comparison's shorter runs: kept only when the plan's full run agrees.
    PlanOption full = *grown;
    full.simulated.reset();
    if (plan.best && plan.best->disaggregated() && grown->usd_per_hour <= plan.best->usd_per_hour + 1e-9 &&
        verify_option(catalog, spec.models.at(service.model_key), service, full, *verify)) {
      plan.best = full;
      if (plan.pareto.empty() || !same_layout(plan.pareto.front(), full)) plan.pareto.insert(plan.pareto.begin(), full);
      plan.assumptions.push_back("the aggregated layout grown until the simulation agreed costs what the disaggregated one does: "
                                 "one pool kept (simpler to run, and it autoscales)");
    }
  }
  const std::string pools = fmt::format("the prefill pool is bound by {}, the decode pool by {}", d.decode->prefill_binding,
                                        d.decode->decode_binding);
  const std::string against = aggregated ? fmt::format("the cheapest aggregated layout, {} replica(s) of {} tp{} ({} GPUs, {}/month, bound by {})",
                                                       aggregated->replicas, aggregated->config.accelerator->name,
                                                       aggregated->config.tensor_parallel, aggregated->gpus(),
                                                       format_usd(aggregated->usd_per_month()), aggregated_bound)
                                         : verify ? fmt::format("no aggregated layout (none met the SLO in simulation, grown to 3 times this "
                                                                "cost: one pool's decode steps carry prompt chunks of up to {} tokens)",
                                                                verify->prefill_chunk_tokens)
                                                  : std::string("no aggregated layout that meets the SLO in the screen");
  const std::string cheaper_missed = missed.empty() ? "" : " (in simulation " + join_list(missed) + ")";
  if (plan.best && plan.best->disaggregated()) {
    plan.disaggregation_verdict = fmt::format("disaggregated prefill and decode win: {} at {}/month against {}; {}", describe_pools(d),
                                              format_usd(d.usd_per_month()), against, pools);
  } else if (d.simulated && !d.simulated->meets) {
    plan.disaggregation_verdict = fmt::format("disaggregated prefill and decode lose: none of the {} cheapest such layouts met the SLO "
                                              "in simulation ({}); the cheapest, {} at {}/month: {}", missed.size(), join_list(missed),
                                              describe_pools(d), format_usd(d.usd_per_month()), pools);
  } else {
    const double more = aggregated ? d.usd_per_month() / aggregated->usd_per_month() - 1 : 0;
    plan.disaggregation_verdict = fmt::format("disaggregated prefill and decode lose: the cheapest such layout{}, {} at {}/month, "
                                              "costs {} {}; {}", cheaper_missed.empty() ? "" : " to meet the SLO",
                                              describe_pools(d), format_usd(d.usd_per_month()),
                                              more < 0.005 ? std::string("the same as") : fmt::format("{:.0f}% more than", more * 100),
                                              against, pools + cheaper_missed);
  }
}

}  // namespace gw
