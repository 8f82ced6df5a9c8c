#include "plan/fit_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "catalog/precision_support.h"
#include "core/numbers.h"
#include "core/text.h"
#include "report/json_document.h"

namespace gw {

namespace {

using nlohmann::json;

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

json inputs_json(const FitResult& r) {
  const FitOptions& o = r.options;
  json inputs = {{"mode", o.train ? "training" : "inference"},
                 {"precision", o.precision},
                 {"batch", o.batch},
                 {"context", r.context_tokens},
                 {"tensor_parallel", r.tensor_parallel},
                 {"pipeline_parallel", r.pipeline_parallel},
                 {"usable_fraction", o.usable_fraction},
                 {"overhead_gib", o.overhead_gib},
                 {"pricing", o.pricing}};
  if (o.train) {
    inputs["data_parallel"] = o.dp;
    inputs["zero_stage"] = o.zero;
    inputs["optimizer"] = o.optimizer;
    inputs["recompute"] = o.recompute;
    inputs["sequence_parallel"] = o.sequence_parallel;
    inputs["flash_attention"] = !o.no_flash;
    inputs["offload_optimizer"] = o.offload;
  } else {
    inputs["kv_precision"] = std::string(precision_name(r.request.inference.kv_precision));
  }
  return inputs;
}

}  // namespace

nlohmann::json to_json(const FitResult& r) {
  json inputs = inputs_json(r);
  json fit_list = json::array(), misses = json::array();
  for (const auto& f : r.fits) {
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
  json document = estimate_json(r.estimate);
  document["model"] = {{"name", r.arch.name}, {"model_type", r.arch.model_type}, {"source", r.arch.source},
                       {"assumptions", r.arch.assumptions}};
  document["inputs"] = inputs;
  document["fits"] = fit_list;
  document["does_not_fit"] = misses;
  return json_document("fit", document);
}

FitReport fit_report(const FitResult& r, bool explain) {
  const FitOptions& o = r.options;

  std::string header = fmt::format("{} ({}): {} params{}, {} {}\n", r.arch.name, r.arch.model_type,
                                   format_count(r.estimate.params),
                                   r.estimate.active_params < r.estimate.params
                                       ? fmt::format(" ({} active per token)", format_count(r.estimate.active_params))
                                       : "",
                                   o.train ? "training" : "inference", o.precision);
  Table breakdown;
  breakdown.columns = {"term", "gib_per_device"};
  breakdown.align = {Align::left, Align::right};
  if (explain) breakdown.columns.push_back("formula");
  for (const auto& term : r.estimate.terms) {
    if (term.name == "kv_cache_bytes_per_token") continue;
    std::vector<std::string> row = {term.name, format_gib(term.bytes)};
    if (explain) row.push_back(term.formula);
    breakdown.add_row(row);
  }
  breakdown.add_row({"total_bytes_per_device", format_gib(r.estimate.total_bytes_per_device)});

  Table placements;
  placements.columns = {"accelerator", "vram_gib", "count", "layout", "need_gib", "usable_gib",
                        "cheapest_offering", "usd_per_hour", "max_batch", "max_context"};
  placements.align = {Align::left,  Align::right, Align::right, Align::left,  Align::right,
                      Align::right, Align::left,  Align::right, Align::right, Align::right};
  for (const auto& f : r.fits) {
    if (!f.fits && !explain) continue;
    std::string layout = fmt::format("tp{} pp{}{}", f.tensor_parallel, f.pipeline_parallel,
                                     o.train ? fmt::format(" dp{}", f.data_parallel) : "");
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
  for (const auto& f : r.fits) {
    if (f.precision_note.empty() || (!f.precision_unsupported && !f.fits)) continue;
    std::string key = (f.precision_unsupported ? "refused: " : "note: ") + f.precision_note;
    auto it = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) { return g.first == key; });
    if (it == grouped.end()) grouped.emplace_back(key, f.accelerator->name);
    else it->second += ", " + f.accelerator->name;
  }
  for (const auto& [text, parts] : grouped) precision_lines += "  " + text + " (" + parts + ")\n";
  // Near misses are said without --explain: a part short by a few percent is a choice to make.
  std::string near_lines;
  for (const auto& f : r.fits) {
    if (!f.near_miss) continue;
    near_lines += fmt::format("  {}: needs {} GiB, {} usable (short by {} GiB){}\n", f.accelerator->name,
                              format_gib(f.total_bytes_per_device), format_gib(f.usable_bytes_per_device),
                              format_gib(f.short_by_bytes),
                              f.would_fit_with.empty() ? std::string() : "; fits with " + join_list(f.would_fit_with, ", or "));
  }
  if (!near_lines.empty())
    precision_lines += fmt::format("\nNear misses (within {:.0f}% of usable memory):\n", kNearMissShare * 100) + near_lines;
  if (!precision_lines.empty())
    precision_lines = fmt::format("\n{} weights by architecture ({}):\n", o.precision, precision_support_source(weight_format_of(o.precision))) + precision_lines;
  std::string explain_text;
  if (explain) {
    explain_text += "\nAssumptions:\n";
    for (const auto& line : r.arch.assumptions) explain_text += "  - " + line + "\n";
    for (const auto& line : r.estimate.assumptions) explain_text += "  - " + line + "\n";
    explain_text += fmt::format("  - usable memory = {:.0f}% of what each device reports (--usable-fraction; vLLM's gpu_memory_utilization "
                           "default, https://docs.vllm.ai/en/stable/configuration/engine_args.html); the device's reported "
                           "memory is nvidia-smi's memory.total with ECC on where measured (catalog memory_mib), else the datasheet\n",
                           o.usable_fraction * 100);
    explain_text += "  - model: " + r.arch.source + "\n";
    if (r.arch.published_params > 0)
      explain_text += fmt::format("  - computed {} params; published {} ({})\n", format_count(r.estimate.params),
                             format_count(r.arch.published_params), r.arch.published_params_source);
    explain_text += "  - accelerator memory and offering prices: `gpuwise catalog accelerators --explain`, "
               "`gpuwise catalog offerings --explain`\n";
  }

  FitReport report;
  Document& doc = report.document;
  doc.kind = "fit";
  doc.title = "Fit: " + std::string(gw::trim(header));
  doc.facts = {{"parameters", format_count(r.estimate.params)},
               {"memory per device", format_gib(r.estimate.total_bytes_per_device) + " GiB"},
               {"fits on", fmt::format("{} of {} accelerators", r.fitting, r.fits.size())}};
  // Memory per device by term, and for each accelerator what is needed against what is usable.
  nlohmann::json terms = nlohmann::json::array(), devices = nlohmann::json::array();
  for (const auto& term : r.estimate.terms)
    if (term.name != "kv_cache_bytes_per_token" && term.bytes > 0)
      terms.push_back({{"term", term.name}, {"gib", term.bytes / (1024.0 * 1024.0 * 1024.0)}});
  for (const auto& f : r.fits)
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
  doc.assumptions = r.arch.assumptions;
  doc.assumptions.insert(doc.assumptions.end(), r.estimate.assumptions.begin(), r.estimate.assumptions.end());
  doc.assumptions.push_back("model: " + r.arch.source);
  for (const auto& [text, parts] : grouped) doc.assumptions.push_back(text + " (" + parts + "; " + precision_support_source(weight_format_of(o.precision)) + ")");
  report.markdown = "# " + header + "\n## Memory per device\n\n" + render_markdown(breakdown) +
                    "\n## Where it fits\n\n" + render_markdown(placements) + precision_lines + explain_text;
  report.csv = render_csv(placements);
  std::string per_token = r.estimate.kv_cache_bytes_per_token > 0
                              ? fmt::format("KV cache per token: {} KiB\n", format_number(r.estimate.kv_cache_bytes_per_token / 1024.0, 1))
                              : "";
  report.text = header + per_token + "\n" + render_text(breakdown) + "\n" +
                fmt::format("Fits on {} of {} accelerators (fewest devices, cheapest {} offering):\n", r.fitting, r.fits.size(), o.pricing) +
                render_text(placements) + precision_lines + explain_text;
  return report;
}

}  // namespace gw
