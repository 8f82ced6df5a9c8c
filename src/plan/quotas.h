// Cloud quotas a plan needs, in each cloud's own unit and family: AWS counts vCPUs of running
// instances per family ("Running On-Demand G and VT instances", and the spot counterparts), GCP
// counts GPUs per model and region (NVIDIA_L4_GPUS, PREEMPTIBLE_...), Azure counts vCPUs per VM
// family. Checked against the quotas a spec says the account has; a shortfall names the request
// to file and its usual lead time.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/offering.h"

namespace gw {

struct QuotaUse {
  const Offering* offering = nullptr;
  Pricing pricing = Pricing::on_demand;
  int instances = 0;
  std::string by;  // the service or training job
};

struct QuotaNeed {
  std::string cloud, region, family, unit;  // unit: vCPUs or GPUs
  double needed = 0;
  std::optional<double> have;               // from the spec, when it says
  std::vector<std::string> by;
  std::string lead_time;                    // when a request must be filed
  bool short_of_quota() const { return have && *have < needed; }
};

// The quota family and unit of an offering at a pricing, and how many units one instance uses;
// an empty family for clouds without quotas on these instances.
struct QuotaFamily {
  std::string family, unit;
  double units_per_instance = 0;
};
QuotaFamily quota_family(const Offering& offering, Pricing pricing);

// Quotas given as cloud -> family -> amount, or "cloud/region" -> family -> amount (region wins);
// the spec's constraints.quotas.
using QuotaLimits = std::map<std::string, std::map<std::string, double>>;

std::vector<QuotaNeed> quota_needs(const std::vector<QuotaUse>& uses, const QuotaLimits& limits);

}  // namespace gw
