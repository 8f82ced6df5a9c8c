// For tests of Kubernetes manifests: YAML read as the API server reads it, as JSON for the
// schema validators.
#pragma once

#include <exception>
#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace gw::testing_support {

// A YAML map of strings (labels, a selector) as a std::map.
inline std::map<std::string, std::string> string_map(const YAML::Node& node) {
  std::map<std::string, std::string> out;
  for (const auto& entry : node) out[entry.first.as<std::string>()] = entry.second.as<std::string>();
  return out;
}

// Manifests (file_name, yaml) read as the API server reads them, by file name.
template <typename Manifests>
std::map<std::string, YAML::Node> by_file_name(const Manifests& manifests) {
  std::map<std::string, YAML::Node> out;
  for (const auto& m : manifests) out[m.file_name] = YAML::Load(m.yaml);
  return out;
}

// Whether a label selector (a non-empty one) takes objects with these labels.
inline bool selects(const std::map<std::string, std::string>& selector, const std::map<std::string, std::string>& labels) {
  for (const auto& [key, value] : selector)
    if (!labels.count(key) || labels.at(key) != value) return false;
  return !selector.empty();
}

// YAML to JSON as Kubernetes reads it: quoted scalars are strings, plain ones typed.
inline nlohmann::json to_json(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& entry : node) out[entry.first.as<std::string>()] = to_json(entry.second);
    return out;
  }
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : node) out.push_back(to_json(item));
    return out;
  }
  if (node.IsNull()) return nullptr;
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted
  if (text == "true" || text == "false") return text == "true";
  try {
    size_t used = 0;
    long long integer = std::stoll(text, &used);
    if (used == text.size()) return integer;
    double number = std::stod(text, &used);
    if (used == text.size()) return number;
  } catch (const std::exception&) {
  }
  return text;
}

}  // namespace gw::testing_support
