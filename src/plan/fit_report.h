// The fit's writers: the JSON `gpuwise fit --format json` prints (schemas/fit.schema.json), and
// the table, Markdown, CSV and report document of the other formats.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "plan/fit_question.h"
#include "report/document.h"

namespace gw {

nlohmann::json to_json(const FitResult& result);

struct FitReport {
  std::string text;      // the table format
  std::string markdown;
  std::string csv;       // the placements table
  Document document;     // HTML
};
// explain: the formula of each term, the accelerators that do not fit, the assumptions.
FitReport fit_report(const FitResult& result, bool explain);

}  // namespace gw
