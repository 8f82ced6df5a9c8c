// gpuwise models: the preset models, with computed and published parameter counts.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/context.h"
#include "model/presets.h"

namespace gw {

namespace {

int list_models(CommandContext& context) {
  nlohmann::json list = nlohmann::json::array();
  Table table;
  table.columns = {"model", "type", "params", "active_params", "published", "layers", "kv_heads", "context"};
  table.align = {Align::left, Align::left, Align::right, Align::right, Align::right, Align::right, Align::right, Align::right};
  if (context.options.explain) table.columns.push_back("source");
  for (const auto& name : preset_names()) {
    auto arch = load_preset(name);
    if (!arch.ok()) throw InputError{arch.error()};
    const ModelArch& a = arch.value();
    ParamBreakdown p = count_params(a);
    list.push_back({{"name", name}, {"model_type", a.model_type}, {"params", p.total()}, {"active_params", p.active()},
                    {"published_params", a.published_params}, {"published_params_source", a.published_params_source},
                    {"source", a.source}});
    bool transformer = a.kind != ModelKind::generic;
    std::vector<std::string> row = {name, a.model_type, format_count(p.total()), format_count(p.active()),
                                    a.published_params > 0 ? format_count(a.published_params) : "-",
                                    transformer ? std::to_string(a.num_layers) : "-",
                                    transformer && a.kind == ModelKind::decoder ? (a.mla ? std::string("MLA") : std::to_string(a.num_kv_heads)) : "-",
                                    a.max_position_embeddings > 0 ? format_number(a.max_position_embeddings, 0) : "-"};
    if (context.options.explain) row.push_back(a.source);
    table.add_row(row);
  }
  if (context.options.format == "json") {
    context.emit_json({{"models", list}}, "models");
  } else {
    context.emit_table(table);
  }
  return 0;
}

}  // namespace

void add_models_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* models = app.add_subcommand("models", "Preset models by name, with parameter counts");
  models->callback([&context, &action] { action = [&context] { return list_models(context); }; });
}

}  // namespace gw
