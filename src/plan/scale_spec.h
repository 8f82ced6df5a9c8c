// The scale question (`gpuwise scale SPEC`): each service's autoscaling policies simulated on its
// traffic, with replicas against demand, GPU-hours, cost, SLO attainment and cold starts, the
// cheapest policy that meets the SLO recommended, across replica layouts when asked.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "catalog/catalog.h"
#include "perf/efficiency.h"
#include "report/document.h"
#include "spec/spec.h"

namespace gw {

struct ScaleSpecOptions {
  const Calibration* calibration = nullptr;  // not owned; must outlive the call
  uint64_t seed = 1;
  double hours = 0;            // hours to simulate; 0: the traffic's own span
  int shapes = 0;              // replica layouts to compare; 0: the spec's scaling.shapes, else 1
  bool explain = false;        // each layout's assumptions in the text
  bool show_progress = false;  // progress bars on stderr
  int jobs = 0;                // policies simulated at once (0: one per core); the same answer for any
  bool exact = false;          // every request simulated: no steady stretch fast-forwarded
  bool fast_forward = false;   // steady stretches replayed on spans of a day or less too
};

// What `gpuwise scale` writes, built in one pass: the terminal text, the report document and the
// JSON services.
struct ScaleOutput {
  std::string text;
  Document doc;
  nlohmann::json services = nlohmann::json::array();
  std::string spec_path;
  uint64_t seed = 1;
  bool all_meet = true;  // every service has a layout and policy that meet its SLO

  void add_paragraph(const std::string& paragraph) {
    text += paragraph + "\n\n";
    doc.sections.back().paragraphs.push_back(paragraph);
  }
};


// An Error for a spec the question cannot take (no services, a service without an SLO, a name
// the catalog lacks, traffic the simulator cannot replay).
Result<ScaleOutput> scale_spec(const Catalog& catalog, const Spec& spec, const ScaleSpecOptions& options);

// The JSON `gpuwise scale --format json` prints (schemas/scale.schema.json).
nlohmann::json to_json(const ScaleOutput& output);

}  // namespace gw
