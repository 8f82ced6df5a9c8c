// gpuwise train MODEL: how long a training run takes and what it costs, on one hardware choice
// or the cheapest that meets a deadline; spot with checkpoints simulated by Monte Carlo.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/context.h"
#include "plan/training_table.h"
#include "core/numbers.h"
#include "core/text.h"
#include "model/presets.h"
#include "perf/step_time.h"
#include "plan/training_plan.h"

namespace gw {

namespace {

using nlohmann::json;

std::string gigabytes(double bytes) { return fmt::format("{:.3g} GB", bytes / 1e9); }

struct TrainArgs {
  std::string model, accelerator, offering, precision = "bf16", pricing = "on-demand", spot_trace, calibration, recompute;
  int zero = -1;
  bool allow_tcp_clusters = false;
  bool cross_zone = false;
  double tokens = 0;
  int count = 0;
  double deadline_days = 0;
  long long sequence_length = 4096;
  double global_batch_tokens = 4.0 * 1024 * 1024;
  double preemptions_per_hour = -1;
  double storage_gbps = 10;
  double interval_min = 0;
  double provisioning_s = 300;
  int runs = 2000;
  uint64_t seed = 1;
  std::vector<std::string> clouds, regions;
};

json candidate_json(const TrainingCandidate& c) {
  const auto& e = c.estimate;
  json layout = {{"tensor_parallel", e.layout.tensor_parallel}, {"pipeline_parallel", e.layout.pipeline_parallel},
                 {"data_parallel", e.layout.data_parallel}, {"zero_stage", e.layout.zero_stage},
                 {"recompute", std::string(recompute_name(e.layout.recompute))}, {"micro_batch", e.layout.micro_batch},
                 {"micro_batches", e.layout.micro_batches}};
  return {{"accelerator", c.offering->accelerator},
          {"count", c.devices},
          {"cloud", c.offering->cloud},
          {"region", c.offering->region},
          {"instance_type", c.offering->instance_type},
          {"instances", c.instances},
          {"nodes", c.instances},
          {"pricing", std::string(pricing_name(c.pricing))},
          {"time_s", c.expected_time_s},
          {"time_without_interruptions_s", e.time_s},
          {"gpu_hours", c.expected_time_s / 3600.0 * c.devices},
          {"usd", c.usd},
          {"usd_per_hour", c.usd_per_hour},
          {"mfu", e.mfu},
          {"tokens_per_s", e.tokens_per_s},
          {"step_time_s", e.step_time_s},
          {"checkpoint_interval_s", c.checkpoint_interval_s},
          {"checkpoint_write_s", c.checkpoint_s},
          {"restart_s", c.restart_s},
          {"bound", e.bound},
          {"step", {{"compute_s", e.compute_s}, {"tensor_parallel_s", e.tp_comm_s}, {"context_parallel_s", e.cp_comm_s}, {"pipeline_sends_s", e.pp_comm_s},
                    {"bubble_s", e.bubble_s}, {"data_parallel_s", e.dp_comm_s}, {"data_parallel_exposed_s", e.dp_exposed_s},
                    {"optimizer_s", e.optimizer_s}, {"data_parallel_bytes_per_rank", e.dp_rank_bytes},
                    {"data_parallel_bytes_per_node", e.dp_node_bytes}, {"node_network_bytes_per_s", e.network_bytes_per_s}}},
          {"preemptions_per_hour", c.preemptions_per_hour},
          {"runner_up", e.runner_up},
          {"layout", layout},
          {"memory_bytes_per_device", e.memory_bytes_per_device},
          {"warnings", e.warnings}};
}

int run_train(CommandContext& context, const TrainArgs& args) {
  auto resolved = resolve_model(args.model);
  if (!resolved.ok()) throw InputError{resolved.error()};
  const ModelArch& arch = resolved.value();
  const Catalog& catalog = context.catalog();
  if (!(args.tokens >= 1)) fail("--tokens", "give the number of training tokens (at least 1)");
  if (args.deadline_days < 0) fail("--deadline-days", "a deadline must be in the future (a positive number of days)");
  if (args.preemptions_per_hour > 3600) fail("--preemption-rate", "more than one preemption per second is not a spot market");
  auto precision = parse_precision(args.precision);
  if (!precision || (*precision != Precision::bf16 && *precision != Precision::fp16 && *precision != Precision::fp32 &&
                     *precision != Precision::fp8))
    fail("--precision", "training precision must be bf16, fp16, fp32 or fp8");
  std::optional<Recompute> recompute;
  if (!args.recompute.empty()) {
    recompute = parse_recompute(args.recompute);
    if (!recompute) fail("--recompute", "'" + args.recompute + "' is not one of none, selective, full");
  }
  auto pricing = parse_pricing(args.pricing);
  if (!pricing) fail("--pricing", "'" + args.pricing + "' is not one of on-demand, spot, reserved-1y, reserved-3y");

  std::optional<Calibration> calibration = load_calibration_option(args.calibration);
  std::optional<SpotAvailability> trace;
  if (!args.spot_trace.empty()) {
    auto loaded = load_spot_trace(args.spot_trace);
    if (!loaded.ok()) throw InputError{loaded.error()};
    trace = loaded.value();
  }
  TrainingJob job;
  job.arch = &arch;
  job.tokens = args.tokens;
  job.sequence_length = args.sequence_length;
  job.global_batch_tokens = args.global_batch_tokens;
  job.precision = *precision;
  if (args.zero >= 0) job.zero_stage = args.zero;
  job.recompute = recompute;
  SpotSettings spot;
  if (args.preemptions_per_hour >= 0) {
    spot.preemptions_per_hour = args.preemptions_per_hour;
    spot.rate_assumed = false;
  }
  spot.trace = trace ? &*trace : nullptr;
  spot.storage_gbps = args.storage_gbps;
  spot.provisioning_s = args.provisioning_s;
  if (args.interval_min > 0) spot.interval_s = args.interval_min * 60;

  TrainingSearch search;
  search.clouds = args.clouds;
  search.regions = args.regions;
  search.calibration = calibration ? &*calibration : nullptr;
  search.interruptible = true;
  search.allow_unfabric_clusters = args.allow_tcp_clusters;
  search.cross_zone = args.cross_zone;
  search.pricing = {*pricing};
  if (args.deadline_days > 0) search.deadline_s = args.deadline_days * 86400;
  if (!args.accelerator.empty()) {
    auto named = catalog.accelerator_named(args.accelerator);
    if (!named.ok()) fail("--accelerator", named.error().message);
    const Accelerator* a = named.value();
    search.accelerators = {a};
    if (*precision == Precision::fp8 && !a->peak(Precision::fp8))
      fail("--precision", fmt::format("{} has no FP8 tensor cores: FP8 training needs Hopper, Ada, Blackwell, MI300 or newer "
                                      "(use bf16)", a->name));
  }
  if (args.count > 0) search.device_counts = {args.count};

  TrainingPlan plan;
  if (!args.offering.empty()) {
    // One named instance type: the cheapest region that has it.
    const Offering* chosen = nullptr;
    for (const auto& o : catalog.offerings())
      if (o.instance_type == args.offering && o.usd_per_hour(*pricing) &&
          (!chosen || *o.usd_per_hour(*pricing) < *chosen->usd_per_hour(*pricing)))
        chosen = &o;
    if (!chosen) fail("--offering", "no offering '" + args.offering + "' with a " + std::string(pricing_name(*pricing)) + " price");
    const Accelerator* a = catalog.find_accelerator(chosen->accelerator);
    if (*precision == Precision::fp8 && !a->peak(Precision::fp8))
      fail("--precision", fmt::format("{} ({}) has no FP8 tensor cores: FP8 training needs Hopper, Ada, Blackwell, MI300 or "
                                      "newer (use bf16)", args.offering, a->name));
    int devices = args.count > 0 ? args.count : chosen->accelerator_count;
    TrainingCandidate c;
    c.offering = chosen;
    c.devices = devices;
    c.instances = std::max(1, (devices + chosen->accelerator_count - 1) / chosen->accelerator_count);
    c.pricing = *pricing;
    c.usd_per_hour = *chosen->usd_per_hour(*pricing) * c.instances;
    TrainingHardware hw = hardware_of(*chosen, *a, devices);
    hw.cross_zone = args.cross_zone;
    c.estimate = estimate_training_run(job, hw, search.calibration);
    if (!c.estimate.feasible) {
      context.err() << "gpuwise: " << arch.name << " does not fit on " << devices << " x " << a->name << ": "
                    << c.estimate.reason << "\n";
      return 3;
    }
    price_candidate(c, spot);
    plan.feasible = !search.deadline_s || c.expected_time_s <= *search.deadline_s;
    if (!plan.feasible)
      plan.binding = fmt::format("deadline {:.1f} days cannot be met: this run takes {:.1f} days", args.deadline_days,
                                 c.expected_time_s / 86400);
    plan.best = c;
    plan.pareto = {c};
  } else {
    plan = plan_training(catalog, job, search, spot);
  }
  if (!plan.best) {
    context.err() << "gpuwise: " << plan.binding << "\n";
    return 3;
  }
  const TrainingCandidate& best = *plan.best;

  // Spot: Monte Carlo of completion time and cost for each policy, on the chosen hardware, or on
  // the best offering that has a spot price when the chosen one has none.
  json policies = json::array();
  json completion = json::array();  // each Monte Carlo run's hours, by policy, for the HTML chart
  std::string spot_text;
  std::optional<TrainingCandidate> spot_base;
  std::string spot_base_note;
  if (best.offering->usd_per_hour(Pricing::spot)) {
    spot_base = best;
  } else if (args.offering.empty()) {
    TrainingSearch spot_search = search;
    spot_search.pricing = {Pricing::spot};
    TrainingPlan spot_plan = plan_training(catalog, job, spot_search, spot);
    if (spot_plan.best) {
      spot_base = *spot_plan.best;
      spot_base_note = fmt::format(" (no spot price for {}: the cheapest run with one)", best.offering->instance_type);
    }
  }
  if (spot_base) {
    auto spot_price = spot_base->offering->usd_per_hour(Pricing::spot);
    auto on_demand_price = spot_base->offering->usd_per_hour(Pricing::on_demand);
    TrainingCandidate spot_candidate = *spot_base;
    spot_candidate.pricing = Pricing::spot;
    price_candidate(spot_candidate, spot);
    SpotRunInputs in;
    in.work_s = spot_base->estimate.time_s;
    in.checkpoint_s = spot_candidate.checkpoint_s;
    in.restart_s = spot_candidate.restart_s;
    in.interval_s = spot_candidate.checkpoint_interval_s;
    // A trace is one node's capacity: replayed as is for one node; for several, its rate x nodes.
    bool replay = spot.trace && spot_base->instances == 1;
    in.preemptions_per_hour = spot_candidate.preemptions_per_hour;
    in.trace = replay ? spot.trace : nullptr;
    in.spot_usd_per_hour = *spot_price * spot_base->instances;
    in.on_demand_usd_per_hour = on_demand_price ? *on_demand_price * spot_base->instances : 0;
    in.deadline_s = search.deadline_s;
    for (SpotPolicy policy : {SpotPolicy::on_demand_only, SpotPolicy::spot_only, SpotPolicy::deadline_aware}) {
      if (policy == SpotPolicy::deadline_aware && !in.deadline_s) continue;
      if (policy != SpotPolicy::spot_only && !on_demand_price) continue;
      // On-demand capacity is not preempted: it checkpoints at its own (hourly) interval.
      SpotRunInputs policy_in = in;
      if (policy == SpotPolicy::on_demand_only) {
        TrainingCandidate on_demand = *spot_base;
        on_demand.pricing = Pricing::on_demand;
        price_candidate(on_demand, spot);
        policy_in.interval_s = on_demand.checkpoint_interval_s;
      }
      SpotOutcome o = simulate_spot(policy_in, policy, args.runs, args.seed);
      for (double t : o.times_s) completion.push_back({{"policy", std::string(spot_policy_name(policy))}, {"hours", t / 3600}});
      policies.push_back({{"policy", std::string(spot_policy_name(policy))}, {"instance_type", spot_base->offering->instance_type},
                          {"nodes", spot_base->instances}, {"mean_time_s", o.mean_time_s},
                          {"p90_time_s", o.p90_time_s}, {"mean_usd", o.mean_usd}, {"p90_usd", o.p90_usd},
                          {"mean_preemptions", o.mean_preemptions}, {"deadline_met_fraction", o.deadline_met_fraction},
                          {"on_demand_share", o.on_demand_share}});
      spot_text += fmt::format("  {:<20} mean {:>7.1f} h (p90 {:>7.1f} h), {:>10} (p90 {:>10}), {:>5.1f} preemptions{}\n",
                               spot_policy_name(policy), o.mean_time_s / 3600, o.p90_time_s / 3600, format_usd(o.mean_usd),
                               format_usd(o.p90_usd), o.mean_preemptions,
                               in.deadline_s ? fmt::format(", deadline met {:.0f}%", o.deadline_met_fraction * 100) : "");
    }
    std::string rate_text =
        replay ? "replaying " + args.spot_trace
               : fmt::format("{:.3g} per hour for the job ({} node{} x {:.3g}{})", spot_candidate.preemptions_per_hour,
                             spot_base->instances, spot_base->instances == 1 ? "" : "s", node_preemptions_per_hour(spot),
                             spot.trace ? ", the trace's rate per node"
                                        : spot.rate_assumed ? " per node, assumed; --preemption-rate or --spot-trace" : " per node");
    spot_text = fmt::format("Spot on {} x {}{} with checkpoints every {:.0f} min (Daly; a write takes {:.0f} s, a restart {:.0f} s), "
                            "{} runs, preemptions: {}:\n",
                            spot_base->instances, spot_base->offering->instance_type, spot_base_note,
                            spot_candidate.checkpoint_interval_s / 60, spot_candidate.checkpoint_s, spot_candidate.restart_s,
                            args.runs, rate_text) +
                spot_text;
  } else {
    spot_text = fmt::format("No spot price for {} in {}{}: no spot comparison.\n", best.offering->instance_type,
                            best.offering->region, args.offering.empty() ? " nor for any run that meets the constraints" : "");
  }
  if (context.options.format == "json") {
    json document = candidate_json(best);
    json pareto = json::array();
    for (const auto& c : plan.pareto) pareto.push_back(candidate_json(c));
    document["model"] = arch.name;
    document["tokens"] = args.tokens;
    document["deadline_s"] = search.deadline_s ? json(*search.deadline_s) : json(nullptr);
    document["meets_deadline"] = plan.feasible;
    document["pareto"] = pareto;
    document["spot_policies"] = policies;
    document["candidates_evaluated"] = plan.candidates;
    document["candidates_skipped_no_fabric"] = plan.skipped_no_fabric;
    context.emit_json(document, "train");
  } else {
    const auto& e = best.estimate;
    bool html = context.options.format == "html" || context.options.format == "md";  // the report document
    std::string out = fmt::format("{}: {} tokens on {} x {} ({} {} {}, {} node{} of {}, {}{})\n", arch.name,
                                  format_count(args.tokens), best.devices, best.offering->accelerator, best.offering->cloud,
                                  best.offering->region, best.offering->instance_type, best.instances,
                                  best.instances == 1 ? "" : "s", best.offering->accelerator_count, pricing_name(best.pricing),
                                  best.offering->fabric.empty() ? "" : ", " + best.offering->fabric);
    out += fmt::format("  layout tp{} pp{} dp{}, ZeRO-{}, recompute {}, micro-batch {}; {:.0f} GiB per device\n",
                       e.layout.tensor_parallel, e.layout.pipeline_parallel, e.layout.data_parallel, e.layout.zero_stage,
                       recompute_name(e.layout.recompute), e.layout.micro_batch, e.memory_bytes_per_device / (1u << 30));
    std::string mfu_note;
    if (*precision == Precision::fp8) {
      const Accelerator* a = catalog.find_accelerator(best.offering->accelerator);
      double ratio = a ? compute_peak_tflops(*a, Precision::fp8) / compute_peak_tflops(*a, Precision::bf16) : 2.0;
      mfu_note = fmt::format(" of the bf16 peak ({:.0f}% of FP8 peak)", e.mfu / ratio * 100);
    }
    out += fmt::format("  {} tokens/s, MFU {:.0f}%{}, {}-bound; step {:.2f} s (compute {:.2f}, tp {:.2f}, pp sends {:.2f}, "
                       "bubble {:.2f}, exposed dp {:.2f} of {:.2f}, optimizer {:.2f})\n",
                       format_number(e.tokens_per_s, 0), e.mfu * 100, mfu_note, e.bound, e.step_time_s, e.compute_s, e.tp_comm_s,
                       e.pp_comm_s, e.bubble_s, e.dp_exposed_s, e.dp_comm_s, e.optimizer_s);
    out += fmt::format("  time {:.1f} days ({:.0f} h), {} GPU-hours, {} per run{}\n", best.expected_time_s / 86400,
                       best.expected_time_s / 3600, format_number(best.expected_time_s / 3600 * best.devices, 0),
                       format_usd(best.usd),
                       search.deadline_s ? fmt::format("; deadline {:.0f} days {}", args.deadline_days, plan.feasible ? "met" : "MISSED") : "");
    for (const auto& w : e.warnings) out += "  warning: " + w + "\n";
    if (plan.pareto.size() > 1) {
      Table table = training_frontier_table(plan.pareto);
      out += "Time-cost frontier:\n" + render_text(table);
    }
    out += spot_text;
    if (context.options.explain) {
      const Accelerator* accelerator = context.catalog().find_accelerator(best.offering->accelerator);
      out += "Assumptions:\n";
      out += "  - work per token: 6 x parameters FLOPs (forward and backward) plus attention; MFU counts no recomputation\n";
      if (accelerator) {
        auto peak = accelerator->peak(*precision);
        out += fmt::format("  - {} {} dense peak {} TFLOP/s, {:.0f} GiB, interconnect {} {}: {} ({})\n", accelerator->name,
                           args.precision, peak ? format_number(*peak, 0) : "-", accelerator->memory_gib, accelerator->interconnect,
                           accelerator->interconnect_gb_per_s ? format_number(*accelerator->interconnect_gb_per_s, 0) + " GB/s" : "",
                           accelerator->source, accelerator->as_of);
        out += fmt::format("  - large training GEMMs reach {:.0f}% of that peak at this width{}\n",
                           training_compute_efficiency(*accelerator, search.calibration, arch.hidden_size) * 100,
                           search.calibration ? " (calibrated)" : " (Megatron-LM's measurements; bench/training_measurements.csv)");
      }
      out += "  - step = compute + tensor-parallel collectives + pipeline sends + pipeline bubble + exposed data-parallel traffic "
             "+ optimizer step\n";
      out += fmt::format("  - data parallel: {} per rank per step (ZeRO-{}{}){}\n", gigabytes(e.dp_rank_bytes), e.layout.zero_stage,
                         e.layout.zero_stage >= 3 ? fmt::format(", gathered and reduced in each of {} micro-batches", e.layout.micro_batches) : "",
                         e.dp_node_bytes > 0
                             ? fmt::format("; {} through each node's NICs (every tensor- and pipeline-parallel shard of the node "
                                           "runs its own ring) at {}/s usable ({:.0f}% of {:.0f} Gbps{}{}): {:.2f} s, {:.2f} s of "
                                           "it not hidden behind the backward pass",
                                           gigabytes(e.dp_node_bytes), gigabytes(e.network_bytes_per_s),
                                           e.network_bytes_per_s * 8 / 1e9 / best.offering->network_gbps.value_or(100) * 100,
                                           best.offering->network_gbps.value_or(100),
                                           best.offering->fabric.empty() ? " TCP" : " " + best.offering->fabric,
                                           best.offering->network_gbps ? "" : ", network unknown: 100 Gbps assumed",
                                           e.dp_comm_s, e.dp_exposed_s)
                             : " inside one node over NVLink");
      out += "  - NVLink collectives: latency + bytes at the bus bandwidth NCCL reaches, fitted to measured all-reduce times "
             "(A100: 50 us, 55% of the link; H100: 30 us, 78%; Vidur 7d47513 profiles)\n";
      if (!e.runner_up.empty()) out += "  - runner-up layout: " + e.runner_up + "\n";
      if (best.instances > 1)
        out += fmt::format("  - spot: a synchronous job stops when any of its {} nodes is preempted (nodes x the per-node rate); "
                           "a restart adds {:.0f} s of job start per doubling of nodes (assumed)\n",
                           best.instances, spot.start_s_per_doubling);
      if (plan.skipped_no_fabric > 0)
        out += fmt::format("  - {} multi-node candidates skipped: their instances share no EFA/InfiniBand-class fabric "
                           "(--allow-tcp-clusters to include them)\n", plan.skipped_no_fabric);
      out += "  - spot: preemptions as a Poisson process (or the replayed trace); checkpoints every interval (Young/Daly's "
             "optimum by default), each preemption loses the work since the last one plus the restart\n";
      out += fmt::format("  - price: {} ({})\n", best.offering->source, best.offering->as_of);
    }
    if (html) {
      Document doc;
      doc.kind = "train";
      doc.title = fmt::format("Training {} on {} tokens", arch.name, format_count(args.tokens));
      doc.facts = {{"best", fmt::format("{} x {} ({})", best.devices, best.offering->accelerator, pricing_name(best.pricing))},
                   {"time per run", fmt::format("{:.1f} days", best.expected_time_s / 86400)},
                   {"cost per run", format_usd(best.usd)},
                   {"MFU", fmt::format("{:.0f}%", e.mfu * 100)}};
      Section section;
      section.heading = "The run";
      for (auto& line : split(out, '\n'))
        if (!gw::trim(line).empty() && line.find("  - ") != 0 && line != "Assumptions:") section.paragraphs.emplace_back(gw::trim(line));
      if (!completion.empty())
        section.charts.push_back({"Completion time of each simulated run, by spot policy",
                                  {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
                                   {"width", 560},
                                   {"height", 90},
                                   {"data", {{"values", completion}}},
                                   {"mark", {{"type", "bar"}, {"tooltip", true}}},
                                   {"encoding", {{"x", {{"field", "hours"}, {"type", "quantitative"}, {"bin", {{"maxbins", 40}}}, {"title", "hours"}}},
                                                 {"y", {{"aggregate", "count"}, {"type", "quantitative"}, {"title", "runs"}}},
                                                 {"row", {{"field", "policy"}, {"type", "nominal"}, {"title", nullptr}}}}},
                                   {"resolve", {{"scale", {{"y", "independent"}}}}}}});
      section.tables.push_back(training_frontier_table(plan.pareto));
      doc.sections.push_back(section);
      context.emit_document(doc);
    } else {
      context.emit(out);
    }
  }
  if (!plan.feasible) {
    context.err() << "gpuwise: " << plan.binding << "\n";
    return 3;
  }
  return 0;
}

}  // namespace

void add_train_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* train = app.add_subcommand("train", "Time and cost of a training run, and spot with checkpoints");
  auto args = std::make_shared<TrainArgs>();
  train->add_option("MODEL", args->model, "Preset name or config.json")->required();
  train->add_option("--tokens", args->tokens, "Training tokens")
      ->transform(count_with_suffix())->required();
  train->add_option("--accelerator", args->accelerator, "Accelerator (default: search all)");
  train->add_option("--count", args->count, "Devices (default: search 1, 2, 4, ... 4096)")->check(CLI::Range(1, 1 << 20));
  train->add_option("--offering", args->offering, "An instance type (its cheapest region)");
  train->add_option("--precision", args->precision, "bf16, fp16, fp32 or fp8 (Transformer Engine; Hopper and newer)");
  train->add_option("--zero", args->zero, "Pin the ZeRO stage (0-3; default: searched)")->check(CLI::Range(0, 3));
  train->add_option("--recompute", args->recompute, "Pin activation recomputation: none, selective, full (default: searched)");
  train->add_flag("--allow-tcp-clusters", args->allow_tcp_clusters,
                  "Consider multi-node jobs on instances without an EFA/InfiniBand-class fabric");
  train->add_flag("--cross-zone", args->cross_zone,
                  "Nodes spread over zones (no placement group): half the network bandwidth, traffic billed");
  train->add_option("--pricing", args->pricing, "on-demand, spot, reserved-1y, reserved-3y");
  train->add_option("--deadline-days", args->deadline_days, "Finish within this many days (exit 3 when impossible)");
  train->add_option("--sequence-length", args->sequence_length, "Tokens per sequence")->check(CLI::Range(1LL, 1LL << 24));
  train->add_option("--global-batch-tokens", args->global_batch_tokens, "Tokens per optimizer step")->check(CLI::Range(1.0, 1e12));
  train->add_option("--preemption-rate", args->preemptions_per_hour, "Spot preemptions per hour (exponential model)");
  train->add_option("--spot-trace", args->spot_trace, "Replay a spot availability trace (skypilot spot-traces JSON)");
  train->add_option("--checkpoint-storage-gbps", args->storage_gbps, "Checkpoint bandwidth per node (Gbps)")
      ->check(CLI::Range(0.001, 1e6));
  train->add_option("--checkpoint-interval-min", args->interval_min, "Checkpoint interval (default: Daly's optimum)")
      ->check(CLI::Range(0.0, 1e6));
  train->add_option("--provisioning-s", args->provisioning_s, "Time to get capacity back and restart")->check(CLI::Range(0.0, 1e7));
  train->add_option("--runs", args->runs, "Monte Carlo runs")->check(CLI::Range(1, 1000000));
  train->add_option("--seed", args->seed, "Monte Carlo seed");
  train->add_option("--cloud", args->clouds, "Offerings from these clouds only");
  train->add_option("--region", args->regions, "Offerings in regions with these prefixes only");
  train->add_option("--calibration", args->calibration, "Efficiency factors from `gpuwise calibrate`");
  train->callback([&context, &action, args] { action = [&context, args] { return run_train(context, *args); }; });
}

}  // namespace gw
