#include "catalog/catalog_tables.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"

namespace gw {

namespace {

using nlohmann::json;

std::string optional_text(const std::optional<double>& value, int decimals) {
  return value ? format_number(*value, decimals) : "-";
}

json optional_json(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

}  // namespace

nlohmann::json to_json(const Accelerator& a) {
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

nlohmann::json to_json(const Offering& o, Pricing pricing) {
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

Result<std::vector<const Accelerator*>> select_accelerators(const Catalog& catalog, const std::vector<std::string>& names,
                                                            double min_vram_gib) {
  std::vector<const Accelerator*> shown;
  auto wanted = split_lists(names);
  for (const auto& name : wanted) {
    if (catalog.find_accelerator(name)) continue;
    std::string hint = closest_match(name, catalog.accelerator_names());
    return Error{"", 0, "--accelerator", "unknown accelerator '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)")};
  }
  for (const auto& accelerator : catalog.accelerators()) {
    if (accelerator.memory_gib + 1e-9 < min_vram_gib) continue;
    if (!wanted.empty() && std::none_of(wanted.begin(), wanted.end(), [&](const std::string& n) {
          return catalog.find_accelerator(n) == &accelerator;
        }))
      continue;
    shown.push_back(&accelerator);
  }
  return shown;
}

Result<SelectedOfferings> select_offerings(const Catalog& catalog, const OfferingSelection& selection) {
  OfferingFilter filter;
  filter.clouds = split_lists(selection.clouds);
  filter.regions = split_lists(selection.regions);
  filter.geo = selection.geo;
  filter.accelerators = split_lists(selection.accelerators);
  for (const auto& name : filter.accelerators)
    if (!catalog.find_accelerator(name)) {
      std::string hint = closest_match(name, catalog.accelerator_names());
      return Error{"", 0, "--accelerator", "unknown accelerator '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)")};
    }
  filter.min_vram_gib = selection.min_vram_gib;
  filter.max_usd_per_hour = selection.max_usd_per_hour;
  auto pricing = parse_pricing(selection.spot ? "spot" : selection.pricing);
  if (!pricing)
    return Error{"", 0, "--pricing", "'" + selection.pricing + "' is not one of on-demand, spot, reserved-1y, reserved-3y"};
  filter.pricing = *pricing;
  SelectedOfferings selected{catalog.select(filter), filter.pricing};
  if (selection.limit > 0 && selected.offerings.size() > static_cast<size_t>(selection.limit))
    selected.offerings.resize(static_cast<size_t>(selection.limit));
  return selected;
}

Table accelerators_table(const std::vector<const Accelerator*>& shown, bool explain) {
  Table table;
  table.columns = {"accelerator", "vendor", "memory_gib", "reported_gib", "memory_gb_per_s", "bf16_tflops", "fp8_tflops",
                   "int8_tops", "interconnect_gb_per_s", "tdp_watts", "class"};
  if (explain) table.columns.push_back("source (as of)");
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
    if (explain)
      row.push_back(a->source + " (" + a->as_of + ")" + (a->memory_mib ? "; memory: " + a->memory_mib_source : std::string()));
    table.add_row(row);
  }
  return table;
}

Table offerings_table(const Catalog& catalog, const std::vector<const Offering*>& selected, Pricing pricing, bool explain,
                      bool* any_assumed) {
  *any_assumed = false;
  Table table;
  table.columns = {"cloud", "region", "instance_type", "accelerators", "vram_gib", "vcpus", "network_gbps",
                   "on_demand", "spot", "reserved_1y", "reserved_3y", "usd_per_gpu_hour"};
  if (explain) table.columns.insert(table.columns.end(), {"source (as of)", "notes"});
  table.align = {Align::left,  Align::left,  Align::left,  Align::left,  Align::right, Align::right,
                 Align::right, Align::right, Align::right, Align::right, Align::right, Align::right};
  // One offering per zone where the catalog has zones (their spot prices differ): without the
  // zone such rows would read as repeats.
  const bool zones = std::any_of(selected.begin(), selected.end(), [](const Offering* o) { return !o->zone.empty(); });
  if (zones) {
    table.columns.insert(table.columns.begin() + 2, "zone");
    table.align.insert(table.align.begin() + 2, Align::left);
  }
  for (const auto* o : selected) {
    const Accelerator* a = catalog.find_accelerator(o->accelerator);
    auto money = [](const std::optional<double>& v) { return v ? format_usd(*v) : std::string("-"); };
    std::string star = o->reserved_is_assumption ? "*" : "";
    *any_assumed = *any_assumed || o->reserved_is_assumption;
    auto price = o->usd_per_hour(pricing);
    std::vector<std::string> row = {
        o->cloud, o->region, o->instance_type, fmt::format("{}x {}", o->accelerator_count, o->accelerator),
        a ? format_number(a->memory_gib, 0) : "-", format_number(o->vcpus, 0),
        o->network_gbps ? format_number(*o->network_gbps, 0) + (o->fabric.empty() ? "" : " " + o->fabric) : "-",
        money(o->on_demand_usd_per_hour), money(o->spot_usd_per_hour),
        money(o->reserved_1y_usd_per_hour) + (o->reserved_1y_usd_per_hour ? star : ""),
        money(o->reserved_3y_usd_per_hour) + (o->reserved_3y_usd_per_hour ? star : ""),
        price ? format_usd(*price / o->accelerator_count) : "-"};
    if (zones) row.insert(row.begin() + 2, o->zone.empty() ? "-" : o->zone);
    if (explain) {
      row.push_back(o->source + " (" + o->as_of + ")");
      row.push_back(o->notes);
    }
    table.add_row(row);
  }
  return table;
}

}  // namespace gw
