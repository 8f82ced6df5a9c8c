#include "catalog/skypilot_import.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <set>

#include "core/numbers.h"
#include "core/text.h"

namespace gw {

namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The accelerator a row really has where SkyPilot's name is ambiguous between form factors.
std::string refine_accelerator(const std::string& cloud, const std::string& instance_type,
                               const std::string& name, int count) {
  std::string type = to_lower(instance_type);
  if (cloud == "azure") {
    // NC A100 v4 carries PCIe A100 80GB; NC H100 v5 carries H100 NVL (Azure VM size pages).
    if (name == "A100-80GB" && contains(type, "standard_nc")) return "A100-80GB-PCIE";
    if (name == "H100" && contains(type, "standard_nc")) return "H100-NVL";
  }
  if (cloud == "lambda") {
    bool sxm = contains(type, "sxm") || count == 8;
    if (name == "A100" && !sxm) return "A100-40GB-PCIE";
    if (name == "H100" && contains(type, "pcie")) return "H100-PCIE";
  }
  if (cloud == "runpod") {
    // RunPod lists PCIe cards under the bare name and SXM ones with an -SXM suffix.
    if (name == "A100-80GB") return "A100-80GB-PCIE";
    if (name == "H100") return "H100-PCIE";
  }
  return name;
}

// TPU slice names count TensorCores for v2, v3, v4 and v5p (two per chip) and chips otherwise.
bool parse_tpu(const std::string& name, std::string& accelerator, int& chips) {
  if (name.rfind("tpu-", 0) != 0) return false;
  size_t dash = name.rfind('-');
  auto size = parse_integer(name.substr(dash + 1), 1, 1000000);
  if (!size || dash <= 4) return false;
  std::string family = name.substr(4, dash - 4);  // v5p, v5litepod, v6e, v4 ...
  bool two_cores_per_chip = family == "v2" || family == "v3" || family == "v4" || family == "v5p";
  chips = static_cast<int>(two_cores_per_chip ? std::max(1LL, *size / 2) : *size);
  accelerator = "tpu-" + family;
  return true;
}

// GCP machine types whose GPUs are priced in separate attachable-accelerator rows.
bool gcp_machine_gpus(const std::string& machine, std::string& accelerator, int& count) {
  struct Family {
    const char* prefix;
    const char* accelerator;
  };
  static const Family kFamilies[] = {{"a2-highgpu-", "A100"},    {"a2-megagpu-", "A100"},
                                     {"a2-ultragpu-", "A100-80GB"}, {"a3-highgpu-", "H100"},
                                     {"a3-edgegpu-", "H100"},    {"a3-megagpu-", "H100-MEGA"},
                                     {"a3-ultragpu-", "H200"},   {"a4-highgpu-", "B200"}};
  for (const auto& family : kFamilies) {
    std::string prefix = family.prefix;
    if (machine.rfind(prefix, 0) != 0) continue;
    size_t g = machine.find('g', prefix.size());
    auto n = parse_integer(machine.substr(prefix.size(), g - prefix.size()), 1, 64);
    if (!n) return false;
    accelerator = family.accelerator;
    count = static_cast<int>(*n);
    return true;
  }
  if (machine.rfind("g2-standard-", 0) == 0) {
    // G2 shapes: 4, 8, 12, 16, 32 vCPUs have 1 L4; 24 has 2; 48 has 4; 96 has 8.
    auto vcpus = parse_integer(machine.substr(12), 1, 1000);
    if (!vcpus) return false;
    accelerator = "L4";
    count = *vcpus == 24 ? 2 : *vcpus == 48 ? 4 : *vcpus == 96 ? 8 : 1;
    return true;
  }
  return false;
}

struct RawRow {
  int line = 0;
  std::string instance_type, accelerator, region, zone;
  double count = 0, vcpus = 0, memory_gib = 0;
  std::optional<double> price, spot;
};

// The rows of a vms.csv as read, prices of 0.0 (placeholders, not free) dropped.
Result<std::vector<RawRow>> read_rows(const CsvTable& table, SkypilotImport& result) {
  std::vector<RawRow> rows;
  for (const auto& row : table.rows) {
    CsvRecord record(table, row);
    RawRow raw;
    raw.line = row.line;
    raw.instance_type = record.text("InstanceType");
    raw.accelerator = record.text("AcceleratorName");
    raw.region = record.required_text("Region");
    raw.zone = record.text("AvailabilityZone");
    raw.count = record.optional_number("AcceleratorCount", 0, 1e6).value_or(0);
    raw.vcpus = record.optional_number("vCPUs", 0, 1e6).value_or(0);
    raw.memory_gib = record.optional_number("MemoryGiB", 0, 1e8).value_or(0);
    raw.price = record.optional_number("Price", 0, 1e7);
    raw.spot = record.optional_number("SpotPrice", 0, 1e7);
    if (!record.ok()) return record.error();
    if (raw.price && *raw.price <= 0) raw.price.reset();  // 0.0 is a placeholder, not free
    if (raw.spot && *raw.spot <= 0) raw.spot.reset();
    rows.push_back(std::move(raw));
    ++result.rows_read;
  }
  return rows;
}

// Placeholder prices: a per-device price over ten times the median of the same accelerator
// in this file is not a price a user can get (e.g. 700.0 for every v6e slice in one region).
void drop_placeholder_prices(SkypilotImport& result) {
  std::map<std::string, std::vector<double>> per_device;
  for (const auto& o : result.offerings)
    if (o.on_demand_usd_per_hour) per_device[o.accelerator].push_back(*o.on_demand_usd_per_hour / o.accelerator_count);
  std::map<std::string, double> median;
  for (auto& [name, prices] : per_device) {
    std::nth_element(prices.begin(), prices.begin() + static_cast<long>(prices.size() / 2), prices.end());
    median[name] = prices[prices.size() / 2];
  }
  // And one price repeated for three or more sizes of one accelerator in a region is a
  // placeholder too: a 256-chip slice does not cost what one chip costs.
  std::map<std::string, std::set<int>> sizes_at_price;
  auto price_key = [](const Offering& o) {
    return fmt::format("{}|{}|{}", o.region, o.accelerator, *o.on_demand_usd_per_hour);
  };
  for (const auto& o : result.offerings)
    if (o.on_demand_usd_per_hour) sizes_at_price[price_key(o)].insert(o.accelerator_count);
  std::vector<Offering> kept;
  for (auto& o : result.offerings) {
    if (o.on_demand_usd_per_hour && sizes_at_price[price_key(o)].size() >= 3) {
      ++result.skipped["one price for three or more sizes of an accelerator in a region: placeholder"];
      continue;
    }
    if (o.on_demand_usd_per_hour && per_device[o.accelerator].size() >= 3 &&
        *o.on_demand_usd_per_hour / o.accelerator_count > 10 * median[o.accelerator]) {
      ++result.skipped["implausible price (over 10x the median for its accelerator): placeholder"];
      continue;
    }
    kept.push_back(std::move(o));
  }
  result.offerings = std::move(kept);
}

}  // namespace

