// gpuwise catalog accelerators | offerings | import: browse and refresh the catalog.
#include <CLI/CLI.hpp>
#include <ctime>
#include <fmt/format.h>
#include <map>
#include <set>

#include "catalog/skypilot_import.h"
#include "cli/context.h"
#include "core/atomic_file.h"
#include "core/text.h"
#include "perf/layer_operators.h"

namespace gw {

namespace {

using nlohmann::json;

std::string optional_text(const std::optional<double>& value, int decimals) {
  return value ? format_number(*value, decimals) : "-";
}

json optional_json(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

json accelerator_json(const Accelerator& a) {
  json peaks = json::object();
  for (int i = 0; i < kPrecisionCount; ++i) {
    auto precision = static_cast<Precision>(i);
    peaks[std::string(precision_name(precision))] = optional_json(a.peak(precision));
  }
  return {{"name", a.name},
          {"aliases", a.aliases},
          {"vendor", a.vendor},
          {"memory_gib", a.memory_gib},
          {"memory_reported_gib", a.reported_gib()},
          {"memory_mib_source", a.memory_mib ? json(a.memory_mib_source) : json(nullptr)},
          {"memory_gb_per_s", a.memory_gb_per_s},
          {"dense_peak_tflops", peaks},
          {"interconnect", a.interconnect},
          {"interconnect_gb_per_s", optional_json(a.interconnect_gb_per_s)},
          {"pcie_gen", a.pcie_gen ? json(*a.pcie_gen) : json(nullptr)},
          {"tdp_watts", optional_json(a.tdp_watts)},
          {"class", a.device_class},
          {"source", a.source},
          {"as_of", a.as_of}};
}

json offering_json(const Offering& o, Pricing pricing) {
  auto price = o.usd_per_hour(pricing);
  return {{"cloud", o.cloud},
          {"region", o.region},
          {"zone", o.zone},
          {"instance_type", o.instance_type},
          {"accelerator", o.accelerator},
          {"accelerator_count", o.accelerator_count},
          {"vcpus", o.vcpus},
          {"host_memory_gib", o.host_memory_gib},
          {"network_gbps", optional_json(o.network_gbps)},
          {"fabric", o.fabric},
          {"on_demand_usd_per_hour", optional_json(o.on_demand_usd_per_hour)},
          {"spot_usd_per_hour", optional_json(o.spot_usd_per_hour)},
          {"reserved_1y_usd_per_hour", optional_json(o.reserved_1y_usd_per_hour)},
          {"reserved_3y_usd_per_hour", optional_json(o.reserved_3y_usd_per_hour)},
          {"reserved_is_assumption", o.reserved_is_assumption},
          {"spot_interruption", o.spot_interruption},
          {"pricing", std::string(pricing_name(pricing))},
          {"usd_per_hour", optional_json(price)},
          {"usd_per_accelerator_hour", price ? json(*price / o.accelerator_count) : json(nullptr)},
          {"source", o.source},
          {"as_of", o.as_of},
          {"price_scope", o.gpu_only_price ? "gpu-only" : "instance"},
          {"notes", o.notes}};
}

struct OfferingsArgs {
  std::vector<std::string> clouds, regions, accelerators;
  std::string geo, pricing = "on-demand";
  double min_vram_gib = 0;
  std::optional<double> max_usd_per_hour;
  bool spot = false;
  int limit = 0;
};

int list_accelerators(CommandContext& context, const std::vector<std::string>& names, double min_vram_gib) {
  const Catalog& catalog = context.catalog();
  std::vector<const Accelerator*> shown;
  for (const auto& name : split_lists(names)) {
    const Accelerator* accelerator = catalog.find_accelerator(name);
    if (!accelerator) {
      std::string hint = closest_match(name, catalog.accelerator_names());
      fail("--accelerator", "unknown accelerator '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
  }
  auto wanted = split_lists(names);
  for (const auto& accelerator : catalog.accelerators()) {
    if (accelerator.memory_gib + 1e-9 < min_vram_gib) continue;
    if (!wanted.empty() && std::none_of(wanted.begin(), wanted.end(), [&](const std::string& n) {
          return catalog.find_accelerator(n) == &accelerator;
        }))
      continue;
    shown.push_back(&accelerator);
  }
  if (context.options.format == "json") {
    json list = json::array();
    for (const auto* a : shown) list.push_back(accelerator_json(*a));
    context.emit_json({{"accelerators", list}}, "catalog accelerators");
    return 0;
  }
  Table table;
  table.columns = {"accelerator", "vendor", "memory_gib", "reported_gib", "memory_gb_per_s", "bf16_tflops", "fp8_tflops",
                   "int8_tops", "interconnect_gb_per_s", "tdp_watts", "class"};
  if (context.options.explain) table.columns.push_back("source (as of)");
  table.align = {Align::left, Align::left, Align::right, Align::right, Align::right, Align::right,
                 Align::right, Align::right, Align::right, Align::right, Align::left};
  for (const auto* a : shown) {
    auto bf16 = a->peak(Precision::bf16) ? a->peak(Precision::bf16) : a->peak(Precision::fp16);
    std::vector<std::string> row = {a->name,
                                    a->vendor,
                                    format_number(a->memory_gib, 0),
                                    a->memory_mib ? format_number(a->reported_gib(), 1) : std::string("-"),
                                    format_number(a->memory_gb_per_s, 0),
                                    optional_text(bf16, 1),
                                    optional_text(a->peak(Precision::fp8), 1),
                                    optional_text(a->peak(Precision::int8), 1),
                                    optional_text(a->interconnect_gb_per_s, 0),
                                    optional_text(a->tdp_watts, 0),
                                    a->device_class};
    if (context.options.explain)
      row.push_back(a->source + " (" + a->as_of + ")" + (a->memory_mib ? "; memory: " + a->memory_mib_source : std::string()));
    table.add_row(row);
  }
  context.emit_table(table);
  if (context.options.format == "table")
    context.note(fmt::format("{} accelerators; dense peak rates (bf16 column shows fp16 where bf16 is absent)",
                             shown.size()));
  return 0;
}

int list_offerings(CommandContext& context, const OfferingsArgs& args) {
  const Catalog& catalog = context.catalog();
  OfferingFilter filter;
  filter.clouds = split_lists(args.clouds);
  filter.regions = split_lists(args.regions);
  filter.geo = args.geo;
  filter.accelerators = split_lists(args.accelerators);
  for (const auto& name : filter.accelerators)
    if (!catalog.find_accelerator(name)) {
      std::string hint = closest_match(name, catalog.accelerator_names());
      fail("--accelerator", "unknown accelerator '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
  filter.min_vram_gib = args.min_vram_gib;
  filter.max_usd_per_hour = args.max_usd_per_hour;
  auto pricing = parse_pricing(args.spot ? "spot" : args.pricing);
  if (!pricing) fail("--pricing", "'" + args.pricing + "' is not one of on-demand, spot, reserved-1y, reserved-3y");
  filter.pricing = *pricing;
  auto selected = catalog.select(filter);
  if (args.limit > 0 && selected.size() > static_cast<size_t>(args.limit)) selected.resize(static_cast<size_t>(args.limit));

  if (context.options.format == "json") {
    json list = json::array();
    for (const auto* o : selected) list.push_back(offering_json(*o, filter.pricing));
    context.emit_json({{"offerings", list}, {"count", selected.size()}}, "catalog offerings");
    return 0;
  }
  Table table;
  table.columns = {"cloud", "region", "instance_type", "accelerators", "vram_gib", "vcpus", "network_gbps",
                   "on_demand", "spot", "reserved_1y", "reserved_3y", "usd_per_gpu_hour"};
  if (context.options.explain) table.columns.insert(table.columns.end(), {"source (as of)", "notes"});
  table.align = {Align::left,  Align::left,  Align::left,  Align::left,  Align::right, Align::right,
                 Align::right, Align::right, Align::right, Align::right, Align::right, Align::right};
  bool any_assumed = false;
  for (const auto* o : selected) {
    const Accelerator* a = catalog.find_accelerator(o->accelerator);
    auto money = [](const std::optional<double>& v) { return v ? format_usd(*v) : std::string("-"); };
    std::string star = o->reserved_is_assumption ? "*" : "";
    any_assumed = any_assumed || o->reserved_is_assumption;
    auto price = o->usd_per_hour(filter.pricing);
    std::vector<std::string> row = {
        o->cloud, o->region, o->instance_type, fmt::format("{}x {}", o->accelerator_count, o->accelerator),
        a ? format_number(a->memory_gib, 0) : "-", format_number(o->vcpus, 0),
        o->network_gbps ? format_number(*o->network_gbps, 0) + (o->fabric.empty() ? "" : " " + o->fabric) : "-",
        money(o->on_demand_usd_per_hour), money(o->spot_usd_per_hour),
        money(o->reserved_1y_usd_per_hour) + (o->reserved_1y_usd_per_hour ? star : ""),
        money(o->reserved_3y_usd_per_hour) + (o->reserved_3y_usd_per_hour ? star : ""),
        price ? format_usd(*price / o->accelerator_count) : "-"};
    if (context.options.explain) {
      row.push_back(o->source + " (" + o->as_of + ")");
      row.push_back(o->notes);
    }
    table.add_row(row);
  }
  context.emit_table(table);
  if (context.options.format == "table") {
    context.note(fmt::format("{} offerings, cheapest {} first; prices in USD per hour for the whole instance",
                             selected.size(), pricing_name(filter.pricing)));
    if (any_assumed) {
      std::string clouds;
      for (const auto& [cloud, c] : catalog.commitments())
        if (c.assumption) clouds += fmt::format("{}{} {:.0f}%/{:.0f}%", clouds.empty() ? "" : ", ", cloud,
                                                c.discount_1y * 100, c.discount_3y * 100);
      context.note("* committed prices from a labelled per-cloud discount assumption (1y/3y: " + clouds +
                   "); override with --catalog DIR/commitments.csv");
    }
  }
  return 0;
}

std::string today_utc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[16];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d", &tm);
  return buffer;
}

int import_skypilot_command(CommandContext& context, const std::string& dir, const std::string& as_of,
                            const std::string& source) {
  SkypilotImportOptions options;
  options.as_of = as_of.empty() ? today_utc() : as_of;
  options.source = source;
  auto imported = import_skypilot(dir, context.catalog(), options);
  if (!imported.ok()) throw InputError{imported.error()};
  for (const auto& file : imported.value().files_read) context.add_input(file);
  const auto& result = imported.value();
  context.emit(offerings_to_csv(result.offerings));
  int skipped = 0;
  for (const auto& [reason, count] : result.skipped) skipped += count;
  context.note(fmt::format("read {} rows from {} files: {} offerings written, {} rows skipped", result.rows_read,
                           result.files_read.size(), result.offerings.size(), skipped));
  for (const auto& [reason, count] : result.skipped) context.note(fmt::format("  skipped {:>4}  {}", count, reason));
  return 0;
}

// The measured operator profiles that ship in the catalog: one row per device and model, with
// the tensor-parallel degrees and token counts profiled.
int list_profiles(CommandContext& context) {
  struct Entry {
    std::set<int> tensor_parallel;
    double min_tokens = 1e300, max_tokens = 0;
    size_t rows = 0;
  };
  std::map<std::pair<std::string, std::string>, Entry> entries;
  for (const auto& row : embedded_layer_profiles()) {
    Entry& e = entries[{row.device, row.model}];
    e.tensor_parallel.insert(row.dims.tensor_parallel);
    e.min_tokens = std::min(e.min_tokens, row.tokens);
    e.max_tokens = std::max(e.max_tokens, row.tokens);
    ++e.rows;
  }
  const std::string source = "microsoft/vidur 7d47513 data/profiling (MIT), medians of per-operator times, fp16";
  auto tp_text = [](const std::set<int>& degrees) {
    std::string text;
    for (int tp : degrees) text += (text.empty() ? "" : ",") + std::to_string(tp);
    return text;
  };
  if (context.options.format == "json") {
    json list = json::array();
    for (const auto& [key, e] : entries)
      list.push_back({{"device", key.first},
                      {"accelerator", profiled_accelerator(key.first)},
                      {"model", key.second},
                      {"tensor_parallel", std::vector<int>(e.tensor_parallel.begin(), e.tensor_parallel.end())},
                      {"min_tokens", e.min_tokens},
                      {"max_tokens", e.max_tokens},
                      {"rows", e.rows}});
    context.emit_json({{"profiles", list}, {"source", source}}, "catalog profiles");
    return 0;
  }
  Table table;
  table.columns = {"device", "accelerator", "model", "tensor_parallel", "tokens", "rows"};
  table.align = {Align::left, Align::left, Align::left, Align::left, Align::right, Align::right};
  for (const auto& [key, e] : entries)
    table.add_row({key.first, profiled_accelerator(key.first), key.second, tp_text(e.tensor_parallel),
                   fmt::format("{:.0f}-{:.0f}", e.min_tokens, e.max_tokens), std::to_string(e.rows)});
  context.emit_table(table);
  if (context.options.format == "table")
    context.note(fmt::format("{} per-layer operator profiles from {}; catalog/profiles/ holds them with the licence",
                             entries.size(), source));
  return 0;
}

}  // namespace

void add_catalog_commands(CLI::App& app, CommandContext& context, Action& action) {
  auto* catalog = app.add_subcommand("catalog", "Browse the accelerator and offering catalog; import prices");
  catalog->require_subcommand(1);

  auto* accelerators = catalog->add_subcommand("accelerators", "Accelerators: memory, bandwidth, dense peak rates");
  auto names = std::make_shared<std::vector<std::string>>();
  auto min_vram = std::make_shared<double>(0);
  accelerators->add_option("--accelerator", *names, "Only these (names or aliases, comma-separated)");
  accelerators->add_option("--min-vram-gib", *min_vram, "Only accelerators with at least this much memory")
      ->check(CLI::Range(0.0, 1e6));
  accelerators->callback([&context, &action, names, min_vram] {
    action = [&context, names, min_vram] { return list_accelerators(context, *names, *min_vram); };
  });

  auto* offerings = catalog->add_subcommand("offerings", "Cloud offerings with prices, cheapest first");
  auto args = std::make_shared<OfferingsArgs>();
  offerings->add_option("--cloud", args->clouds, "Only these clouds (aws, gcp, azure, lambda, runpod)");
  offerings->add_option("--region", args->regions, "Only regions starting with these prefixes (us-east, europe-)");
  offerings->add_option("--geo", args->geo, "Only regions in this geography")->check(CLI::IsMember({"us", "europe", "asia"}));
  offerings->add_option("--accelerator", args->accelerators, "Only these accelerators");
  offerings->add_option("--min-vram-gib", args->min_vram_gib, "At least this much memory per accelerator")
      ->check(CLI::Range(0.0, 1e6));
  offerings->add_option("--max-usd-per-hour", args->max_usd_per_hour, "At most this price per instance-hour")
      ->check(CLI::Range(0.0, 1e7));
  offerings->add_option("--pricing", args->pricing, "Price to filter and sort by: on-demand, spot, reserved-1y, reserved-3y");
  offerings->add_flag("--spot", args->spot, "Only offerings with a spot price, sorted by it");
  offerings->add_option("--limit", args->limit, "Show at most N rows")->check(CLI::Range(0, 1000000));
  offerings->callback([&context, &action, args] {
    action = [&context, args] { return list_offerings(context, *args); };
  });

  auto* profiles = catalog->add_subcommand("profiles", "Measured operator profiles that ship with gpuwise (device, model, tp)");
  profiles->callback([&context, &action] { action = [&context] { return list_profiles(context); }; });

  auto* import = catalog->add_subcommand("import", "Convert a SkyPilot catalog (vms.csv per cloud) into offerings.csv");
  auto dir = std::make_shared<std::string>();
  auto as_of = std::make_shared<std::string>();
  auto source = std::make_shared<std::string>();
  import->add_option("--skypilot", *dir, "Folder with <cloud>.csv or <cloud>/vms.csv files")->required();
  import->add_option("--as-of", *as_of, "Date the prices were read (default: today, UTC)");
  import->add_option("--source", *source, "Where the files came from (commit, URL), recorded in each row");
  import->callback([&context, &action, dir, as_of, source] {
    action = [&context, dir, as_of, source] { return import_skypilot_command(context, *dir, *as_of, *source); };
  });
}

}  // namespace gw
