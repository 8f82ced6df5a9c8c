// A rentable instance: a cloud's instance type in a region, its accelerators and its prices.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/csv.h"

namespace gw {

enum class Pricing { on_demand, spot, reserved_1y, reserved_3y };

std::string_view pricing_name(Pricing pricing);
std::optional<Pricing> parse_pricing(std::string_view text);

struct Offering {
  std::string cloud;
  std::string region;
  std::string zone;
  std::string instance_type;
  std::string accelerator;  // canonical accelerator name in the catalog
  int accelerator_count = 0;
  double vcpus = 0;
  double host_memory_gib = 0;
  std::optional<double> network_gbps;  // instance network, gigabits per second
  std::string fabric;                  // efa, infiniband, gpudirect-tcpx, ... or empty
  std::optional<double> on_demand_usd_per_hour;
  std::optional<double> spot_usd_per_hour;
  std::optional<double> reserved_1y_usd_per_hour;
  std::optional<double> reserved_3y_usd_per_hour;
  bool reserved_is_assumption = false;  // committed prices derived from a per-cloud discount
  std::string spot_interruption;        // published interruption bucket, e.g. "<5%"
  std::string source;
  std::string as_of;
  std::string notes;
  bool gpu_only_price = false;  // the price leaves out the host VM (GCP N1-attached GPUs)

  std::optional<double> usd_per_hour(Pricing pricing) const;
  // Identity for overrides: one row per cloud, region, zone and instance type.
  std::string key() const;
};

// The host CPU's architecture, which the serving image must be built for: "arm64" for Grace
// hosts (GH200, GB200) and AWS's Graviton families (a 'g' after the generation: g5g), else
// "x86_64".
std::string_view cpu_architecture(const Offering& offering);
// The AWS Local Zone (or Wavelength Zone) a row's prices come from: its zone ID, which names a
// metro beside the region's code (use1-atl2-az1, usw2-lax1-az1; a regional zone is use1-az2).
// Such zones are opted into per account and a cluster reaches them only through a subnet there;
// a spot price seen there is that zone's, not the region's. Empty for any other row.
std::string local_zone(const Offering& offering);
// The words a plan names its nodes' place with: the region, and where spot is priced in a Local
// Zone, that zone ("us-east-1 Local Zone use1-atl2-az1").
std::string offering_place(const Offering& offering, Pricing pricing);
// What a spot price in a Local Zone asks of whoever uses it: the opt-in and a subnet there.
std::string local_zone_spot_note(const Offering& offering);

// "x86_64" or "arm64" from the names people use (amd64, aarch64 too); nullopt otherwise.
std::optional<std::string_view> parse_cpu_architecture(std::string_view text);

const std::vector<std::string>& offering_columns();

// Reads one row of offerings.csv (accelerator names are resolved by the Catalog).
Result<Offering> parse_offering(const CsvTable& table, const CsvRow& row);

// Writes offerings in the offerings.csv format (used by the SkyPilot importer).
std::string offerings_to_csv(const std::vector<Offering>& offerings);

}  // namespace gw
