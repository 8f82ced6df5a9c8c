// The simulation's writers: the JSON `gpuwise simulate --format json` prints
// (schemas/simulate.schema.json), and the text and report document of the other formats.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "plan/simulate_spec.h"
#include "report/document.h"

namespace gw {

nlohmann::json to_json(const SimulateResult& result);

struct SimulateReport {
  std::string text;   // the table format; --explain adds each service's assumptions
  Document document;  // Markdown and HTML
};
SimulateReport simulate_report(const SimulateResult& result, bool explain);

}  // namespace gw
