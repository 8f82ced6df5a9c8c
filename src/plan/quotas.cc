#include "plan/quotas.h"

#include <algorithm>
#include <cctype>

#include "core/text.h"

#include <fmt/format.h>

namespace gw {

namespace {

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// GCP's GPU quota metrics (compute.googleapis.com, per region), as Compute Engine names them:
// https://cloud.google.com/compute/resource-usage#gpu_quota (read 2026-12-01). The 40 GB A100
// is NVIDIA_A100_GPUS, the 80 GB one NVIDIA_A100_80GB_GPUS; A3 Mega's H100s have their own.
std::string gcp_gpu_metric(const Offering& o) {
  static const std::pair<const char*, const char*> names[] = {
      {"A100-40GB", "NVIDIA_A100_GPUS"}, {"A100-80GB", "NVIDIA_A100_80GB_GPUS"}, {"V100-16GB", "NVIDIA_V100_GPUS"},
      {"H100", "NVIDIA_H100_GPUS"},      {"H200", "NVIDIA_H200_GPUS"},         {"B200", "NVIDIA_B200_GPUS"},
      {"L4", "NVIDIA_L4_GPUS"},          {"T4", "NVIDIA_T4_GPUS"},             {"P100", "NVIDIA_P100_GPUS"},
      {"P4", "NVIDIA_P4_GPUS"}};
  if (o.accelerator == "H100" && o.instance_type.rfind("a3-megagpu", 0) == 0) return "NVIDIA_H100_MEGA_GPUS";
  for (const auto& [part, metric] : names)
    if (o.accelerator == part) return metric;
  std::string name = upper(o.accelerator);
  for (char& c : name)
    if (c == '-') c = '_';
  return "NVIDIA_" + name + "_GPUS";
}

bool is_tpu(const Offering& o) { return o.accelerator.rfind("TPU-", 0) == 0; }

// Standard_NC24ads_A100_v4 -> standardNCADSA100v4Family (Azure's quota name for the family):
// the series letters and feature letters around the vCPU count, then the other name parts.
std::string azure_family(const std::string& size) {
  std::string name = size.rfind("Standard_", 0) == 0 ? size.substr(9) : size;
  std::string first = name.substr(0, name.find('_'));
  std::string rest = name.size() > first.size() ? name.substr(first.size() + 1) : "";
  std::string series, features;
  size_t i = 0;
  while (i < first.size() && std::isalpha(static_cast<unsigned char>(first[i]))) series += first[i++];
  while (i < first.size() && std::isdigit(static_cast<unsigned char>(first[i]))) ++i;
  features = first.substr(i);
  std::string tail;
  for (char c : rest)
    if (c != '_') tail += c;
  return "standard" + upper(series) + upper(features) + tail + "Family";
}

// Lead times users report for GPU quota increases; not a published service level.
std::string lead_time(const std::string& cloud) {
  if (cloud == "aws") return "usually hours to a few business days for GPU families (Service Quotas request)";
  if (cloud == "gcp") return "usually 1-3 business days for GPU quotas (IAM & Admin > Quotas request)";
  if (cloud == "azure") return "usually 1-3 business days for GPU VM families (support request)";
  return "";
}

}  // namespace

QuotaFamily quota_family(const Offering& o, Pricing pricing) {
  QuotaFamily f;
  const bool spot = pricing == Pricing::spot;
  if (o.cloud == "aws") {
    std::string type = to_lower(o.instance_type);
    std::string letters;
    for (char c : type) {
      if (!std::isalpha(static_cast<unsigned char>(c))) break;
      letters += c;
    }
    std::string name;
    if (letters == "p") name = "p";
    else if (letters == "g" || letters == "gr" || letters == "vt") name = "g-and-vt";
    else if (letters == "inf") name = "inf";
    else if (letters == "trn") name = "trn";
    else if (letters == "dl") name = "dl";
    else name = "standard";
    f.family = spot ? "all-" + name + "-spot-instance-requests-vcpu" : "running-on-demand-" + name + "-instances-vcpu";
    f.unit = "vCPUs";
    f.units_per_instance = o.vcpus;
  } else if (o.cloud == "gcp" && is_tpu(o)) {
    // Cloud TPU quotas live under the TPU API, per version and zone, on-demand and preemptible
    // apart (https://cloud.google.com/tpu/docs/quota, read 2026-12-01).
    f.family = fmt::format("tpu.googleapis.com {} {}", o.accelerator, spot ? "preemptible" : "on-demand");
    f.unit = "chips";
    f.units_per_instance = o.accelerator_count;
  } else if (o.cloud == "gcp") {
    f.family = (spot ? "PREEMPTIBLE_" : "") + gcp_gpu_metric(o);
    f.unit = "GPUs";
    f.units_per_instance = o.accelerator_count;
  } else if (o.cloud == "azure") {
    if (spot) {
      f.family = "lowPriorityCores";
    } else {
      f.family = azure_family(o.instance_type);
    }
    f.unit = "vCPUs";
    f.units_per_instance = o.vcpus;
  }
  return f;
}

std::vector<QuotaNeed> quota_needs(const std::vector<QuotaUse>& uses, const QuotaLimits& limits) {
  std::vector<QuotaNeed> needs;
  for (const auto& use : uses) {
    if (!use.offering) continue;
    QuotaFamily f = quota_family(*use.offering, use.pricing);
    if (f.family.empty()) continue;
    const Offering& o = *use.offering;
    auto it = std::find_if(needs.begin(), needs.end(), [&](const QuotaNeed& n) {
      return n.cloud == o.cloud && n.region == o.region && n.family == f.family;
    });
    if (it == needs.end()) {
      QuotaNeed n;
      n.cloud = o.cloud;
      n.region = o.region;
      n.family = f.family;
      n.unit = f.unit;
      n.lead_time = lead_time(o.cloud);
      needs.push_back(n);
      it = needs.end() - 1;
    }
    it->needed += use.instances * f.units_per_instance;
    if (std::find(it->by.begin(), it->by.end(), use.by) == it->by.end()) it->by.push_back(use.by);
  }
  for (auto& n : needs) {
    for (const std::string& key : {n.cloud, n.cloud + "/" + n.region}) {
      auto cloud = limits.find(key);
      if (cloud == limits.end()) continue;
      for (const auto& [family, amount] : cloud->second)
        if (to_lower(family) == to_lower(n.family)) n.have = amount;
    }
  }
  return needs;
}

}  // namespace gw
