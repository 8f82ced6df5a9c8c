// gpuwise fit MODEL: the VRAM a model needs per device, and where it fits in the catalog.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/context.h"
#include "catalog/precision_support.h"
#include "core/numbers.h"
#include "core/text.h"
#include "model/presets.h"
#include "plan/fit.h"

namespace gw {

namespace {

using nlohmann::json;

struct FitArgs {
  std::string model;
  bool train = false;
  std::string precision = "bf16";
  std::string kv_precision;
  long long batch = 1;
  long long context = 0;  // 0: min(4096, the model's maximum)
  int tp = 0, pp = 0, dp = 1, zero = 0;
  std::string optimizer = "adamw", recompute = "none", pricing = "on-demand";
  bool sequence_parallel = false, no_flash = false, offload = false;
  double overhead_gib = 1.0, usable_fraction = 0.90;
  int quant_group_size = 128;
  long long prefill_chunk = 8192;
  int max_devices = 64;
  std::vector<std::string> clouds, regions, accelerators;
  std::string geo;
};

Precision precision_or_fail(const std::string& text, const std::string& field) {
  auto precision = parse_precision(text);
  if (!precision) fail(field, "'" + text + "' is not one of " + precision_choices());
  return *precision;
}

json estimate_json(const MemoryEstimate& e) {
  json terms = json::array();
  for (const auto& term : e.terms) terms.push_back({{"name", term.name}, {"bytes", term.bytes}, {"formula", term.formula}});
  return {{"params", e.params},
          {"active_params", e.active_params},
          {"weights_bytes", e.weights_bytes},
          {"kv_cache_bytes_per_token", e.kv_cache_bytes_per_token},
          {"kv_cache_bytes", e.kv_cache_bytes},
          {"activation_bytes", e.activation_bytes},
          {"gradient_bytes", e.gradient_bytes},
          {"optimizer_bytes", e.optimizer_bytes},
          {"master_weight_bytes", e.master_weight_bytes},
          {"overhead_bytes", e.overhead_bytes},
          {"host_offload_bytes", e.host_offload_bytes},
          {"total_bytes_per_device", e.total_bytes_per_device},
          {"terms", terms},
          {"assumptions", e.assumptions}};
}

int run_fit(CommandContext& context, FitArgs args) {
  auto resolved = resolve_model(args.model);
  if (!resolved.ok()) throw InputError{resolved.error()};
  const ModelArch& arch = resolved.value();
  if (args.model.find('/') != std::string::npos) context.add_input(args.model);
  const Catalog& catalog = context.catalog();

  FitRequest request;
  request.mode = args.train ? FitMode::training : FitMode::inference;
  request.usable_fraction = args.usable_fraction;
  request.max_devices = args.max_devices;
  auto pricing = parse_pricing(args.pricing);
  if (!pricing) fail("--pricing", "'" + args.pricing + "' is not one of on-demand, spot, reserved-1y, reserved-3y");
  request.pricing = *pricing;
  request.offering_filter.clouds = split_lists(args.clouds);
  request.offering_filter.regions = split_lists(args.regions);
  request.offering_filter.geo = args.geo;
  request.accelerators = split_lists(args.accelerators);
  for (const auto& name : request.accelerators) {
    auto named = catalog.accelerator_named(name);
    if (!named.ok()) fail("--accelerator", named.error().message);
  }

  long long max_context = arch.max_position_embeddings > 0 ? arch.max_position_embeddings : (1LL << 24);
  long long context_tokens = args.context > 0 ? args.context : std::min<long long>(4096, max_context);
  if (arch.kind != ModelKind::generic && context_tokens > max_context)
    fail("--context", fmt::format("{} tokens exceed the model's max_position_embeddings ({})", context_tokens, max_context));
  request.parallelism_fixed = args.tp > 0 || args.pp > 0;
  int tp = std::max(1, args.tp), pp = std::max(1, args.pp);
  if (arch.kind != ModelKind::generic) {
    if (arch.num_heads % tp != 0)
      fail("--tp", fmt::format("{} attention heads are not divisible by tensor-parallel degree {}", arch.num_heads, tp));
    if (pp > arch.num_layers)
      fail("--pp", fmt::format("{} pipeline stages exceed the model's {} layers", pp, arch.num_layers));
  }

  Precision weights = precision_or_fail(args.precision, "--precision");
  if (args.train) {
    if (weights != Precision::bf16 && weights != Precision::fp16 && weights != Precision::fp32 && weights != Precision::tf32)
      fail("--precision", "training precision must be bf16, fp16, fp32 or tf32 (quantized training is not modelled)");
    auto& t = request.training;
    t.precision = weights;
    auto optimizer = parse_optimizer(args.optimizer);
    if (!optimizer) fail("--optimizer", "'" + args.optimizer + "' is not one of adamw, adam-8bit, sgd-momentum, sgd");
    t.optimizer = *optimizer;
    auto recompute = parse_recompute(args.recompute);
    if (!recompute) fail("--recompute", "'" + args.recompute + "' is not one of none, selective, full");
    t.recompute = *recompute;
    t.zero_stage = args.zero;
    t.data_parallel = args.dp;
    t.tensor_parallel = tp;
    t.pipeline_parallel = pp;
    t.sequence_parallel = args.sequence_parallel;
    t.flash_attention = !args.no_flash;
    t.micro_batch = args.batch;
    t.sequence_length = context_tokens;
    t.offload_optimizer = args.offload;
    t.overhead_gib = args.overhead_gib;
  } else {
    auto& i = request.inference;
    i.weight_precision = weights;
    i.kv_precision = args.kv_precision.empty() ? (weights == Precision::fp32 ? Precision::fp32 : Precision::bf16)
                                               : precision_or_fail(args.kv_precision, "--kv-precision");
    i.activation_precision = weights == Precision::fp32 ? Precision::fp32 : Precision::bf16;
    i.batch = args.batch;
    i.context = context_tokens;
    i.tensor_parallel = tp;
    i.pipeline_parallel = pp;
    i.quant_group_size = args.quant_group_size;
    i.prefill_chunk_tokens = args.prefill_chunk;
    i.overhead_gib = args.overhead_gib;
  }

  MemoryEstimate estimate = estimate_for(arch, request, tp, pp);
  auto fits = fit_accelerators(catalog, arch, request);
  int fitting = static_cast<int>(std::count_if(fits.begin(), fits.end(), [](const AcceleratorFit& f) { return f.fits; }));

  json inputs = {{"mode", args.train ? "training" : "inference"},
                 {"precision", args.precision},
                 {"batch", args.batch},
                 {"context", context_tokens},
                 {"tensor_parallel", tp},
                 {"pipeline_parallel", pp},
                 {"usable_fraction", args.usable_fraction},
                 {"overhead_gib", args.overhead_gib},
                 {"pricing", args.pricing}};
  if (args.train) {
    inputs["data_parallel"] = args.dp;
    inputs["zero_stage"] = args.zero;
    inputs["optimizer"] = args.optimizer;
    inputs["recompute"] = args.recompute;
    inputs["sequence_parallel"] = args.sequence_parallel;
    inputs["flash_attention"] = !args.no_flash;
    inputs["offload_optimizer"] = args.offload;
  } else {
    inputs["kv_precision"] = std::string(precision_name(request.inference.kv_precision));
  }

  if (context.options.format == "json") {
    json fit_list = json::array(), misses = json::array();
    for (const auto& f : fits) {
      json row = {{"accelerator", f.accelerator->name},
                  {"memory_gib", f.accelerator->memory_gib},
                  {"count", f.count},
                  {"tensor_parallel", f.tensor_parallel},
                  {"pipeline_parallel", f.pipeline_parallel},
                  {"data_parallel", f.data_parallel},
                  {"total_bytes_per_device", f.total_bytes_per_device},
                  {"usable_bytes_per_device", f.usable_bytes_per_device}};
      row["memory_reported_gib"] = f.accelerator->reported_gib();
      if (!f.fits) {
        row["reason"] = f.reason;
        row["precision_unsupported"] = f.precision_unsupported;
        row["near_miss"] = f.near_miss;
        if (f.near_miss) {
          row["short_by_bytes"] = f.short_by_bytes;
          row["would_fit_with"] = f.would_fit_with;
        }
        misses.push_back(row);
        continue;
      }
      row["offering"] = f.offering ? json(f.offering->instance_type) : json(nullptr);
      row["cloud"] = f.offering ? json(f.offering->cloud) : json(nullptr);
      row["region"] = f.offering ? json(f.offering->region) : json(nullptr);
      row["instances"] = f.instances;
      row["usd_per_hour"] = f.usd_per_hour ? json(*f.usd_per_hour) : json(nullptr);
      row["max_batch"] = f.max_batch;
      row["max_context"] = f.max_context;
      fit_list.push_back(row);
    }
    json document = estimate_json(estimate);
    document["model"] = {{"name", arch.name}, {"model_type", arch.model_type}, {"source", arch.source},
                         {"assumptions", arch.assumptions}};
    document["inputs"] = inputs;
    document["fits"] = fit_list;
    document["does_not_fit"] = misses;
    context.emit_json(document, "fit");
    return fitting > 0 ? 0 : 3;
  }

  std::string header = fmt::format("{} ({}): {} params{}, {} {}\n", arch.name, arch.model_type,
                                   format_count(estimate.params),
                                   estimate.active_params < estimate.params
                                       ? fmt::format(" ({} active per token)", format_count(estimate.active_params))
                                       : "",
                                   args.train ? "training" : "inference", args.precision);
  Table breakdown;
  breakdown.columns = {"term", "gib_per_device"};
  breakdown.align = {Align::left, Align::right};
  if (context.options.explain) breakdown.columns.push_back("formula");
  for (const auto& term : estimate.terms) {
    if (term.name == "kv_cache_bytes_per_token") continue;
    std::vector<std::string> row = {term.name, format_gib(term.bytes)};
    if (context.options.explain) row.push_back(term.formula);
    breakdown.add_row(row);
  }
  breakdown.add_row({"total_bytes_per_device", format_gib(estimate.total_bytes_per_device)});

  Table placements;
  placements.columns = {"accelerator", "vram_gib", "count", "layout", "need_gib", "usable_gib",
                        "cheapest_offering", "usd_per_hour", "max_batch", "max_context"};
  placements.align = {Align::left,  Align::right, Align::right, Align::left,  Align::right,
                      Align::right, Align::left,  Align::right, Align::right, Align::right};
  for (const auto& f : fits) {
    if (!f.fits && !context.options.explain) continue;
    std::string layout = fmt::format("tp{} pp{}{}", f.tensor_parallel, f.pipeline_parallel,
                                     args.train ? fmt::format(" dp{}", f.data_parallel) : "");
    std::string offering = f.offering ? fmt::format("{} {} {}{}", f.offering->cloud, f.offering->region,
                                                    f.offering->instance_type,
                                                    f.instances > 1 ? fmt::format(" x{}", f.instances) : "")
                                      : "-";
    placements.add_row({f.accelerator->name, format_number(f.accelerator->reported_gib(), 1),
                        f.fits ? std::to_string(f.count) : "-", f.fits ? layout : "does not fit",
                        format_gib(f.total_bytes_per_device), format_gib(f.usable_bytes_per_device),
                        f.fits ? offering : f.reason, f.usd_per_hour ? format_usd(*f.usd_per_hour) : "-",
                        f.fits ? format_number(static_cast<double>(f.max_batch), 0) : "-",
                        f.fits && f.max_context > 0 ? format_number(static_cast<double>(f.max_context), 0) : "-"});
  }

  // Precisions the hardware cannot run are said without --explain: they are never silently dropped.
  std::string precision_lines;
  std::vector<std::pair<std::string, std::string>> grouped;  // (refused/note: text, parts), first seen first
  for (const auto& f : fits) {
    if (f.precision_note.empty() || (!f.precision_unsupported && !f.fits)) continue;
    std::string key = (f.precision_unsupported ? "refused: " : "note: ") + f.precision_note;
    auto it = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) { return g.first == key; });
    if (it == grouped.end()) grouped.emplace_back(key, f.accelerator->name);
    else it->second += ", " + f.accelerator->name;
  }
  for (const auto& [text, parts] : grouped) precision_lines += "  " + text + " (" + parts + ")\n";
  // Near misses are said without --explain: a part short by a few percent is a choice to make.
  std::string near_lines;
  for (const auto& f : fits) {
    if (!f.near_miss) continue;
    near_lines += fmt::format("  {}: needs {} GiB, {} usable (short by {} GiB){}\n", f.accelerator->name,
                              format_gib(f.total_bytes_per_device), format_gib(f.usable_bytes_per_device),
                              format_gib(f.short_by_bytes),
                              f.would_fit_with.empty() ? std::string() : "; fits with " + join_list(f.would_fit_with, ", or "));
  }
  if (!near_lines.empty())
    precision_lines += fmt::format("\nNear misses (within {:.0f}% of usable memory):\n", kNearMissShare * 100) + near_lines;
  if (!precision_lines.empty())
    precision_lines = fmt::format("\n{} weights by architecture ({}):\n", args.precision, kPrecisionSupportSource) + precision_lines;
  std::string explain;
  if (context.options.explain) {
    explain += "\nAssumptions:\n";
    for (const auto& line : arch.assumptions) explain += "  - " + line + "\n";
    for (const auto& line : estimate.assumptions) explain += "  - " + line + "\n";
    explain += fmt::format("  - usable memory = {:.0f}% of what each device reports (--usable-fraction; vLLM's gpu_memory_utilization "
                           "default, https://docs.vllm.ai/en/stable/configuration/engine_args.html); the device's reported "
                           "memory is nvidia-smi's memory.total with ECC on where measured (catalog memory_mib), else the datasheet\n",
                           args.usable_fraction * 100);
    explain += "  - model: " + arch.source + "\n";
    if (arch.published_params > 0)
      explain += fmt::format("  - computed {} params; published {} ({})\n", format_count(estimate.params),
                             format_count(arch.published_params), arch.published_params_source);
    explain += "  - accelerator memory and offering prices: `gpuwise catalog accelerators --explain`, "
               "`gpuwise catalog offerings --explain`\n";
  }

