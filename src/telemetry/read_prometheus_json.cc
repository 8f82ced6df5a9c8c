// A Prometheus HTTP API answer saved as JSON.
#include "telemetry/format_readers.h"
#include "telemetry/reader_support.h"
#include <nlohmann/json.hpp>

namespace gw::reader_support {

std::optional<Error> read_prometheus_json(const std::string& path, const SampleHandler& emit, ReadStats& stats) {
  std::string text, message;
  if (!read_file(path, text, message)) return Error{path, 0, "", "cannot read: " + message};
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Error{path, line_of_offset(text, e.byte > 0 ? e.byte - 1 : 0), "", "invalid JSON: " + without_exception_id(e.what())};  } catch (const nlohmann::json::exception& e) {  // numbers out of range, and the like
    return Error{path, 0, "", "invalid JSON: " + without_exception_id(e.what())};
  }
  // Shapes are checked before use: nlohmann's accessors throw on the wrong type.
  if (!doc.is_object() || !doc.contains("status") || doc["status"] != "success" || !doc.contains("data") ||
      !doc["data"].is_object() || !doc["data"].contains("result") || !doc["data"]["result"].is_array())
    return Error{path, 1, "status", "not a successful Prometheus query response"};
  std::set<std::pair<const std::string*, int>> seen;
  for (const auto& series : doc["data"]["result"]) {
    if (!series.is_object() || !series.contains("metric") || !series["metric"].is_object()) {
      stats.skip("malformed series (no metric labels)");
      continue;
    }
    const auto& labels_json = series["metric"];
    std::string name = labels_json.contains("__name__") && labels_json["__name__"].is_string() ? labels_json["__name__"].get<std::string>() : "";
    std::optional<Metric> metric;
    double scale = 1;
    if (auto known = metric_by_name(name)) {
      metric = known->metric;
      scale = known->scale;
    }
    if (!metric) {
      stats.skip("series without a known __name__");
      continue;
    }
    Labels labels;
    for (const auto& [k, v] : series["metric"].items())
      if (k != "__name__" && v.is_string()) labels.emplace_back(canonical_label_key(k), v.get<std::string>());
    auto [id, interned] = table().intern(std::move(labels));
    // The same series twice (merged responses): count it once.
    if (!seen.insert({id, static_cast<int>(*metric)}).second) {
      stats.skip("duplicate series");
      continue;
    }
    if (!series.contains("values") || !series["values"].is_array()) {
      stats.skip("malformed series (no values list)");
      continue;
    }
    for (const auto& point : series["values"]) {
      ++stats.lines;
      if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_string()) {
        stats.skip("malformed point");
        continue;
      }
      auto v = parse_finite_double(point[1].get<std::string>());
      if (!v) {
        stats.skip("value not a number");
        continue;
      }
      emit({id, interned, *metric, point[0].get<double>(), *v * scale});
      ++stats.samples;
    }
  }
  return std::nullopt;
}

}  // namespace gw::reader_support
