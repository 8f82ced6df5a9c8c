// The training run's writers: the JSON `gpuwise train --format json` prints
// (schemas/train.schema.json), and the text and report document of the other formats.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "plan/train_run.h"
#include "report/document.h"

namespace gw {

// REQUIRES: result.plan.best (a run was found).
nlohmann::json to_json(const TrainResult& result);

struct TrainReport {
  std::string text;   // the table format; explain adds the assumptions
  Document document;  // Markdown and HTML
};
// REQUIRES: result.plan.best.
TrainReport train_report(const TrainResult& result, bool explain);

}  // namespace gw