  if (context.options.format == "html") {
    Document doc;
    doc.kind = "fit";
    doc.title = "Fit: " + std::string(gw::trim(header));
    doc.facts = {{"parameters", format_count(estimate.params)},
                 {"memory per device", format_gib(estimate.total_bytes_per_device) + " GiB"},
                 {"fits on", fmt::format("{} of {} accelerators", fitting, fits.size())}};
    // Memory per device by term, and for each accelerator what is needed against what is usable.
    nlohmann::json terms = nlohmann::json::array(), devices = nlohmann::json::array();
    for (const auto& term : estimate.terms)
      if (term.name != "kv_cache_bytes_per_token" && term.bytes > 0)
        terms.push_back({{"term", term.name}, {"gib", term.bytes / (1024.0 * 1024.0 * 1024.0)}});
    for (const auto& f : fits)
      devices.push_back({{"accelerator", f.accelerator->name}, {"need_gib", f.total_bytes_per_device / (1024.0 * 1024.0 * 1024.0)},
                         {"usable_gib", f.usable_bytes_per_device / (1024.0 * 1024.0 * 1024.0)},
                         {"devices", f.fits ? f.count : 0}, {"fits", f.fits},
                         {"fit", f.fits ? "fits" : f.near_miss ? "near miss" : "does not fit"}});
    Section memory;
    memory.heading = "Memory per device";
    memory.charts.push_back({"What takes the memory (GiB per device)",
                             {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
                              {"width", 520},
                              {"data", {{"values", terms}}},
                              {"mark", {{"type", "bar"}, {"tooltip", true}}},
                              {"encoding", {{"y", {{"field", "term"}, {"type", "nominal"}, {"sort", "-x"}, {"title", nullptr}}},
                                            {"x", {{"field", "gib"}, {"type", "quantitative"}, {"title", "GiB"}}}}}}});
    memory.tables.push_back(breakdown);
    Section where;
    where.heading = "Where it fits";
    where.charts.push_back({"Needed against usable memory per device, on the fewest devices that fit",
                            {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
                             {"width", 620},
                             {"data", {{"values", devices}}},
                             {"layer", nlohmann::json::array({
                                           {{"mark", {{"type", "bar"}, {"color", "#d9dee7"}, {"tooltip", true}}},
                                            {"encoding", {{"x", {{"field", "accelerator"}, {"type", "nominal"}, {"sort", nullptr}}},
                                                          {"y", {{"field", "usable_gib"}, {"type", "quantitative"}, {"title", "GiB per device"}}}}}},
                                           {{"mark", {{"type", "tick"}, {"thickness", 3}, {"tooltip", true}}},
                                            {"encoding", {{"x", {{"field", "accelerator"}, {"type", "nominal"}, {"sort", nullptr}}},
                                                          {"y", {{"field", "need_gib"}, {"type", "quantitative"}}},
                                                          {"color", {{"field", "fit"}, {"type", "nominal"}, {"title", nullptr},
                                                                     {"scale", {{"domain", {"fits", "near miss", "does not fit"}},
                                                                                {"range", {"#2458a6", "#b7791f", "#c2410c"}}}}}}}}},
                                       })}}});
    where.tables.push_back(placements);
    doc.sections = {memory, where};
    doc.assumptions = arch.assumptions;
    doc.assumptions.insert(doc.assumptions.end(), estimate.assumptions.begin(), estimate.assumptions.end());
    doc.assumptions.push_back("model: " + arch.source);
    for (const auto& [text, parts] : grouped) doc.assumptions.push_back(text + " (" + parts + "; " + kPrecisionSupportSource + ")");
    context.emit_document(doc);
  } else if (context.options.format == "md") {
    context.emit("# " + header + "\n## Memory per device\n\n" + render_markdown(breakdown) +
                 "\n## Where it fits\n\n" + render_markdown(placements) + precision_lines + explain);
  } else if (context.options.format == "csv") {
    context.emit(render_csv(placements));
  } else {
    std::string per_token = estimate.kv_cache_bytes_per_token > 0
                                ? fmt::format("KV cache per token: {} KiB\n",
                                              format_number(estimate.kv_cache_bytes_per_token / 1024.0, 1))
                                : "";
    context.emit(header + per_token + "\n" + render_text(breakdown) + "\n" +
                 fmt::format("Fits on {} of {} accelerators (fewest devices, cheapest {} offering):\n", fitting,
                             fits.size(), args.pricing) +
                 render_text(placements) + precision_lines + explain);
  }
  return fitting > 0 ? 0 : 3;
}

}  // namespace

