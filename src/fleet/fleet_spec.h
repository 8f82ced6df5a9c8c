// The fleet question (`gpuwise fleet SPEC`, the spec's fleet section): projects on a shared pool
// against static allocation (with schedule shifts that lower the peak), models sharing pools,
// request buckets across accelerators, owning against renting (break-even, hybrid), and what-if
// optimizations of a service with their payback.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "perf/efficiency.h"
#include "report/document.h"
#include "report/table.h"
#include "spec/spec.h"

namespace gw {

struct FleetSpecOptions {
  const Calibration* calibration = nullptr;  // not owned; must outlive the call
  uint64_t seed = 1;                         // for the what-if plans' simulations
};

// What `gpuwise fleet` writes: the terminal text, the report document and the JSON, each
// section added to all three.
struct FleetReport {
  std::string text;
  Document doc;
  nlohmann::json out = nlohmann::json::object();

  void add_section(const std::string& heading, std::vector<std::string> paragraphs, std::vector<Table> tables,
                   std::vector<Chart> charts = {}) {
    for (const auto& p : paragraphs) text += p + "\n";
    for (const auto& t : tables) text += render_text(t);
    text += "\n";
    Section section;
    section.heading = heading;
    section.paragraphs = std::move(paragraphs);
    section.tables = std::move(tables);
    section.charts = std::move(charts);
    doc.sections.push_back(std::move(section));
  }
  void assume(const std::vector<std::string>& assumptions) {
    doc.assumptions.insert(doc.assumptions.end(), assumptions.begin(), assumptions.end());
  }
};


// An Error for a spec the question cannot take (no fleet section, a service without an SLO, a
// name the catalog lacks, a section missing what it needs).
Result<FleetReport> fleet_spec(const Catalog& catalog, const Spec& spec, const FleetSpecOptions& options);

// The JSON `gpuwise fleet --format json` prints (schemas/fleet.schema.json).
nlohmann::json to_json(const FleetReport& report);
// The table format; explain adds the assumptions.
std::string fleet_text(const FleetReport& report, bool explain);

}  // namespace gw
