// The catalog every command reads: accelerators, cloud offerings with prices, per-cloud
// commitment discounts and instance network facts. Built from the embedded catalog/ CSVs, then
// extended or overridden by the CSVs of a --catalog folder.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/accelerator.h"
#include "catalog/offering.h"
#include "core/error.h"

namespace gw {

// A committed-use discount for a cloud: a published figure or a labelled assumption.
struct Commitment {
  std::string cloud;
  double discount_1y = 0;  // fraction off on-demand
  double discount_3y = 0;
  bool assumption = true;
  std::string source;
  std::string as_of;
};

// Network facts of an instance type, joined to every offering of that type.
struct InstanceNetwork {
  std::optional<double> network_gbps;
  std::string fabric;
  std::string spot_interruption;
  std::string source;
};

struct OfferingFilter {
  std::vector<std::string> clouds;        // empty: all
  std::vector<std::string> regions;       // prefixes, e.g. "us-east", "europe-"; empty: all
  std::string geo;                        // us, europe, asia; empty: all
  std::vector<std::string> accelerators;  // names or aliases; empty: all
  double min_vram_gib = 0;                // per accelerator
  std::optional<double> max_usd_per_hour;
  Pricing pricing = Pricing::on_demand;   // the price the filter and the sort use
  bool complete_prices_only = false;      // leave out GPU-only prices (no host VM)
};

class Catalog {
 public:
  // The default catalog compiled into the binary.
  static Result<Catalog> embedded();

  // Adds or replaces rows from the CSV files present in dir (accelerators.csv, offerings.csv,
  // commitments.csv, instance_types.csv). Returns an error naming file, line and field.
  std::optional<Error> apply_overrides(const std::string& dir);

  std::optional<Error> add_accelerators_csv(std::string_view text, const std::string& file);
  std::optional<Error> add_offerings_csv(std::string_view text, const std::string& file);
  std::optional<Error> add_commitments_csv(std::string_view text, const std::string& file);
  std::optional<Error> add_instance_types_csv(std::string_view text, const std::string& file);

  const std::vector<Accelerator>& accelerators() const { return accelerators_; }
  const std::vector<Offering>& offerings() const { return offerings_; }
  const std::map<std::string, Commitment>& commitments() const { return commitments_; }

  // By name or alias, ignoring case and punctuation; nullptr when unknown.
  const Accelerator* find_accelerator(std::string_view name) const;
  // A name a person typed: the accelerator, or why not: unknown (with the closest name) or
  // ambiguous (a family name such as "A100" or "V100" that several parts begin with, listed).
  // Data from clouds keeps using find_accelerator, where "A100" is SkyPilot's 40 GB part.
  Result<const Accelerator*> accelerator_named(std::string_view name) const;
  // Names of all accelerators, for suggestions.
  std::vector<std::string> accelerator_names() const;

  // Offerings that pass the filter, cheapest first by the filter's pricing (unpriced last).
  std::vector<const Offering*> select(const OfferingFilter& filter) const;

 private:
  // Fills network facts and derived committed prices; run after every change.
  void refresh_derived();

  std::vector<Accelerator> accelerators_;
  std::vector<Offering> offerings_;
  std::map<std::string, Commitment> commitments_;
  std::map<std::string, InstanceNetwork> networks_;  // key: cloud|instance_type
};

// us, europe, asia or other, from a cloud's region name.
std::string region_geo(const std::string& cloud, const std::string& region);

}  // namespace gw
