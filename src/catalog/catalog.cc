#include "catalog/catalog.h"

#include <algorithm>
#include <filesystem>

#include "catalog/embedded.h"
#include "core/numbers.h"
#include "core/text.h"

namespace gw {

namespace {

std::string network_key(const std::string& cloud, const std::string& instance_type) {
  return to_lower(cloud) + "|" + instance_type;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::string region_geo(const std::string& cloud, const std::string& region) {
  std::string r = to_lower(region);
  (void)cloud;
  static const char* kUs[] = {"us-", "us", "northamerica-", "eastus", "westus", "centralus",
                              "northcentralus", "southcentralus", "westcentralus", "ca-", "canada"};
  static const char* kEurope[] = {"eu-", "europe-", "westeurope", "northeurope", "uk", "france",
                                  "germany", "sweden", "switzerland", "norway", "poland", "italy",
                                  "spain", "eu", "ro", "is", "nl", "se", "fr", "de", "cz", "no"};
  static const char* kAsia[] = {"ap-", "asia-", "japan", "korea", "eastasia", "southeastasia",
                                "australia", "india", "centralindia", "jp", "kr", "sg", "in"};
  for (auto prefix : kUs)
    if (r == prefix || (std::string_view(prefix).size() > 2 && starts_with(r, prefix))) return "us";
  for (auto prefix : kEurope)
    if (r == prefix || (std::string_view(prefix).size() > 2 && starts_with(r, prefix))) return "europe";
  for (auto prefix : kAsia)
    if (r == prefix || (std::string_view(prefix).size() > 2 && starts_with(r, prefix))) return "asia";
  return "other";
}

Result<Catalog> Catalog::embedded() {
  Catalog catalog;
  const std::pair<const char*, std::optional<Error> (Catalog::*)(std::string_view, const std::string&)>
      files[] = {{"accelerators.csv", &Catalog::add_accelerators_csv},
                 {"instance_types.csv", &Catalog::add_instance_types_csv},
                 {"commitments.csv", &Catalog::add_commitments_csv},
                 {"offerings.csv", &Catalog::add_offerings_csv}};
  for (const auto& [name, add] : files) {
    if (auto error = (catalog.*add)(embedded_catalog_file(name), std::string("<embedded>/") + name))
      return *error;
  }
  return catalog;
}

std::optional<Error> Catalog::apply_overrides(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Error{dir, 0, "--catalog", "not a readable directory"};
  const std::pair<const char*, std::optional<Error> (Catalog::*)(std::string_view, const std::string&)>
      files[] = {{"accelerators.csv", &Catalog::add_accelerators_csv},
                 {"instance_types.csv", &Catalog::add_instance_types_csv},
                 {"commitments.csv", &Catalog::add_commitments_csv},
                 {"offerings.csv", &Catalog::add_offerings_csv}};
  int found = 0;
  for (const auto& [name, add] : files) {
    std::string path = (std::filesystem::path(dir) / name).string();
    if (!std::filesystem::exists(path, ec)) continue;
    ++found;
    std::string text, message;
    if (!read_file(path, text, message)) return Error{path, 0, "", "cannot read: " + message};
    if (auto error = (this->*add)(text, path)) return error;
  }
  if (found == 0)
    return Error{dir, 0, "--catalog",
                 "no catalog files found (expected accelerators.csv, offerings.csv, "
                 "commitments.csv or instance_types.csv)"};
  return std::nullopt;
}

std::optional<Error> Catalog::add_accelerators_csv(std::string_view text, const std::string& file) {
  auto table = parse_csv(text, file);
  if (!table.ok()) return table.error();
  for (const auto& column : {"name", "memory_gib", "memory_gb_per_s", "source", "as_of"})
    if (table.value().column(column) < 0)
      return Error{file, 1, column, "missing column in the header"};
  for (const auto& row : table.value().rows) {
    auto accelerator = parse_accelerator(table.value(), row);
    if (!accelerator.ok()) return accelerator.error();
    std::string key = normalize_name(accelerator.value().name);
    auto same = std::find_if(accelerators_.begin(), accelerators_.end(),
                             [&](const Accelerator& a) { return normalize_name(a.name) == key; });
    if (same != accelerators_.end()) {
      *same = std::move(accelerator.value());
    } else {
      accelerators_.push_back(std::move(accelerator.value()));
    }
  }
  return std::nullopt;
}

std::optional<Error> Catalog::add_offerings_csv(std::string_view text, const std::string& file) {
  auto table = parse_csv(text, file);
  if (!table.ok()) return table.error();
  for (const auto& column : {"cloud", "region", "instance_type", "accelerator", "accelerator_count",
                             "source", "as_of"})
    if (table.value().column(column) < 0)
      return Error{file, 1, column, "missing column in the header"};
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < offerings_.size(); ++i) index[offerings_[i].key()] = i;
  for (const auto& row : table.value().rows) {
    auto offering = parse_offering(table.value(), row);
    if (!offering.ok()) return offering.error();
    const Accelerator* accelerator = find_accelerator(offering.value().accelerator);
    if (!accelerator) {
      std::string hint = closest_match(offering.value().accelerator, accelerator_names());
      return Error{file, row.line, "accelerator",
                   "unknown accelerator '" + offering.value().accelerator + "'" +
                       (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                       "; add it to accelerators.csv first"};
    }
    offering.value().accelerator = accelerator->name;
    auto found = index.find(offering.value().key());
    if (found != index.end()) {
      offerings_[found->second] = std::move(offering.value());
    } else {
      index[offering.value().key()] = offerings_.size();
      offerings_.push_back(std::move(offering.value()));
    }
  }
  refresh_derived();
  return std::nullopt;
}

std::optional<Error> Catalog::add_commitments_csv(std::string_view text, const std::string& file) {
  auto table = parse_csv(text, file);
  if (!table.ok()) return table.error();
  for (const auto& row : table.value().rows) {
    CsvRecord record(table.value(), row);
    Commitment commitment;
    commitment.cloud = to_lower(record.required_text("cloud"));
    commitment.discount_1y = record.number("discount_1y", 0, 0.95);
    commitment.discount_3y = record.number("discount_3y", 0, 0.95);
    std::string kind = record.required_text("kind");
    if (record.ok() && kind != "assumption" && kind != "published")
      return Error{file, row.line, "kind", "'" + kind + "' is not one of assumption, published"};
    commitment.assumption = kind == "assumption";
    commitment.source = record.required_text("source");
    commitment.as_of = record.required_text("as_of");
    if (!record.ok()) return record.error();
    commitments_[commitment.cloud] = commitment;
  }
  refresh_derived();
  return std::nullopt;
}

std::optional<Error> Catalog::add_instance_types_csv(std::string_view text, const std::string& file) {
  auto table = parse_csv(text, file);
  if (!table.ok()) return table.error();
  for (const auto& row : table.value().rows) {
    CsvRecord record(table.value(), row);
    std::string cloud = record.required_text("cloud");
    std::string instance_type = record.required_text("instance_type");
    InstanceNetwork network;
    network.network_gbps = record.optional_number("network_gbps", 0, 1e6);
    network.fabric = record.text("fabric");
    network.spot_interruption = record.text("spot_interruption");
    network.source = record.required_text("source");
    if (!record.ok()) return record.error();
    networks_[network_key(cloud, instance_type)] = network;
  }
  refresh_derived();
  return std::nullopt;
}

void Catalog::refresh_derived() {
  for (auto& offering : offerings_) {
    auto network = networks_.find(network_key(offering.cloud, offering.instance_type));
    if (network != networks_.end()) {
      offering.network_gbps = network->second.network_gbps;
      offering.fabric = network->second.fabric;
      offering.spot_interruption = network->second.spot_interruption;
    }
    // Derived committed prices are recomputed so that a changed discount applies everywhere.
    if (offering.reserved_is_assumption) {
      offering.reserved_1y_usd_per_hour.reset();
      offering.reserved_3y_usd_per_hour.reset();
      offering.reserved_is_assumption = false;
    }
    auto commitment = commitments_.find(offering.cloud);
    if (commitment == commitments_.end() || !offering.on_demand_usd_per_hour) continue;
    if (offering.reserved_1y_usd_per_hour || offering.reserved_3y_usd_per_hour) continue;
    offering.reserved_1y_usd_per_hour =
        *offering.on_demand_usd_per_hour * (1 - commitment->second.discount_1y);
    offering.reserved_3y_usd_per_hour =
        *offering.on_demand_usd_per_hour * (1 - commitment->second.discount_3y);
    offering.reserved_is_assumption = true;
  }
}

const Accelerator* Catalog::find_accelerator(std::string_view name) const {
  std::string key = normalize_name(name);
  if (key.empty()) return nullptr;
  for (const auto& accelerator : accelerators_)
    if (normalize_name(accelerator.name) == key) return &accelerator;
  for (const auto& accelerator : accelerators_)
    for (const auto& alias : accelerator.aliases)
      if (normalize_name(alias) == key) return &accelerator;
  return nullptr;
}

Result<const Accelerator*> Catalog::accelerator_named(std::string_view name) const {
  const std::string key = normalize_name(name);
  // A family name ends where a part's name continues after a '-': "A100" against "A100-40GB".
  auto dashed = [](std::string_view text) {
    std::string out = to_lower(text);
    for (char& c : out)
      if (c == '_' || c == ' ') c = '-';
    return out;
  };
  const std::string family = dashed(name);
  std::vector<std::string> variants;
  for (const auto& accelerator : accelerators_) {
    if (normalize_name(accelerator.name) == key) return &accelerator;
    std::string part = dashed(accelerator.name);
    if (!family.empty() && part.size() > family.size() && part.compare(0, family.size(), family) == 0 && part[family.size()] == '-')
      variants.push_back(accelerator.name);
  }
  if (variants.size() >= 2)
    return Error{"", 0, "", "'" + std::string(name) + "' is ambiguous: " + join_list(variants) + "; name one"};
  if (const Accelerator* a = find_accelerator(name)) return a;
  std::string hint = closest_match(name, accelerator_names());
  return Error{"", 0, "", "'" + std::string(name) + "' is not an accelerator in the catalog" +
                              (hint.empty() ? "" : " (did you mean '" + hint + "'?)") + "; `gpuwise catalog accelerators` lists them"};
}

std::vector<std::string> Catalog::accelerator_names() const {
  std::vector<std::string> names;
  for (const auto& accelerator : accelerators_) names.push_back(accelerator.name);
  return names;
}

std::vector<const Offering*> Catalog::select(const OfferingFilter& filter) const {
  std::vector<std::string> wanted_accelerators;
  for (const auto& name : filter.accelerators) {
    const Accelerator* accelerator = find_accelerator(name);
    wanted_accelerators.push_back(accelerator ? accelerator->name : name);
  }
  std::vector<const Offering*> selected;
  for (const auto& offering : offerings_) {
    if (!filter.clouds.empty() &&
        std::none_of(filter.clouds.begin(), filter.clouds.end(),
                     [&](const std::string& c) { return to_lower(c) == offering.cloud; }))
      continue;
    if (!filter.regions.empty() &&
        std::none_of(filter.regions.begin(), filter.regions.end(), [&](const std::string& r) {
          return starts_with(to_lower(offering.region), to_lower(r));
        }))
      continue;
    if (!filter.geo.empty() && region_geo(offering.cloud, offering.region) != to_lower(filter.geo))
      continue;
    if (!wanted_accelerators.empty() &&
        std::find(wanted_accelerators.begin(), wanted_accelerators.end(), offering.accelerator) ==
            wanted_accelerators.end())
      continue;
    const Accelerator* accelerator = find_accelerator(offering.accelerator);
    if (accelerator && accelerator->memory_gib + 1e-9 < filter.min_vram_gib) continue;
    if (filter.complete_prices_only && offering.gpu_only_price) continue;
    auto price = offering.usd_per_hour(filter.pricing);
    if (filter.pricing == Pricing::spot && !price) continue;
    if (filter.max_usd_per_hour && (!price || *price > *filter.max_usd_per_hour)) continue;
    selected.push_back(&offering);
  }
  std::stable_sort(selected.begin(), selected.end(), [&](const Offering* a, const Offering* b) {
    auto pa = a->usd_per_hour(filter.pricing), pb = b->usd_per_hour(filter.pricing);
    if (pa.has_value() != pb.has_value()) return pa.has_value();
    if (pa && *pa != *pb) return *pa < *pb;
    return a->key() < b->key();
  });
  return selected;
}

}  // namespace gw
