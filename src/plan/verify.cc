#include "plan/verify.h"

#include "core/cancel.h"
#include "core/parallel.h"
#include "k8s/haproxy_manifests.h"
#include "k8s/router_manifests.h"
#include "k8s/vllm_router_manifests.h"
#include "plan/cold_start.h"
#include "plan/spot.h"
#include "report/table.h"

#include <fmt/format.h>

#include <limits>

namespace gw {

Deployment deployment_of(const PlanOption& option, bool llm, int prefill_chunk_tokens, const Deployment* engine) {
  Deployment d;
  if (engine) {
    // How the spec's engine runs (its prefix cache, speculative decoding, scheduler): the
    // replicas and batching are the plan's.
    d.scheduler = engine->scheduler;
    d.chunked_prefill = engine->chunked_prefill;
    d.preemption = engine->preemption;
    d.watermark_fraction = engine->watermark_fraction;
    d.prefix_cache = engine->prefix_cache;
    d.prefix_cache_tokens = engine->prefix_cache_tokens;
    d.speculative = engine->speculative;
  }
  if (option.decode) {
    d.groups.push_back({option.config.accelerator->name, option.config.tensor_parallel, option.replicas, "prefill"});
    d.groups.push_back({option.decode->config.accelerator->name, option.decode->config.tensor_parallel, option.decode->replicas, "decode"});
    DisaggregationSpec link;
    link.link = option.decode->link;
    link.gbps_per_gpu = option.decode->link_gbps_per_gpu;
    // How the spec's engine moves the KV (the screen assumes it streamed; the simulation checks).
    if (engine && engine->disaggregation) link.kv_transfer = engine->disaggregation->kv_transfer;
    d.disaggregation = link;
  } else {
    d.groups.push_back({option.config.accelerator->name, option.config.tensor_parallel, option.replicas, "both", option.config.pipeline_parallel});
  }
  d.batching = std::string(batching_name(option.config.batching));
  d.max_batch = option.config.max_batch;
  d.token_budget = prefill_chunk_tokens;
  d.router = std::string(router_name(routing_as_deployed(option, llm, engine)));
  return d;
}

Router routing_as_deployed(const PlanOption& option, bool llm, const Deployment* engine) {
  if (engine && engine->router_given) return parse_router(engine->router).value_or(Router::round_robin);
  // The screen models one request per pass as M/G/c (one queue: HAProxy's, each replica taking one
  // request at a time) and batches per replica.
  if (!llm) return option.config.batching == Batching::none ? Router::shared_queue : Router::round_robin;
  // Round robin over one pool's replicas (over their leaders where a replica spans nodes) and
  // both halves of a disaggregated plan: in every plan bench/routing_as_deployed.py measured it as
  // cheap as power of two or cheaper, its TTFT p99 lower (counting requests in flight sees
  // decodes, not the prefill backlog a prompt waits on).
  return Router::round_robin;
}

std::string vllm_router_policy(Router router) {
  switch (router) {
    case Router::power_of_two: return "power_of_two";
    case Router::round_robin: return "round_robin";
    case Router::random: return "random";
    default: return "";
  }
}

HaproxyRouting haproxy_routing(Router router, bool llm) {
  if (llm && !vllm_router_policy(router).empty()) return {};  // the vLLM Router's (random: a Service's)
  switch (router) {
    case Router::round_robin: return {"roundrobin", 0};
    case Router::shortest_queue: return {"leastconn", 0};
    case Router::power_of_two: return {"random(2)", 0};
    case Router::shared_queue: return {"leastconn", 1};
    default: return {};
  }
}

FrontRouter front_router(Router router, bool llm) {
  FrontRouter front;
  if (llm && router != Router::random) front.vllm_router_policy = vllm_router_policy(router);
  if (!front.vllm_router()) front.haproxy = haproxy_routing(router, llm);
  return front;
}

double router_join_s(Router router, bool llm, bool from_zero) {
  const FrontRouter front = front_router(router, llm);
  if (!front.vllm_router() && !front.proxy()) return 0;  // a Service: kube-proxy adds a ready endpoint at once
  const double half_period_s = kRouterProbePeriodS / 2.0;
  double join_s = front.proxy() ? 3 * half_period_s : 0;
  if (from_zero) join_s += half_period_s;
  return join_s;
}

int router_instances_as_deployed(Router router, bool llm, const Deployment* engine) {
  if (router != Router::round_robin) return 1;
  if (engine && engine->router_replicas) return *engine->router_replicas;
  const FrontRouter front = front_router(router, llm);
  if (front.vllm_router()) return VllmRouterInput{}.replicas;
  HaproxyInput proxy;
  proxy.maxconn_per_replica = front.haproxy.maxconn_per_replica;
  return haproxy_replicas(proxy);
}

Router decode_routing_as_deployed(Router router) {
  return vllm_router_policy(router).empty() ? Router::least_tokens : router;
}

std::string routing_words(Router router, bool llm) {
  if (llm && router == Router::round_robin)
    return "the vLLM Router in front with --policy round_robin (--emit-k8s writes it): each request to the next replica in turn "
           "(deployment.router: power-of-two for its power_of_two)";
  switch (router) {
    case Router::power_of_two:
      if (!llm)
        return "HAProxy in front with balance random(2) (--emit-k8s writes it): of two replicas drawn at random, the one with "
               "fewer requests in flight";
      return "the vLLM Router in front with --policy power_of_two (--emit-k8s writes it): of two replicas drawn at random, the one "
             "with fewer requests in flight";
    case Router::random: return "a Kubernetes Service: kube-proxy sends each connection to a ready replica at random";
    case Router::shared_queue:
      return "HAProxy in front (--emit-k8s writes it): each replica takes one request at a time, the rest wait in the proxy's "
             "queue for the first replica free (M/G/c, as the screen assumed)";
    case Router::round_robin:
      return "HAProxy in front with balance roundrobin (--emit-k8s writes it): each request to the next replica in turn, as "
             "the screen assumed";
    case Router::shortest_queue:
      return "HAProxy in front with balance leastconn (--emit-k8s writes it): each request to the replica with the fewest in "
             "flight";
    default: return std::string(router_name(router));
  }
}

Result<SimulatedCheck> simulate_option(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service,
                                       const PlanOption& option, const VerifyOptions& options) {
  bool llm = model.arch.kind == ModelKind::decoder;
  Deployment deployment = deployment_of(option, llm, options.prefill_chunk_tokens, service.deployment ? &*service.deployment : nullptr);
  auto replicas = build_replicas(catalog, model, service, deployment, options.build);
  if (!replicas.ok()) return replicas.error();
  ArrivalOptions arrivals = arrival_options(service, service.traffic.peak_rps);
  if (arrivals.process == "curve" || arrivals.process == "series") {  // verify at the peak rate, not through the day
    arrivals.process = "poisson";
    arrivals.rate_rps = service.traffic.peak_rps;
  }
  Rng rng(options.seed);
  auto process = make_arrivals(arrivals, service, rng);
  SimOptions sim;
  sim.seed = options.seed;
  sim.max_requests = options.requests;
  sim.slo = service.slo;
  sim.client_timeout_s = service.traffic.client_timeout_s;
  sim.router = options.router ? *options.router : *parse_router(deployment.router);
  sim.decode_router = decode_routing_as_deployed(sim.router);
  sim.router_instances = router_instances_as_deployed(sim.router, llm, service.deployment ? &*service.deployment : nullptr);
  sim.timeseries_points = 0;
  // A spot plan loses one spot node a third of the way in (at peak), and the replacement serves
  // after a cold start.
  SimulatedCheck check;
  if (option.spot_with_floor()) {
    const double rate = arrivals.process == "trace" && service.traffic.trace ? service.traffic.trace->mean_rps : service.traffic.peak_rps;
    double span_s = static_cast<double>(options.requests) / std::max(1e-9, rate);
    if (arrivals.process == "trace" && service.traffic.trace) span_s = std::min(span_s, service.traffic.trace->duration_s);
    ReplicaOutage outage;
    outage.at_s = span_s / 3;
    outage.replacement_s = cold_start(model, service.scaling).start_s;
    const int lost = std::min(option.reclaim_replicas, option.replicas - 1);
    for (int i = option.replicas - lost; i < option.replicas; ++i) outage.replicas.push_back(i);
    sim.outages = {outage};
    check.reclaimed = true;
    check.reclaim_replicas = lost;
    check.reclaim_at_s = outage.at_s;
    check.replacement_s = outage.replacement_s;
    check.notice_s = reclaim_notice(option.offering->cloud).seconds;
  }
  auto result = simulate(*process, replicas.value(), sim);
  if (!result.ok()) return result.error();
  const SimResult& r = result.value();
  check.requests = r.requests;
  check.overloaded = r.overloaded;
  check.latency_p50_s = r.latency.quantile(0.50);
  check.latency_p99_s = r.latency.quantile(0.99);
  check.ttft_p99_s = r.ttft.quantile(0.99);
  check.tpot_p99_s = r.tpot.quantile(0.99);
  check.latency_mean_s = r.latency.mean();
  check.ttft_mean_s = r.ttft.mean();
  check.wait_mean_s = r.wait.mean();
  check.slo_attainment = r.slo_attainment;
  for (const auto& replica : r.replicas) check.duty_cycle += replica.busy_fraction / static_cast<double>(r.replicas.size());
  // A disaggregated deployment's replicas: the prefill group's, then the decode group's.
  if (option.disaggregated() && option.replicas > 0 && static_cast<int>(r.replicas.size()) > option.replicas)
    for (int i = 0; i < option.replicas; ++i)
      check.prefill_duty_cycle += r.replicas[static_cast<size_t>(i)].busy_fraction / option.replicas;
  check.miss = slo_miss(service.slo, r);
  if (check.reclaimed && !r.outages.empty()) {
    check.drained_s = r.outages.front().drained_s;
    check.rerouted = r.outages.front().rerouted;
    if (check.miss.empty() && (check.drained_s < 0 || check.drained_s > check.notice_s))
      check.miss = fmt::format("reclaim: the lost replicas hold requests past the {:.0f} s notice", check.notice_s);
  }
  check.meets = check.miss.empty();
  return check;
}

VerifyOptions brief_options(const VerifyOptions& options) {
  VerifyOptions brief = options;
  brief.requests = std::min<long long>(options.requests, 5000);
  return brief;
}

std::string slo_miss(const Slo& slo, const SimResult& r) {
  if (r.rejected > 0) return fmt::format("{} prompts longer than the KV cache", r.rejected);
  // A request its client gave up on never got a first token: longer than any served one.
  const double all = static_cast<double>(r.requests + r.timed_out);
  if (all > 0 && static_cast<double>(r.timed_out) > 0.01 * all)
    return fmt::format("{} requests timed out ({:.2f}%)", r.timed_out, 100 * static_cast<double>(r.timed_out) / all);
  auto over = [&](const LogHistogram& h, double q, const std::optional<double>& target) {
    return target && quantile_with_timeouts(h, r.timed_out, q) > *target;
  };
  if (over(r.ttft, 0.99, slo.ttft_p99_s)) return "ttft_p99_s";
  if (slo.tpot_p99_s && r.tpot.quantile(0.99) > *slo.tpot_p99_s) return "tpot_p99_s";
  if (over(r.latency, 0.99, slo.e2e_p99_s)) return "e2e_p99_s";
  if (over(r.latency, 0.99, slo.latency_p99_s)) return "latency_p99_s";
  if (over(r.latency, 0.5, slo.latency_p50_s)) return "latency_p50_s";
  return "";
}

bool verify_option(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service, PlanOption& option,
                   const VerifyOptions& options) {
  if (option.simulated) return option.simulated->meets;
  // A caller that gave up (Ctrl-C in Python): no more simulations. The search ends quickly, and
  // the entry point reports the interruption instead of a plan.
  if (cancel_requested()) return false;
  auto result = simulate_option(catalog, model, service, option, options);
  if (!result.ok()) {
    SimulatedCheck failed;
    failed.miss = result.error().message;
    option.simulated = failed;
    return false;
  }
  option.simulated = result.value();
  return option.simulated->meets;
}

namespace {

// "H100 x32 tp8 pp2 (2 replicas, $105.28/hour)": a layout as the plan's notes name it.
std::string layout_and_price(const PlanOption& option) {
  return fmt::format("{} x{} {} ({} replicas, {}/hour)", option.config.accelerator->name, option.config.devices() * option.replicas,
                     parallel_layout(option.config), option.replicas, format_usd(option.usd_per_hour));
}

}  // namespace

std::optional<PlanOption> grow_until_verified(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service,
                                              const PlanOption& screened, const VerifyOptions& options, double below_usd_per_hour) {
  // A disaggregated layout has two pools to grow: it is verified as screened.
  if (screened.disaggregated()) return std::nullopt;
  PlanOption grown = screened;
  auto affordable = [&](int replicas) {
    PlanOption probe = screened;
    place_replicas_cheapest(probe, replicas);
    return probe.usd_per_hour < below_usd_per_hour;
  };
  auto passes = [&](int replicas) {
    if (!affordable(replicas)) return false;
    place_replicas_cheapest(grown, replicas);
    grown.simulated.reset();
    return verify_option(catalog, model, service, grown, options);
  };
  const int base = screened.needed_replicas > 0 ? screened.needed_replicas : screened.replicas;
  for (int extra = 1; extra <= options.extra_replicas && affordable(base + extra); ++extra)
    if (passes(base + extra)) return grown;
  // Bursty traffic (a trace's busiest seconds) can need far more: double until the simulation
  // agrees (up to 16 times the screen's count), then bisect down to the fewest that do.
  int failing = base + options.extra_replicas;
  const int ceiling = std::max(16 * base, failing + 1);
  // The most replicas under the price bound (the price rises with the count): doubling past it
  // would give up without trying the counts between.
  int most = ceiling;
  if (!affordable(ceiling)) {
    int low = failing, high = ceiling;  // high unaffordable; low may be too (then nothing is tried)
    while (high - low > 1) {
      const int middle = low + (high - low) / 2;
      if (affordable(middle)) low = middle;
      else high = middle;
    }
    most = low;
  }
  for (int high = std::min(failing * 2, most); high > failing; high = std::min(high * 2, most)) {
    if (!passes(high)) {
      failing = high;
      continue;
    }
    PlanOption best_grown = grown;
    int low = failing;  // fails
    while (high - low > 1) {
      int middle = low + (high - low) / 2;
      if (passes(middle)) high = middle, best_grown = grown;
      else low = middle;
    }
    return best_grown;
  }
  return std::nullopt;
}

void verify_plan(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, ServicePlan& plan,
                 const VerifyOptions& options) {
  if (!plan.best) return;
  const ModelSpec& model = spec.models.at(service.model_key);
  std::optional<PlanOption> chosen;
  size_t passed_at = plan.ranked.size();
  for (size_t i = 0; i < plan.ranked.size(); ++i) {
    PlanOption& option = plan.ranked[i];
    if (verify_option(catalog, model, service, option, options)) {
      chosen = option;
      passed_at = i;
      break;
    }
    plan.dropped.push_back(option.disaggregated()
                               ? fmt::format("{} disaggregated {} GPUs (prefill {} x tp{}, decode {} x tp{}, {}/hour): simulated {} missed",
                                             option.config.accelerator->name, option.layout(), option.replicas,
                                             option.config.tensor_parallel, option.decode->replicas,
                                             option.decode->config.tensor_parallel, format_usd(option.usd_per_hour),
                                             option.simulated->miss)
                               : fmt::format("{}: simulated {} missed", layout_and_price(option), option.simulated->miss));
  }
  // A layout that missed as screened may still cost less, grown until the simulation agrees, than
  // the first that passed (or none passed): grow each that missed and keep the cheapest. Ranked
  // is in cost order and growing only adds cost, so one that starts at or above the cheapest so
  // far cannot win.
  const std::optional<PlanOption> passed = chosen;
  for (size_t i = 0; i < passed_at; ++i) {
    const PlanOption& option = plan.ranked[i];
    const double bound = chosen ? chosen->usd_per_hour : std::numeric_limits<double>::infinity();
    if (option.usd_per_hour >= bound) break;
    auto grown = grow_until_verified(catalog, model, service, option, options, bound);
    if (grown && grown->usd_per_hour < bound) chosen = grown;
  }
  if (!chosen) {
    plan.feasible = false;
    plan.binding = fmt::format("simulation: the screened plans miss {} at peak traffic (best simulated: {})",
                               plan.ranked.front().simulated ? plan.ranked.front().simulated->miss : "the SLO",
                               plan.ranked.front().config.accelerator->name);
    plan.best->simulated = plan.ranked.front().simulated;
    return;
  }
  if (!passed)
    plan.assumptions.push_back(fmt::format("no screened candidate met the SLO in simulation: the cheapest grown until it did is {} x{} "
                                           "{} ({} replicas; the screen's cheapest was {} replicas of {})",
                                           chosen->config.accelerator->name, chosen->config.devices() * chosen->replicas,
                                           parallel_layout(chosen->config), chosen->replicas, plan.best->replicas,
                                           plan.best->config.accelerator->name));
  else if (chosen->usd_per_hour < passed->usd_per_hour)
    plan.assumptions.push_back(fmt::format("a screened candidate that missed the SLO in simulation, grown until it met it, costs less than "
                                           "the first that met it as screened: {} against {}",
                                           layout_and_price(*chosen), layout_and_price(*passed)));
  plan.best = chosen;
  {
    const bool llm = model.arch.kind == ModelKind::decoder;
    const Deployment* engine = service.deployment ? &*service.deployment : nullptr;
    const Router router = routing_as_deployed(*chosen, llm, engine);
    plan.assumptions.push_back(fmt::format(
        "simulated with {}: {}{}",
        engine && engine->router_given ? "the spec's deployment.router (how you route)" : "the routing plan --emit-k8s deploys",
        routing_words(router, llm),
        chosen->decode ? " (a prompt's prefill pod, then its decode pod)"
        : router_join_s(router, llm, true) > 0
            ? "; a pool scaled to zero keeps it, behind the KEDA HTTP add-on's interceptor, which holds requests until the router has a ready replica"
            : ""));
  }
  // Report simulated percentiles for the frontier too (shorter runs), and drop what misses.
  std::vector<PlanOption> kept;
  const VerifyOptions brief = brief_options(options);
  for (auto& option : plan.pareto) {
    // A full replay outranks the frontier's shorter run: what it dropped stays dropped (the same
    // replicas of the same configuration serve alike, whatever the offering).
    for (const auto& checked : plan.ranked)
      if (!option.simulated && checked.simulated && same_layout(checked, option))
        option.simulated = checked.simulated;
  }
  // The rest of the frontier is simulated in parallel, each option in its own slot.
  parallel_for(plan.pareto.size(), options.jobs, [&](size_t i) {
    PlanOption& option = plan.pareto[i];
    if (option.simulated || cancel_requested()) return;
    auto result = simulate_option(catalog, model, service, option, brief);
    if (result.ok()) option.simulated = result.value();
  });
  for (const auto& option : plan.pareto)
    if (option.simulated && option.simulated->meets) kept.push_back(option);
  if (kept.empty() || kept.front().usd_per_hour > plan.best->usd_per_hour) kept.insert(kept.begin(), *plan.best);
  plan.pareto = kept;
  // The contrast without batching is grown like the plan, so its cost is what the traffic needs;
  // no deployment runs it, so it is routed at its best (the replica with the fewest requests:
  // a replica serving one at a time behind a random draw needs many times the count).
  VerifyOptions contrast = options;
  contrast.router = Router::shortest_queue;
  if (plan.no_batching && !verify_option(catalog, model, service, *plan.no_batching, contrast))
    if (auto grown = grow_until_verified(catalog, model, service, *plan.no_batching, contrast)) plan.no_batching = grown;
}

}  // namespace gw
