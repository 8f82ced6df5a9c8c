#include "catalog/offering.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/text.h"

namespace gw {

std::string_view pricing_name(Pricing pricing) {
  switch (pricing) {
    case Pricing::on_demand: return "on-demand";
    case Pricing::spot: return "spot";
    case Pricing::reserved_1y: return "reserved-1y";
    case Pricing::reserved_3y: return "reserved-3y";
  }
  return "on-demand";
}

std::optional<Pricing> parse_pricing(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "on-demand" || name == "ondemand") return Pricing::on_demand;
  if (name == "spot" || name == "preemptible") return Pricing::spot;
  if (name == "reserved-1y" || name == "1y") return Pricing::reserved_1y;
  if (name == "reserved-3y" || name == "3y") return Pricing::reserved_3y;
  return std::nullopt;
}

std::optional<double> Offering::usd_per_hour(Pricing pricing) const {
  switch (pricing) {
    case Pricing::on_demand: return on_demand_usd_per_hour;
    case Pricing::spot: return spot_usd_per_hour;
    case Pricing::reserved_1y: return reserved_1y_usd_per_hour;
    case Pricing::reserved_3y: return reserved_3y_usd_per_hour;
  }
  return std::nullopt;
}

std::string Offering::key() const {
  return cloud + "|" + region + "|" + zone + "|" + instance_type;
}

const std::vector<std::string>& offering_columns() {
  static const std::vector<std::string> columns = {
      "cloud", "region", "zone", "instance_type", "accelerator", "accelerator_count", "vcpus",
      "host_memory_gib", "on_demand_usd_per_hour", "spot_usd_per_hour",
      "reserved_1y_usd_per_hour", "reserved_3y_usd_per_hour", "price_scope", "source", "as_of", "notes"};
  return columns;
}

Result<Offering> parse_offering(const CsvTable& table, const CsvRow& row) {
  CsvRecord record(table, row);
  Offering offering;
  offering.cloud = to_lower(record.required_text("cloud"));
  offering.region = record.required_text("region");
  offering.zone = record.text("zone");
  offering.instance_type = record.required_text("instance_type");
  offering.accelerator = record.required_text("accelerator");
  offering.accelerator_count = static_cast<int>(record.number("accelerator_count", 1, 100000));
  offering.vcpus = record.optional_number("vcpus", 0, 1e5).value_or(0);
  offering.host_memory_gib = record.optional_number("host_memory_gib", 0, 1e7).value_or(0);
  // A price of zero is a placeholder in some catalogs: treat it as absent, not as free.
  auto price = [&](const char* column) -> std::optional<double> {
    auto value = record.optional_number(column, 0, 1e6);
    if (value && *value <= 0) return std::nullopt;
    return value;
  };
  offering.on_demand_usd_per_hour = price("on_demand_usd_per_hour");
  offering.spot_usd_per_hour = price("spot_usd_per_hour");
  offering.reserved_1y_usd_per_hour = price("reserved_1y_usd_per_hour");
  offering.reserved_3y_usd_per_hour = price("reserved_3y_usd_per_hour");
  offering.source = record.required_text("source");
  offering.as_of = record.required_text("as_of");
  offering.notes = record.text("notes");
  std::string scope = record.text("price_scope");
  if (!scope.empty() && scope != "instance" && scope != "gpu-only")
    return Error{table.file, row.line, "price_scope", "'" + scope + "' is not one of instance, gpu-only"};
  offering.gpu_only_price = scope == "gpu-only";
  if (!record.ok()) return record.error();
  return offering;
}

namespace {
std::string optional_cell(const std::optional<double>& value) {
  return value ? fmt::format("{}", *value) : std::string();
}
}  // namespace

std::string offerings_to_csv(const std::vector<Offering>& offerings) {
  std::string out;
  const auto& columns = offering_columns();
  for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + columns[i];
  out += "\n";
  for (const auto& o : offerings) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_quote(o.cloud),
                       csv_quote(o.region), csv_quote(o.zone), csv_quote(o.instance_type),
                       csv_quote(o.accelerator), o.accelerator_count, o.vcpus, o.host_memory_gib,
                       optional_cell(o.on_demand_usd_per_hour), optional_cell(o.spot_usd_per_hour),
                       o.reserved_is_assumption ? "" : optional_cell(o.reserved_1y_usd_per_hour),
                       o.reserved_is_assumption ? "" : optional_cell(o.reserved_3y_usd_per_hour),
                       o.gpu_only_price ? "gpu-only" : "instance", csv_quote(o.source), csv_quote(o.as_of), csv_quote(o.notes));
  }
  return out;
}

std::string local_zone(const Offering& o) {
  if (o.cloud != "aws") return "";
  // A regional zone ID is <region code>-az<n>: one dash. Local and Wavelength Zones add the metro.
  if (std::count(o.zone.begin(), o.zone.end(), '-') < 2) return "";
  return o.zone;
}

std::string offering_place(const Offering& o, Pricing pricing) {
  const std::string zone = pricing == Pricing::spot ? local_zone(o) : "";
  return zone.empty() ? o.region : o.region + " Local Zone " + zone;
}

std::string local_zone_spot_note(const Offering& o) {
  return fmt::format("spot for {} at ${:.4g}/h is the price in the AWS Local Zone {} beside {} (the snapshot's only spot row for "
                     "that type there): opt in (aws ec2 modify-availability-zone-group), give the cluster a subnet in it",
                     o.instance_type, o.spot_usd_per_hour.value_or(0), local_zone(o), o.region);
}

std::string_view cpu_architecture(const Offering& o) {
  if (o.accelerator == "GH200" || o.accelerator == "GB200") return "arm64";
  if (o.cloud == "aws") {
    // Family, generation, then attributes: g5g, c7gn, m7g; 'g' right after the generation is Graviton.
    const std::string& type = o.instance_type;
    size_t i = 0;
    while (i < type.size() && std::isalpha(static_cast<unsigned char>(type[i]))) ++i;
    size_t digits = i;
    while (i < type.size() && std::isdigit(static_cast<unsigned char>(type[i]))) ++i;
    if (i > digits && i < type.size() && type[i] == 'g') return "arm64";
  }
  return "x86_64";
}

std::optional<std::string_view> parse_cpu_architecture(std::string_view text) {
  if (text == "x86_64" || text == "amd64" || text == "x86-64") return std::string_view("x86_64");
  if (text == "arm64" || text == "aarch64") return std::string_view("arm64");
  return std::nullopt;
}

}  // namespace gw