void add_fit_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* fit = app.add_subcommand("fit", "VRAM needed per device, and the fewest devices of each accelerator that fit");
  auto args = std::make_shared<FitArgs>();
  fit->add_option("MODEL", args->model, "A preset name (gpuwise models) or a path to a Hugging Face config.json")->required();
  fit->add_flag("--train", args->train, "Training instead of inference");
  fit->add_option("--precision", args->precision, "Weights: fp32, bf16, fp16, fp8, int8, int4 (training: bf16, fp16, fp32)");
  fit->add_option("--kv-precision", args->kv_precision, "KV cache precision (default bf16)");
  fit->add_option("--batch", args->batch, "Concurrent sequences (training: micro-batch)")->check(CLI::Range(1LL, 1LL << 30));
  fit->add_option("--context", args->context, "Tokens per sequence (training: sequence length); default 4096")
      ->transform(count_with_suffix())
      ->check(CLI::Range(1LL, 1LL << 30));
  fit->add_option("--tp", args->tp, "Tensor-parallel degree (default: searched)")->check(CLI::Range(1, 1024));
  fit->add_option("--pp", args->pp, "Pipeline-parallel stages (default: searched)")->check(CLI::Range(1, 1024));
  fit->add_option("--dp", args->dp, "Data-parallel degree (training)")->check(CLI::Range(1, 1 << 20));
  fit->add_option("--zero", args->zero, "ZeRO stage 0-3 over the data-parallel degree (FSDP full shard = 3)")
      ->check(CLI::Range(0, 3));
  fit->add_option("--optimizer", args->optimizer, "adamw, adam-8bit, sgd-momentum, sgd");
  fit->add_option("--recompute", args->recompute, "Activation recomputation: none, selective, full");
  fit->add_flag("--sequence-parallel", args->sequence_parallel, "Megatron sequence parallelism with tp");
  fit->add_flag("--no-flash-attention", args->no_flash, "Store the attention matrix (eager attention)");
  fit->add_flag("--offload-optimizer", args->offload, "ZeRO-Offload: optimizer state and master weights in host RAM");
  fit->add_option("--overhead-gib", args->overhead_gib, "Runtime overhead per device (CUDA context, workspaces)")
      ->check(CLI::Range(0.0, 1024.0));
  fit->add_option("--usable-fraction", args->usable_fraction, "Share of device memory the model may use")
      ->check(CLI::Range(0.05, 1.0));
  fit->add_option("--quant-group-size", args->quant_group_size, "Weights per scale for int4/fp4")
      ->check(CLI::Range(8, 1 << 16));
  fit->add_option("--prefill-chunk", args->prefill_chunk, "Tokens per forward pass during prefill")
      ->check(CLI::Range(1LL, 1LL << 30));
  fit->add_option("--max-devices", args->max_devices, "Most devices per replica to consider")->check(CLI::Range(1, 65536));
  fit->add_option("--pricing", args->pricing, "on-demand, spot, reserved-1y, reserved-3y");
  fit->add_option("--cloud", args->clouds, "Offerings from these clouds only");
  fit->add_option("--region", args->regions, "Offerings in regions with these prefixes only");
  fit->add_option("--geo", args->geo, "Offerings in this geography only")->check(CLI::IsMember({"us", "europe", "asia"}));
  fit->add_option("--accelerator", args->accelerators, "Consider only these accelerators");
  fit->callback([&context, &action, args] {
    action = [&context, args] { return run_fit(context, *args); };
  });
}

}  // namespace gw
