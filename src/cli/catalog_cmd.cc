// gpuwise catalog accelerators | offerings | import: browse and refresh the catalog.
#include <CLI/CLI.hpp>
#include <ctime>
#include <fmt/format.h>

#include "catalog/catalog_tables.h"
#include "catalog/skypilot_import.h"
#include "cli/context.h"
#include "core/atomic_file.h"
#include "core/text.h"
#include "perf/shipped_profiles.h"

namespace gw {

namespace {

using nlohmann::json;

int list_accelerators(CommandContext& context, const std::vector<std::string>& names, double min_vram_gib) {
  auto shown = select_accelerators(context.catalog(), names, min_vram_gib);
  if (!shown.ok()) throw InputError{shown.error()};
  if (context.options.format == "json") {
    json list = json::array();
    for (const auto* a : shown.value()) list.push_back(to_json(*a));
    context.emit_json({{"accelerators", list}}, "catalog accelerators");
    return 0;
  }
  context.emit_table(accelerators_table(shown.value(), context.options.explain));
  if (context.options.format == "table")
    context.note(fmt::format("{} accelerators; dense peak rates (bf16 column shows fp16 where bf16 is absent)",
                             shown.value().size()));
  return 0;
}

int list_offerings(CommandContext& context, const OfferingSelection& args) {
  const Catalog& catalog = context.catalog();
  auto chosen = select_offerings(catalog, args);
  if (!chosen.ok()) throw InputError{chosen.error()};
  const std::vector<const Offering*>& selected = chosen.value().offerings;
  const Pricing pricing = chosen.value().pricing;

  if (context.options.format == "json") {
    json list = json::array();
    for (const auto* o : selected) list.push_back(to_json(*o, pricing));
    context.emit_json({{"offerings", list}, {"count", selected.size()}}, "catalog offerings");
    return 0;
  }
  bool any_assumed = false;
  Table table = offerings_table(catalog, selected, pricing, context.options.explain, &any_assumed);
  context.emit_table(table);
  if (context.options.format == "table") {
    context.note(fmt::format("{} offerings, cheapest {} first; prices in USD per hour for the whole instance",
                             selected.size(), pricing_name(pricing)));
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

// The measured operator profiles that ship in the catalog.
int list_profiles(CommandContext& context) {
  const std::vector<ShippedProfile> profiles = shipped_profiles();
  if (context.options.format == "json") {
    context.emit_json({{"profiles", to_json(profiles)}, {"source", kShippedProfilesSource}}, "catalog profiles");
    return 0;
  }
  context.emit_table(profiles_table(profiles));
  if (context.options.format == "table")
    context.note(fmt::format("{} per-layer operator profiles from {}; catalog/profiles/ holds them with the licence",
                             profiles.size(), kShippedProfilesSource));
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
  auto args = std::make_shared<OfferingSelection>();
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
