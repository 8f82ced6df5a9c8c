// What the spec parser's parts share (internal to src/spec): the YAML reader that names file,
// line and field in every error, and the readers of each section, one file per part:
// spec.cc (models, training, the whole document), spec_service.cc (services: traffic, tokens,
// deployment, scaling), spec_fleet.cc (the fleet section).
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/cron.h"
#include "core/numbers.h"
#include "core/text.h"
#include "model/hf_config.h"
#include "model/presets.h"
#include "spec/spec.h"

namespace gw::spec_reading {

struct SpecError {
  Error error;
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& message) const {
    int line = node.IsDefined() ? node.Mark().line + 1 : 0;
    throw SpecError{Error{file_, line, key, message}};
  }

  // Rejects keys outside allowed, suggesting the closest allowed one.
  void check_keys(const YAML::Node& node, const std::string& path, const std::vector<std::string>& allowed) const {
    if (!node.IsMap()) fail(node, path, "expected a mapping of keys");
    for (const auto& entry : node) {
      std::string key = entry.first.as<std::string>();
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string hint = closest_match(key, allowed);
      fail(entry.first, join(path, key),
           "unknown key" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
               "; allowed here: " + list(allowed));
    }
  }

  double number(const YAML::Node& node, const std::string& key, double min, double max) const {
    if (!node.IsScalar()) fail(node, key, "expected a number");
    std::string text = node.Scalar();
    double value = 0;
    try {
      size_t used = 0;
      value = std::stod(text, &used);
      if (used != text.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      // Seconds fields (ttft_p99_s, ...) take a unit as people write one: "500ms", "2 s".
      const bool seconds = key.size() > 2 && key.compare(key.size() - 2, 2, "_s") == 0;
      auto duration = seconds ? parse_seconds(text) : std::nullopt;
      if (!duration)
        fail(node, key, "'" + text + "' is not a finite number" + (seconds ? " of seconds (a number, or with ms, s, m, h)" : ""));
      value = *duration;
    }
    if (!std::isfinite(value)) fail(node, key, "must be a finite number");
    if (value < min || value > max) fail(node, key, fmt::format("{} is outside [{}, {}]", text, min, max));
    return value;
  }

  // A count that may carry a unit suffix ("2T", "500B", "8k", "128Ki": core/numbers.h).
  double count(const YAML::Node& node, const std::string& key, double min, double max) const {
    if (!node.IsScalar()) fail(node, key, "expected a number");
    auto value = parse_count(node.Scalar());
    if (!value) fail(node, key, "'" + node.Scalar() + "' is not a count (a number, optionally with k, M, B, T, Ki, Mi or Gi)");
    if (*value < min || *value > max) fail(node, key, fmt::format("{} is outside [{}, {}]", node.Scalar(), min, max));
    return *value;
  }

  bool flag(const YAML::Node& node, const std::string& key) const {
    if (node.IsScalar()) {
      const std::string& v = node.Scalar();
      if (v == "true" || v == "True" || v == "yes" || v == "on") return true;
      if (v == "false" || v == "False" || v == "no" || v == "off") return false;
    }
    fail(node, key, "expected true or false");
  }

  std::string text(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected a string");
    return node.Scalar();
  }

  std::vector<std::string> strings(const YAML::Node& node, const std::string& key) const {
    std::vector<std::string> out;
    if (node.IsScalar()) return {node.Scalar()};
    if (!node.IsSequence()) fail(node, key, "expected a list of strings");
    for (const auto& item : node) out.push_back(text(item, key));
    return out;
  }

  static std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
  static std::string list(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// Lognormal quantiles matching a mean and a p99, or a fixed value when only the mean is given.
TokenDistribution distribution_from(double mean, std::optional<double> p99);
// An hourly profile by name (flat, diurnal, weekday-business-hours, weekdays-only); {-1}: unknown.
std::vector<double> named_profile(const std::string& name);
// services[index] (spec_service.cc).
ServiceSpec read_service(const Reader& r, const YAML::Node& node, size_t index, Spec& spec, const std::string& base_dir);
// One entry of batch_jobs: its model must be one of spec.models (read before it).
BatchJobSpec read_batch_job(const Reader& r, const YAML::Node& node, size_t index, Spec& spec);
// The fleet section (spec_fleet.cc).
FleetSpec read_fleet(const Reader& r, const YAML::Node& node, Spec& spec);

}  // namespace gw::spec_reading
