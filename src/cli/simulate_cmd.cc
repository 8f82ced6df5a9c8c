// gpuwise simulate SPEC: runs each service's deployment (or its plan's best) through the
// discrete-event simulator and reports latency percentiles, throughput and SLO attainment.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/context.h"
#include "plan/spec_names.h"
#include "report/progress.h"
#include "plan/verify.h"
#include "perf/step_error.h"

namespace gw {

namespace {

using nlohmann::json;

struct SimulateArgs {
  std::string spec, calibration, rate = "peak";
  uint64_t seed = 1;
  long long requests = 0;  // 0: the whole trace, or kSyntheticRequests of a synthetic process
  double duration_s = 0;
  bool fail_on_slo = false;
};

constexpr long long kSyntheticRequests = 100000;

json summary_json(const LogHistogram& h) {
  return {{"mean", h.mean()}, {"p50", h.quantile(0.5)}, {"p90", h.quantile(0.9)}, {"p99", h.quantile(0.99)},
          {"p999", h.quantile(0.999)}, {"max", h.max()}, {"count", h.count()}};
}

std::string deployment_text(const Deployment& d) {
  std::string groups;
  for (const auto& g : d.groups) groups += fmt::format("{}{} x {} tp{}", groups.empty() ? "" : " + ", g.count, g.accelerator, g.tensor_parallel);
  return fmt::format("{}, {} batching (max {}), {}", groups, d.batching.empty() ? "default" : d.batching, d.max_batch, d.router);
}

// The engine an LLM replica mirrors and its memory: what a reader needs to trust the run.
std::string engine_text(const ReplicaConfig& c) {
  long long tokens = c.kv_blocks * c.block_tokens;
  return fmt::format("{} scheduler, {} preemption, token budget {}, KV cache {} blocks of {} ({} tokens), watermark {:.0f}%",
                     llm_scheduler_name(c.scheduler), preemption_name(c.preemption), c.token_budget, c.kv_blocks,
                     c.block_tokens, tokens, c.watermark_fraction * 100);
}

std::string verdict_text(const SimResult& r) {
  std::string end = fmt::format("{} requests in the system at the last arrival, drained {:.0f} s later", r.backlog_at_last_arrival,
                                r.drain_s);
  if (r.overloaded && r.backlog_growth > 0.05)
    return fmt::format("OVERLOADED: requests in the system grew by {:.0f}% of arrivals over the last quarter of the arrivals; {} "
                       "(this deployment does not keep up with this traffic)",
                       r.backlog_growth * 100, end);
  if (r.overloaded)
    return fmt::format("OVERLOADED earlier in the run and never caught up: {} (this deployment does not keep up with this traffic)", end);
  return fmt::format("stable: requests in the system changed by {:+.1f}% of arrivals over the last quarter of the arrivals; {}",
                     r.backlog_growth * 100, end);
}

// Latency CDFs from the simulator's histograms (end to end, and TTFT/TPOT for LLMs): 1% steps,
// finer in the tail where SLOs live.
Chart latency_cdf(const SimResult& r, bool llm) {
  json values = json::array();
  std::vector<double> qs;
  for (int i = 1; i < 100; ++i) qs.push_back(i / 100.0);
  for (double q : {0.995, 0.999}) qs.push_back(q);
  auto add = [&](const char* metric, const LogHistogram& h) {
    if (h.count() == 0) return;
    for (double q : qs) values.push_back({{"metric", metric}, {"latency_s", h.quantile(q)}, {"fraction", q}});
  };
  add("latency", r.latency);
  if (llm) {
    add("ttft", r.ttft);
    add("tpot", r.tpot);
  }
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"width", 560},
               {"height", 280},
               {"data", {{"values", values}}},
               {"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"tooltip", true}}},
               {"encoding", {{"x", {{"field", "latency_s"}, {"type", "quantitative"}, {"title", "seconds"}, {"scale", {{"type", "log"}}}}},
                             {"y", {{"field", "fraction"}, {"type", "quantitative"}, {"title", "fraction of requests"}, {"axis", {{"format", "%"}}}}},
                             {"color", {{"field", "metric"}, {"type", "nominal"}, {"title", nullptr}}}}}};
  return {"Latency CDF", spec};
}

// Requests waiting and in flight over the run.
Chart queue_over_time(const SimResult& r) {
  json values = json::array();
  for (const auto& t : r.timeseries) {
    values.push_back({{"time_s", t.time_s}, {"count", t.queue_depth}, {"what", "waiting"}});
    values.push_back({{"time_s", t.time_s}, {"count", t.in_flight}, {"what", "in flight"}});
  }
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"width", 560},
               {"height", 220},
               {"data", {{"values", values}}},
               {"mark", {{"type", "line"}, {"tooltip", true}}},
               {"encoding", {{"x", {{"field", "time_s"}, {"type", "quantitative"}, {"title", "seconds"}}},
                             {"y", {{"field", "count"}, {"type", "quantitative"}, {"title", "requests"}}},
                             {"color", {{"field", "what"}, {"type", "nominal"}, {"title", nullptr}}}}}};
  return {"Requests waiting and in flight", spec};
}