Result<SkypilotImport> import_skypilot_csv(std::string_view text, const std::string& file,
                                           const std::string& cloud_name, const Catalog& catalog,
                                           const SkypilotImportOptions& options) {
  std::string cloud = to_lower(cloud_name);
  auto table = parse_csv(text, file);
  if (!table.ok()) return table.error();
  for (const auto& column : {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price",
                             "SpotPrice", "Region"})
    if (table.value().column(column) < 0)
      return Error{file, 1, column, "missing column: not a SkyPilot vms.csv catalog"};

  SkypilotImport result;
  result.files_read.push_back(file);
  auto read = read_rows(table.value(), result);
  if (!read.ok()) return read.error();
  const std::vector<RawRow>& rows = read.value();

  std::string source = fmt::format("skypilot-catalog {}/vms.csv{}", cloud,
                                   options.source.empty() ? "" : " (" + options.source + ")");
  auto skip = [&](const std::string& reason) { ++result.skipped[reason]; };
  std::set<std::string> seen;
  auto emit = [&](Offering offering) {
    if (!seen.insert(offering.key()).second) {
      skip("duplicate row (same cloud, region, zone and instance type)");
      return;
    }
    result.offerings.push_back(std::move(offering));
  };

  // GCP attachable-accelerator rows, for pricing machine types: region|name|count -> row.
  std::map<std::string, const RawRow*> attachable;
  if (cloud == "gcp")
    for (const auto& raw : rows)
      if (raw.instance_type.empty() && !raw.accelerator.empty())
        attachable[fmt::format("{}|{}|{}", raw.region, raw.accelerator, raw.count)] = &raw;

  for (const auto& raw : rows) {
    Offering offering;
    offering.cloud = cloud;
    offering.region = raw.region;
    offering.zone = raw.zone;
    offering.instance_type = raw.instance_type;
    offering.vcpus = raw.vcpus;
    offering.host_memory_gib = raw.memory_gib;
    offering.on_demand_usd_per_hour = raw.price;
    offering.spot_usd_per_hour = raw.spot;
    offering.source = source;
    offering.as_of = options.as_of;
    std::string accelerator_name = raw.accelerator;
    double count = raw.count;
    std::vector<std::string> notes;

    if (cloud == "gcp" && raw.instance_type.empty()) {
      std::string tpu;
      int chips = 0;
      if (parse_tpu(raw.accelerator, tpu, chips)) {
        offering.instance_type = raw.accelerator;
        accelerator_name = tpu;
        count = chips;
        notes.push_back("TPU slice; price for the whole slice");
      } else if (raw.accelerator == "T4" || raw.accelerator == "V100" || raw.accelerator == "P4" ||
                 raw.accelerator == "P100") {
        offering.instance_type = fmt::format("n1+{}x{}", raw.count, raw.accelerator);
        notes.push_back("GPU price only: add the N1 host VM, which this catalog does not price");
        offering.gpu_only_price = true;
      } else {
        continue;  // priced through the machine types that carry it
      }
    } else if (cloud == "gcp" && raw.accelerator.empty()) {
      int gpus = 0;
      if (!gcp_machine_gpus(raw.instance_type, accelerator_name, gpus)) {
        skip("machine type without a known accelerator");
        continue;
      }
      count = gpus;
      auto gpu_row = attachable.find(fmt::format("{}|{}|{}", raw.region, accelerator_name, gpus));
      if (gpu_row == attachable.end()) {
        skip("GCP machine type without a GPU price row in its region");
        continue;
      }
      const RawRow& gpu = *gpu_row->second;
      offering.on_demand_usd_per_hour =
          raw.price && gpu.price ? std::optional<double>(*raw.price + *gpu.price) : std::nullopt;
      offering.spot_usd_per_hour =
          raw.spot && gpu.spot ? std::optional<double>(*raw.spot + *gpu.spot) : std::nullopt;
      notes.push_back("machine price plus attached GPU price");
    } else if (raw.accelerator.empty()) {
      skip("no accelerator");
      continue;
    }

    if (cloud == "azure" && raw.instance_type == "Standard_ND96isr_H100_v5" && count == 12) {
      count = 8;  // the source says 12; the VM size has 8 H100s (Azure ND H100 v5 page)
      notes.push_back("accelerator count corrected from 12 to 8");
    }
    if (count < 1 || count != std::floor(count)) {
      skip("fractional GPU share (not modelled)");
      continue;
    }
    offering.accelerator_count = static_cast<int>(count);
    accelerator_name =
        refine_accelerator(cloud, offering.instance_type, accelerator_name, offering.accelerator_count);
    const Accelerator* accelerator = catalog.find_accelerator(accelerator_name);
    if (!accelerator) {
      skip("accelerator not in the catalog: " + accelerator_name);
      continue;
    }
    offering.accelerator = accelerator->name;
    if (!offering.on_demand_usd_per_hour && !offering.spot_usd_per_hour) {
      skip("no price");
      continue;
    }
    if (offering.spot_usd_per_hour && offering.on_demand_usd_per_hour) {
      if (*offering.spot_usd_per_hour == *offering.on_demand_usd_per_hour) {
        offering.spot_usd_per_hour.reset();
        notes.push_back("source spot price equals on-demand: treated as no spot market");
      } else if (*offering.spot_usd_per_hour > *offering.on_demand_usd_per_hour) {
        notes.push_back("source spot price above on-demand");
      }
    }
    if (!offering.on_demand_usd_per_hour) notes.push_back("spot only in source");
    for (size_t i = 0; i < notes.size(); ++i) offering.notes += (i ? "; " : "") + notes[i];
    emit(std::move(offering));
  }

  drop_placeholder_prices(result);
  return result;
}

Result<SkypilotImport> import_skypilot(const std::string& dir, const Catalog& catalog,
                                       const SkypilotImportOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error{dir, 0, "--skypilot", "not a readable directory"};
  std::vector<std::pair<std::string, std::string>> files;  // cloud, path
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".csv")
      files.emplace_back(entry.path().stem().string(), entry.path().string());
    else if (entry.is_directory() && fs::exists(entry.path() / "vms.csv"))
      files.emplace_back(entry.path().filename().string(), (entry.path() / "vms.csv").string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty())
    return Error{dir, 0, "--skypilot", "no <cloud>.csv or <cloud>/vms.csv files found"};
  SkypilotImport all;
  for (const auto& [cloud, path] : files) {
    std::string text, message;
    if (!read_file(path, text, message)) return Error{path, 0, "", "cannot read: " + message};
    auto one = import_skypilot_csv(text, path, cloud, catalog, options);
    if (!one.ok()) return one.error();
    all.rows_read += one.value().rows_read;
    all.files_read.push_back(path);
    for (auto& [reason, n] : one.value().skipped) all.skipped[cloud + ": " + reason] += n;
    for (auto& offering : one.value().offerings) all.offerings.push_back(std::move(offering));
  }
  return all;
}

}  // namespace gw
