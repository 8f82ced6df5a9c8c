// A batch job's plan as text lines, a table of the cheapest layout per accelerator, and JSON:
// shared by `plan`'s text, Markdown, HTML and JSON writers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "plan/batch_plan.h"
#include "report/table.h"

namespace gw {

// "  best: ..." and the lines after it (two-space indented, newline-terminated); "  no plan: ..."
// where none finishes in time.
std::string batch_job_lines(const BatchJobPlan& plan, const BatchJobSpec& job, const ModelSpec& model);
Table batch_frontier_table(const BatchJobPlan& plan, const BatchJobSpec& job);
nlohmann::json batch_job_json(const BatchJobPlan& plan, const BatchJobSpec& job, const ModelSpec& model);

}  // namespace gw
