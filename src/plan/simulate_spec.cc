#include "plan/simulate_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plan/spec_names.h"
#include "plan/verify.h"
#include "report/progress.h"
#include "sim/arrivals.h"
#include "core/random.h"

namespace gw {

namespace {

constexpr long long kSyntheticRequests = 100000;

// The engine an LLM replica mirrors and its memory: what a reader needs to trust the run.
// A disaggregated deployment's first decode replica (where requests' KV lives), or null.
const ReplicaConfig* decode_replica(const std::vector<ReplicaConfig>& replicas) {
  for (const auto& r : replicas)
    if (r.role == ReplicaRole::decode) return &r;
  return nullptr;
}

// A replica's KV blocks as its lanes hold them: each its share, or one pool for them all.
long long kv_blocks_held(const ReplicaConfig& c) { return c.lanes_share_kv ? c.kv_blocks * c.pipeline_lanes : c.kv_blocks; }
std::string kv_holder(const ReplicaConfig& c) {
  if (c.pipeline_lanes > 1)
    return c.lanes_share_kv ? fmt::format("{}replica, one pool for its {} micro-batch lanes", c.role == ReplicaRole::decode ? "decode " : "",
                                          c.pipeline_lanes)
                            : fmt::format("micro-batch lane ({} lanes a replica, each its own share)", c.pipeline_lanes);
  return c.role == ReplicaRole::decode ? "decode replica" : "replica";
}

std::string engine_text(const ReplicaConfig& c, const std::string& kv_note = "") {
  const long long blocks = kv_blocks_held(c);
  long long tokens = blocks / c.kv_groups.groups() * c.block_tokens;  // of every layer
  const std::string prefix = c.prefix_caching == PrefixCaching::off     ? "prefix caching off"
                             : c.prefix_caching == PrefixCaching::in_kv ? "prefix caching in the KV cache's free blocks"
                             : std::isinf(c.prefix_room_tokens)
                                 ? "prefix caching unlimited"
                                 : fmt::format("prefix caching in a cache of its own of {:.4g} tokens", c.prefix_room_tokens);
  const SpeculativeDecoding& sp = c.speculative;
  const std::string speculative =
      sp.tokens > 0 ? fmt::format(", speculative decoding: {} tokens proposed per step ({}), {:.0f}% accepted each, "
                                  "{:.2f} tokens per sequence per step",
                                  sp.tokens, sp.draft ? "a draft model" : sp.head_share > 0 ? "a head on the model" : "n-gram lookup",
                                  sp.acceptance * 100, sp.tokens_per_step())
                    : "";
  const std::string per_lane = (c.pipeline_lanes > 1 || c.role == ReplicaRole::decode ? " per " + kv_holder(c) : "") + kv_note;
  return fmt::format("{} scheduler, {} preemption, token budget {}, KV cache {} blocks of {} ({} tokens){}, watermark {:.0f}%, {}{}",
                     llm_scheduler_name(c.scheduler), preemption_name(c.preemption), c.token_budget, blocks,
                     c.block_tokens, tokens, per_lane, c.watermark_fraction * 100, prefix, speculative);
}

// What the step times' error rests on (--explain, layers by operator): the sampled steps' parts.
std::optional<StepErrorSummary> step_error_of(const SimResult& r, const std::vector<ReplicaConfig>& replicas) {
  std::vector<StepParts> parts;
  for (const auto& sample : r.step_samples) {
    const auto* model = dynamic_cast<const LlmStepModel*>(replicas[static_cast<size_t>(sample.replica)].llm.get());
    if (model && model->by_operator())
      parts.push_back(model->parts(sample.decode_sequences, sample.context_sum, sample.prefill_tokens, sample.prefill_attended,
                                   sample.sampled_sequences));
  }
  if (parts.empty()) return std::nullopt;
  return summarize_step_errors(parts);
}

std::vector<std::string> assumptions_of(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service, const ServiceRun& run,
                                        const std::vector<ReplicaConfig>& replicas, const ReplicaBuildOptions& build,
                                        uint64_t seed) {
  const Deployment& deployment = run.deployment;
  std::vector<std::string> assumptions = {
      fmt::format("arrivals: {} at {:.3g} requests/s, seed {} (the same seed gives the same run)", run.arrivals, run.rate_rps, seed),
      "router: " + deployment.router + "; batching: " + (deployment.batching.empty() ? "the default for the model" : deployment.batching),
      "latency percentiles from log-bucket histograms (1% buckets, within 0.5% of exact); mean exact",
      client_timeout_text(service.traffic)};
  if (const PrefixShape& p = service.traffic.prefix; p.given() && run.arrivals != "trace")
    assumptions.push_back(fmt::format(
        "shared prefixes (traffic.prefix): a {:.0f}-token system prompt before every request; conversations of {} turns, each "
        "turn's prompt the earlier turns' new tokens and answers plus its own (the service's input tokens), {:.3g} s of "
        "thinking between turns at the earliest; cached as runs of {}-token blocks (the system prompt, each earlier turn's "
        "prompt, then with its answer: vLLM caches the blocks decoding fills)",
        p.system_prompt_tokens, p.turns, p.think_time_s, p.block_tokens));
  std::vector<const Accelerator*> said;  // groups on one accelerator (a disaggregated pair) said once
  for (const auto& group : deployment.groups) {
    const Accelerator* a = catalog.find_accelerator(group.accelerator);
    if (!a || std::find(said.begin(), said.end(), a) != said.end()) continue;
    said.push_back(a);
    if (model.measured && catalog.find_accelerator(model.measured->accelerator) == a)
      assumptions.push_back(fmt::format("service times on {}: measured by batch size in the spec ({} times around the mean)",
                                        a->name, model.measured->distribution));
    else
      assumptions.push_back(fmt::format("step times on {}: the roofline model, {}", a->name, efficiency_for(*a, build.calibration).source));
  }
  for (const auto& group : deployment.groups)
    if (group.pipeline_parallel > 1) {
      const auto lane = std::find_if(replicas.begin(), replicas.end(), [](const ReplicaConfig& c) { return c.pipeline_lanes > 1; });
      const std::string kv =
          lane != replicas.end() && lane->lanes_share_kv
              ? "all on one pool of the replica's KV blocks (deployment.pipeline_kv: shared; vLLM V1, SGLang and DistServe keep "
                "one; lanes take a prompt's blocks whole at admission, as they cannot preempt each other)"
              : fmt::format("1/{} of the replica's KV blocks each (deployment.pipeline_kv: per-micro-batch, vLLM V0's)", group.pipeline_parallel);
      assumptions.push_back(fmt::format(
          "pipeline stages ({} x {} tp{} pp{}): each replica runs {} micro-batch lanes, each with its own scheduler, {} and the "
          "whole model's step at its batch (vLLM V0's virtual engines; the engine's host time per sequence, where a "
          "calibration holds it, once per micro-batch, not at every stage); a stage runs one "
          "micro-batch at a time, so lanes whose batches differ step at the larger one's pace; activations handed between "
          "stages are not counted; checked against DistServe's measured two-stage decode (bench/README.md, distserve_alignment.py)",
          group.count, group.accelerator, group.tensor_parallel, group.pipeline_parallel, group.pipeline_parallel, kv));
      break;
    }
  if (deployment.disaggregation) {
    const ReplicaConfig* decode = decode_replica(replicas);
    assumptions.push_back(
        decode && decode->kv_pulled_between_steps
            ? fmt::format("KV transfer (disaggregation.kv_transfer: between_steps): after each of its steps the decode replica pulls "
                          "the KV of every request waiting for it, one request at a time (the transfer over the slower of the two "
                          "replicas' links, plus {:.2f} ms for its call to its workers: a Ray actor call), and starts no step "
                          "meanwhile; with pipeline stages the pull first waits for the micro-batch in flight, and the requests join "
                          "the micro-batch whose step ended (DistServe's decoding engine)",
                          decode->kv_pull_call_s * 1e3)
            : std::string("KV transfer (disaggregation.kv_transfer: overlapped): streamed layer by layer behind the prefill over "
                          "the prefill replica's link, one transfer at a time; the decode replica's steps never wait for it (vLLM's "
                          "KV connectors, SGLang, Dynamo)"));
  }
  if (run.llm && !replicas.empty()) {
    // Disaggregated: a decode replica's cache, where requests live.
    const ReplicaConfig* decode = decode_replica(replicas);
    const ReplicaConfig& c = decode ? *decode : replicas.front();
    assumptions.push_back(fmt::format("scheduler {}: {}", llm_scheduler_name(c.scheduler), llm_scheduler_source(c.scheduler)));
    assumptions.push_back(fmt::format("KV cache: {} blocks of {} tokens per {}, from {:.0f}% of device memory less weights, "
                                      "activations and {:.1f} GiB runtime overhead (deployment.gpu_memory_utilization, overhead_gib)",
                                      kv_blocks_held(c), c.block_tokens, kv_holder(c),
                                      deployment.gpu_memory_utilization.value_or(build.usable_fraction) * 100,
                                      deployment.overhead_gib.value_or(build.overhead_gib)));
    if (c.kv_groups.windowed())
      assumptions.push_back(fmt::format(
          "KV blocks by layer group, as vLLM V1's hybrid allocator keeps them: {}; a block is one group's (the cache's "
          "tokens are counted for every layer), and a sequence past the window holds its full-attention groups' blocks "
          "and only the window's of the others",
          c.kv_groups.describe(c.block_tokens)));
    else if (kv_layer_groups(model.arch, c.block_tokens).windowed() && !deployment.groups.empty()) {
      const Accelerator* a = catalog.find_accelerator(deployment.groups.front().accelerator);
      const std::string why = c.speculative.draft ? std::string("beside a draft model every layer is counted for every token here")
                                                  : no_hybrid_kv_cache_reason(a ? a->vendor : "", deployment.disaggregation.has_value());
      assumptions.push_back("sliding-window layers keep every token's KV, as the model's other layers do: " + why);
    }
    assumptions.push_back("verdict: overloaded when requests in the system grow by more than 5% of the arrivals over the "
                          "last quarter of the arrivals (and beyond 3 standard deviations of a stable queue), when clients "
                          "give up on more than 1% of them, or when over 5% of the requests are still in the system at the "
                          "last arrival, take over 5% of the arrival span to drain, and outnumber twice what their service "
                          "holds (arrival rate x mean latency less queue wait, Little's law; long generations are not a backlog); "
                          "undetermined when the last quarter of the arrivals begins under three times that mean time in "
                          "service and no other criterion holds: the replicas are still filling");
  }
  if (run.step_error) {
    const StepErrorSummary& e = *run.step_error;
    std::string by_part;
    for (const auto& [name, share] : e.mean_contribution) by_part += fmt::format("{}{} {:.2f}%", by_part.empty() ? "" : ", ", name, 100 * share);
    assumptions.push_back(fmt::format(
        "step-time error contribution over {} sampled steps (each part's share of the step x its held-out median error "
        "against Vidur's profiles): mean {:.1f}%, p99 {:.1f}%; {} dominates ({}); {:.0f}% of step time on average "
        "(collectives, launches, KV writes) has no measured error and is not counted",
        e.steps, 100 * e.mean_error, 100 * e.p99_error, e.dominant, by_part, 100 * e.mean_unmeasured_share));
  }
  return assumptions;
}

// The spec's deployment, or the best of the service's plan (verified as `plan` would).
Result<Deployment> deployment_for(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, bool llm,
                                  const ReplicaBuildOptions& build, uint64_t seed, std::string& origin) {
  origin = "spec";
  const bool replicas_given = service.deployment && !service.deployment->groups.empty();
  if (!replicas_given && !service.slo_given)
    return Error{spec.path, service.line, "services." + service.name + ".slo",
                 "required to plan a deployment to simulate (or give services." + service.name + ".deployment)"};
  if (replicas_given) return *service.deployment;
  PlannerOptions planner;
  planner.calibration = build.calibration;
  ServicePlan plan = plan_service(catalog, spec, service, planner);
  VerifyOptions verify;
  verify.build = build;
  verify.seed = seed;
  verify_plan(catalog, spec, service, plan, verify);
  if (!plan.best || !plan.feasible)
    return Error{spec.path, service.line, "services." + service.name + ".deployment",
                 "no deployment given and none can be planned: " + plan.binding};
  origin = "the plan's best";
  return deployment_of(*plan.best, llm, planner.prefill_chunk_tokens, service.deployment ? &*service.deployment : nullptr);
}

// Each group on the cheapest offering the spec allows: whole instances of replicas that fit one.
void price_deployment(const Catalog& catalog, const Spec& spec, ServiceRun& run) {
  double total = 0;
  for (const auto& g : run.deployment.groups) {
    const Accelerator* a = catalog.find_accelerator(g.accelerator);
    if (!a) return;
    const Offering* cheapest = nullptr;
    Pricing cheapest_pricing = Pricing::on_demand;
    double cheapest_usd = 0;
    int cheapest_instances = 0;
    const int devices = std::max(1, g.tensor_parallel) * std::max(1, g.pipeline_parallel);
    for (const Offering* offering : allowed_offerings(catalog, spec.constraints, *a, devices)) {
      const int per_node = std::max(1, offering->accelerator_count / devices);
      const int instances = (g.count + per_node - 1) / per_node;
      for (Pricing pricing : spec.constraints.pricing) {
        auto price = offering->usd_per_hour(pricing);
        if (!price || pricing == Pricing::spot) continue;  // a simulated fleet is not reclaimed
        if (!cheapest || *price * instances < cheapest_usd)
          cheapest = offering, cheapest_pricing = pricing, cheapest_usd = *price * instances, cheapest_instances = instances;
      }
    }
    if (!cheapest) return;
    total += cheapest_usd;
    run.priced_on.push_back(fmt::format("{} x {} ({} {}, {})", cheapest_instances, cheapest->instance_type, cheapest->cloud,
                                        cheapest->region, pricing_name(cheapest_pricing)));
  }
  run.usd_per_hour = total;
}

Result<ServiceRun> run_service(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, const SimulateSpecOptions& o) {
  const ModelSpec& model = spec.models.at(service.model_key);
  ServiceRun run;
  run.name = service.name;
  run.llm = model.arch.kind == ModelKind::decoder;
  run.slo_given = service.slo_given;
  run.client_timeout_s = service.traffic.client_timeout_s;
  ReplicaBuildOptions build;
  build.calibration = o.calibration;
  auto deployment = deployment_for(catalog, spec, service, run.llm, build, o.seed, run.origin);
  if (!deployment.ok()) return deployment.error();
  run.deployment = deployment.value();
  auto replicas = build_replicas(catalog, model, service, run.deployment, build);
  if (!replicas.ok()) {
    Error e = replicas.error();
    e.file = spec.path;
    e.field = "services." + service.name + "." + e.field;
    return e;
  }
  double rate = o.average_rate ? service.traffic.average_rps : service.traffic.peak_rps;
  ArrivalOptions arrivals = arrival_options(service, rate);
  Rng rng(o.seed);
  auto process = make_arrivals(arrivals, service, rng);
  SimOptions options;
  options.seed = o.seed;
  // A trace runs whole unless cut; a synthetic process has no end, so it stops at a count said below.
  const long long limit = o.requests > 0 ? o.requests : arrivals.process == "trace" ? (1LL << 62) : kSyntheticRequests;
  options.max_requests = limit;
  if (o.duration_s > 0) options.max_duration_s = o.duration_s;
  options.slo = service.slo;
  options.client_timeout_s = service.traffic.client_timeout_s;
  options.router = *parse_router(run.deployment.router);
  options.decode_router = decode_routing_as_deployed(options.router);  // as plan verifies and the router deploys
  options.router_instances = run.deployment.router_replicas.value_or(1);
  if (o.sample_steps) options.step_sample_every = 16;
  Progress progress("simulating " + service.name, "requests", static_cast<double>(std::min(limit, 1LL << 40)), o.show_progress);
  options.on_progress = [&](long long admitted) { progress.update(static_cast<double>(admitted)); };
  auto result = simulate(*process, replicas.value(), options);
  progress.finish();
  if (!result.ok()) {
    Error e = result.error();
    if (e.file.empty()) e.file = spec.path;
    return e;
  }
  run.result = std::move(result.value());
  const SimResult& r = run.result;
  run.arrivals = arrivals.process;
  run.rate_rps = arrivals.process == "trace" ? r.arrival_rate_rps : rate;
  run.meets = !service.slo_given || r.slo_attainment >= 0.99;
  if (run.llm && !r.step_samples.empty()) run.step_error = step_error_of(r, replicas.value());
  if (run.llm && !replicas.value().empty()) {
    // Disaggregated: the decode replicas hold the KV cache requests live in (a prefill replica's
    // holds each prompt until it is sent).
    const auto& all = replicas.value();
    const ReplicaConfig* decode = decode_replica(all);
    run.engine = !decode ? engine_text(all.front())
                         : engine_text(*decode, fmt::format(" ({} blocks per prefill replica)", all.front().kv_blocks));
  }
  run.assumptions = assumptions_of(catalog, model, service, run, replicas.value(), build, o.seed);
  price_deployment(catalog, spec, run);
  return run;
}

}  // namespace

bool SimulateResult::all_meet() const {
  return std::all_of(services.begin(), services.end(), [](const ServiceRun& s) { return s.meets; });
}

std::string deployment_text(const Deployment& d) {
  std::string groups;
  for (const auto& g : d.groups)
    groups += fmt::format("{}{} x {} tp{}{}{}", groups.empty() ? "" : " + ", g.count, g.accelerator, g.tensor_parallel,
                          g.pipeline_parallel > 1 ? fmt::format(" pp{} ({} micro-batches at once)", g.pipeline_parallel, g.pipeline_parallel) : "",
                          g.role == "both" ? "" : " for " + g.role);
  std::string text = fmt::format("{}, {} batching ({}), {}", groups, d.batching.empty() ? "default" : d.batching,
                                 d.max_batch > 0 ? fmt::format("max {}", d.max_batch) : "the default max: 256 for LLMs, 32 otherwise", d.router);
  if (d.disaggregation)
    text += fmt::format(", KV over {}{}{}", d.disaggregation->link,
                        d.disaggregation->gbps_per_gpu ? fmt::format(" at {:.4g} Gb/s per GPU", *d.disaggregation->gbps_per_gpu) : "",
                        d.disaggregation->pulled_between_steps() ? ", pulled by the decode replica between its steps" : "");
  return text;
}

Result<SimulateResult> simulate_spec(const Catalog& catalog, const Spec& spec, const SimulateSpecOptions& options) {
  if (auto bad_name = check_spec_names(spec, catalog, spec.path)) return *bad_name;
  SimulateResult result;
  result.spec_path = spec.path;
  result.seed = options.seed;
  result.requests_given = options.requests > 0;
  for (const auto& service : spec.services) {
    auto run = run_service(catalog, spec, service, options);
    if (!run.ok()) return run.error();
    result.services.push_back(std::move(run.value()));
  }
  return result;
}

}  // namespace gw