int run_simulate(CommandContext& context, const SimulateArgs& args) {
  auto spec = load_spec(args.spec);
  if (!spec.ok()) throw InputError{spec.error()};
  context.add_input(args.spec);
  const Catalog& catalog = context.catalog();
  if (auto bad_name = check_spec_names(spec.value(), catalog, args.spec)) throw InputError{*bad_name};
  std::optional<Calibration> calibration = load_calibration_option(args.calibration);
  ReplicaBuildOptions build;
  build.calibration = calibration ? &*calibration : nullptr;
  json services = json::array();
  Document doc;
  doc.kind = "simulate";
  doc.title = "Simulation: " + args.spec;
  std::string text;
  bool all_meet = true;
  for (const auto& service : spec.value().services) {
    const ModelSpec& model = spec.value().models.at(service.model_key);
    bool llm = model.arch.kind == ModelKind::decoder;
    Deployment deployment;
    std::string origin = "spec";
    if (!service.deployment && !service.slo_given)
      throw InputError{Error{args.spec, service.line, "services." + service.name + ".slo",
                             "required to plan a deployment to simulate (or give services." + service.name + ".deployment)"}};
    if (service.deployment) {
      deployment = *service.deployment;
    } else {
      PlannerOptions planner;
      planner.calibration = build.calibration;
      ServicePlan plan = plan_service(catalog, spec.value(), service, planner);
      VerifyOptions verify;
      verify.build = build;
      verify.seed = args.seed;
      verify_plan(catalog, spec.value(), service, plan, verify);
      if (!plan.best || !plan.feasible)
        throw InputError{Error{args.spec, service.line, "services." + service.name + ".deployment",
                               "no deployment given and none can be planned: " + plan.binding}};
      deployment = deployment_of(*plan.best, llm, planner.prefill_chunk_tokens);
      origin = "the plan's best";
    }
    auto replicas = build_replicas(catalog, model, service, deployment, build);
    if (!replicas.ok()) {
      Error e = replicas.error();
      e.file = args.spec;
      e.field = "services." + service.name + "." + e.field;
      throw InputError{e};
    }
    double rate = args.rate == "average" ? service.traffic.average_rps : service.traffic.peak_rps;
    ArrivalOptions arrivals = arrival_options(service, rate);
    Rng rng(args.seed);
    auto process = make_arrivals(arrivals, service, rng);
    SimOptions options;
    options.seed = args.seed;
    // A trace runs whole unless cut; a synthetic process has no end, so it stops at a count said below.
    const long long limit = args.requests > 0 ? args.requests : arrivals.process == "trace" ? (1LL << 62) : kSyntheticRequests;
    options.max_requests = limit;
    if (args.duration_s > 0) options.max_duration_s = args.duration_s;
    options.slo = service.slo;
    options.router = *parse_router(deployment.router);
    // --explain: every 16th step's counts, to say what the step time's error rests on.
    if (context.options.explain) options.step_sample_every = 16;
    Progress progress("simulating " + service.name, "requests", static_cast<double>(std::min(limit, 1LL << 40)), context.progress_enabled());
    options.on_progress = [&](long long admitted) { progress.update(static_cast<double>(admitted)); };
    auto result = simulate(*process, replicas.value(), options);
    progress.finish();
    if (!result.ok()) {
      Error e = result.error();
      if (e.file.empty()) e.file = args.spec;
      throw InputError{e};
    }
    const SimResult& r = result.value();
    // What the step times' error rests on (--explain, layers by operator): the sampled steps' parts.
    std::optional<StepErrorSummary> step_error;
    if (llm && !r.step_samples.empty()) {
      std::vector<StepParts> parts;
      for (const auto& sample : r.step_samples) {
        const auto* model = dynamic_cast<const LlmStepModel*>(replicas.value()[static_cast<size_t>(sample.replica)].llm.get());
        if (model && model->by_operator())
          parts.push_back(model->parts(sample.decode_sequences, sample.context_sum, sample.prefill_tokens,
                                       sample.prefill_attended, sample.sampled_sequences));
      }
      if (!parts.empty()) step_error = summarize_step_errors(parts);
    }
    json replica_list = json::array();
    for (const auto& s : r.replicas) {
      json sizes = json::object();
      for (size_t b = 0; b < s.batch_sizes.size(); ++b)
        if (s.batch_sizes[b] > 0) sizes[std::to_string(b)] = s.batch_sizes[b];
      json replica = {{"name", s.name}, {"requests", s.requests}, {"steps", s.steps},
                      {"busy_fraction", s.busy_fraction}, {"preemptions", s.preemptions},
                      {"mean_batch", s.mean_batch}, {"batch_size_distribution", sizes}};
      if (s.kv_blocks > 0) {
        replica["kv_capacity_blocks"] = s.kv_blocks;
        replica["kv_block_tokens"] = s.block_tokens;
        replica["kv_capacity_tokens"] = s.kv_blocks * s.block_tokens;
        replica["mean_kv_used_fraction"] = s.mean_kv_used_fraction;
        replica["recomputed_tokens"] = s.recomputed_tokens;
        replica["swapped_tokens"] = s.swapped_tokens;
      }
      replica_list.push_back(replica);
    }
    json series = json::array();
    for (const auto& t : r.timeseries)
      series.push_back({{"time_s", t.time_s}, {"queue_depth", t.queue_depth}, {"in_flight", t.in_flight},
                        {"kv_used_fraction", t.kv_used_fraction}});
    bool meets = !service.slo_given || r.slo_attainment >= 0.99;
    all_meet = all_meet && meets;
    json j = {{"name", service.name},
              {"deployment", deployment_text(deployment)},
              {"deployment_from", origin},
              {"arrivals", arrivals.process},
              {"rate_rps", arrivals.process == "trace" ? r.arrival_rate_rps : rate},
              {"seed", args.seed},
              {"requests", r.requests},
              {"admitted", r.admitted},
              {"stopped_at_request_limit", r.stopped_at_request_limit},
              {"rejected", r.rejected},
              {"verdict", r.overloaded ? "overloaded" : "stable"},
              {"backlog_growth", r.backlog_growth},
              {"backlog_at_last_arrival", r.backlog_at_last_arrival},
              {"drain_s", r.drain_s},
              {"recomputed_tokens", r.recomputed_tokens},
              {"swapped_tokens", r.swapped_tokens},
              {"duration_s", r.duration_s},
              {"throughput_rps", r.throughput_rps},
              {"goodput_rps", r.goodput_rps},
              {"slo_attainment", service.slo_given ? json(r.slo_attainment) : json(nullptr)},
              {"slo_met", service.slo_given ? json(meets) : json(nullptr)},
              {"mean_in_system", r.mean_in_system},
              {"preemptions", r.preemptions},
              {"latency_s", summary_json(r.latency)},
              {"wait_s", summary_json(r.wait)},
              {"replicas", replica_list},
              {"timeseries", series}};
    if (llm) {
      j["ttft_s"] = summary_json(r.ttft);
      j["tpot_s"] = summary_json(r.tpot);
    }
    if (step_error) {
      json parts = json::object();
      for (const auto& [name, share] : step_error->mean_contribution) parts[name] = share;
      j["step_error"] = {{"sampled_steps", step_error->steps}, {"mean", step_error->mean_error},
                         {"p99", step_error->p99_error}, {"dominant", step_error->dominant},
                         {"mean_contribution", parts}, {"unmeasured_share", step_error->mean_unmeasured_share}};
    }
    services.push_back(j);

    const std::string slo_text =
        service.slo_given ? fmt::format("goodput {:.3g}/s, SLO attainment {:.2f}%{}", r.goodput_rps, r.slo_attainment * 100,
                                        meets ? "" : " (misses)")
                          : std::string("no SLO given");
    // What was simulated, said: a cut trace or a synthetic count is never silent.
    std::string scope = r.stopped_at_request_limit
                            ? fmt::format(", stopped after {} arrivals ({}),", r.admitted,
                                          args.requests > 0 ? "--requests" : "a synthetic process has no end; --requests sets the count")
                            : (arrivals.process == "trace" ? ", the whole trace," : "");
    std::vector<std::string> lines = {
        fmt::format("{} requests{} ({} arrivals at {:.3g}/s, seed {}), {:.1f} s simulated: throughput {:.3g}/s, {}{}",
                    r.requests, scope, arrivals.process, arrivals.process == "trace" ? r.arrival_rate_rps : rate, args.seed,
                    r.duration_s, r.throughput_rps, slo_text,
                    r.rejected ? fmt::format(", {} rejected (longer than the KV cache can ever hold)", r.rejected) : ""),
        verdict_text(r)};
    if (llm && !replicas.value().empty()) {
      lines.push_back("engine: " + engine_text(replicas.value().front()));
      if (r.preemptions > 0)
        lines.push_back(fmt::format("{} preemptions: {} KV tokens recomputed, {} swapped to host", r.preemptions,
                                    r.recomputed_tokens, r.swapped_tokens));
    }
    text += fmt::format("{}: {} ({})\n", service.name, deployment_text(deployment), origin);
    for (const auto& l : lines) text += "  " + l + "\n";
    Table table;
    table.columns = {"metric", "mean", "p50", "p90", "p99", "p99.9"};
    table.align = {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right};
    auto row = [&](const char* name, const LogHistogram& h, double scale, int decimals) {
      table.add_row({name, format_number(h.mean() * scale, decimals), format_number(h.quantile(0.5) * scale, decimals),
                     format_number(h.quantile(0.9) * scale, decimals), format_number(h.quantile(0.99) * scale, decimals),
                     format_number(h.quantile(0.999) * scale, decimals)});
    };
    row("latency_ms", r.latency, 1e3, 1);
    row("wait_ms", r.wait, 1e3, 1);
    if (llm) {
      row("ttft_ms", r.ttft, 1e3, 1);
      row("tpot_ms", r.tpot, 1e3, 2);
    }
    text += render_text(table);
    Section section;
    section.heading = fmt::format("{}: {} ({})", service.name, deployment_text(deployment), origin);
    for (const auto& l : lines) section.paragraphs.push_back(l + ".");
    section.charts.push_back(latency_cdf(r, llm));
    section.charts.push_back(queue_over_time(r));
    section.tables.push_back(table);
    Table replicas_table;
    replicas_table.columns = {"replica", "requests", "busy (time in steps)", "steps", "mean batch", "KV used (mean)", "preemptions"};
    replicas_table.align = {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right};
    for (const auto& s : r.replicas) {
      // Busy is GPU time in steps (what nvidia-smi's utilization reads); a continuous batcher
      // with one sequence decoding is "busy", so the mean batch and KV use say how full it is.
      std::string kv = s.kv_blocks > 0 ? fmt::format("{:.0f}%", s.mean_kv_used_fraction * 100) : "-";
      text += fmt::format("  replica {}: {} requests, {:.0f}% of the time in steps, {} steps of {:.1f} on average{}{}\n", s.name,
                          s.requests, s.busy_fraction * 100, s.steps, s.mean_batch,
                          s.kv_blocks > 0 ? ", KV cache " + kv + " used on average" : "",
                          s.preemptions ? fmt::format(", {} preemptions", s.preemptions) : "");
      replicas_table.add_row({s.name, format_number(static_cast<double>(s.requests), 0), fmt::format("{:.0f}%", s.busy_fraction * 100),
                              format_number(static_cast<double>(s.steps), 0), fmt::format("{:.1f}", s.mean_batch), kv,
                              std::to_string(s.preemptions)});
    }
    section.tables.push_back(replicas_table);
    std::vector<std::string> assumptions = {
        fmt::format("arrivals: {} at {:.3g} requests/s, seed {} (the same seed gives the same run)", arrivals.process,
                    arrivals.process == "trace" ? r.arrival_rate_rps : rate, args.seed),
        "router: " + deployment.router + "; batching: " + (deployment.batching.empty() ? "the default for the model" : deployment.batching),
        "latency percentiles from log-bucket histograms (1% buckets, within 0.5% of exact); mean exact"};
    for (const auto& group : deployment.groups) {
      const Accelerator* a = context.catalog().find_accelerator(group.accelerator);
      if (!a) continue;
      if (model.measured && context.catalog().find_accelerator(model.measured->accelerator) == a)
        assumptions.push_back(fmt::format("service times on {}: measured by batch size in the spec ({} times around the mean)",
                                          a->name, model.measured->distribution));
      else
        assumptions.push_back(fmt::format("step times on {}: the roofline model, {}", a->name, efficiency_for(*a, build.calibration).source));
    }
    if (llm && !replicas.value().empty()) {
      const ReplicaConfig& c = replicas.value().front();
      assumptions.push_back(fmt::format("scheduler {}: {}", llm_scheduler_name(c.scheduler), llm_scheduler_source(c.scheduler)));
      assumptions.push_back(fmt::format("KV cache: {} blocks of {} tokens per replica, from {:.0f}% of device memory less weights, "
                                        "activations and {:.1f} GiB runtime overhead (deployment.gpu_memory_utilization, overhead_gib)",
                                        c.kv_blocks, c.block_tokens,
                                        deployment.gpu_memory_utilization.value_or(build.usable_fraction) * 100,
                                        deployment.overhead_gib.value_or(build.overhead_gib)));
      assumptions.push_back("verdict: overloaded when requests in the system grow by more than 5% of the arrivals over the "
                            "last quarter of the arrivals (and beyond 3 standard deviations of a stable queue), or when over 5% "
                            "of the requests are still in the system at the last arrival and take over 5% of the arrival span "
                            "to drain");
    }
    if (step_error) {
      std::string by_part;
      for (const auto& [name, share] : step_error->mean_contribution)
        by_part += fmt::format("{}{} {:.2f}%", by_part.empty() ? "" : ", ", name, 100 * share);
      assumptions.push_back(fmt::format(
          "step-time error contribution over {} sampled steps (each part's share of the step x its held-out median error "
          "against Vidur's profiles): mean {:.1f}%, p99 {:.1f}%; {} dominates ({}); {:.0f}% of step time on average "
          "(collectives, launches, KV writes) has no measured error and is not counted",
          step_error->steps, 100 * step_error->mean_error, 100 * step_error->p99_error, step_error->dominant, by_part,
          100 * step_error->mean_unmeasured_share));
    }
    if (context.options.explain) {
      text += "  assumptions:\n";
      for (const auto& a : assumptions) text += "    - " + a + "\n";
    }
    doc.assumptions.insert(doc.assumptions.end(), assumptions.begin(), assumptions.end());
    doc.sections.push_back(section);
    text += "\n";
  }
  if (context.options.format == "json") {
    context.emit_json({{"spec", args.spec}, {"services", services}}, "simulate");
  } else if (context.options.format == "html" || context.options.format == "md") {
    context.emit_document(doc);
  } else {
    context.emit(text);
  }
  // The simulation ran: exit 0 whatever it found, unless a pipeline asks to fail on a missed SLO.
  return args.fail_on_slo && !all_meet ? 3 : 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* simulate_command = app.add_subcommand("simulate", "Simulate each service's deployment (or its plan's best)");
  auto args = std::make_shared<SimulateArgs>();
  simulate_command->add_option("SPEC", args->spec, "Workload spec (YAML) with deployments")->required();
  simulate_command->add_option("--seed", args->seed, "Random seed (same seed, same output)");
  simulate_command->add_option("--requests", args->requests,
                               "Stop admitting after N requests (default: the whole trace; 100000 of a synthetic process)")
      ->check(CLI::Range(1LL, 1000000000LL));
  simulate_command->add_option("--duration", args->duration_s, "Stop admitting after this many simulated seconds")
      ->check(CLI::Range(0.0, 1e9));
  simulate_command->add_option("--rate", args->rate, "Rate for rps-driven traffic: peak or average")
      ->check(CLI::IsMember({"peak", "average"}));
  simulate_command->add_option("--calibration", args->calibration, "Efficiency factors from `gpuwise calibrate`");
  simulate_command->add_flag("--fail-on-slo", args->fail_on_slo, "Exit 3 when a service misses its SLO (for pipelines)");
  simulate_command->callback([&context, &action, args] {
    action = [&context, args] { return run_simulate(context, *args); };
  });
}

}  // namespace gw
