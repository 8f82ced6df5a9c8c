// The plan for people: the text or Markdown `gpuwise plan` prints and the report document its
// HTML is rendered from, built in one pass over a PlanResult.
#pragma once

#include <string>
#include <vector>

#include "plan/plan_spec.h"
#include "report/document.h"

namespace gw {

struct PlanReportOptions {
  bool markdown = false;  // headings and tables in Markdown; else plain text
  bool colour = false;    // ANSI colour in plain text
  bool explain = false;   // each service's assumptions
};

struct PlanReport {
  std::string text;   // table or Markdown, per options
  Document document;  // the same content for render_html
};

PlanReport plan_report(const PlanResult& result, const PlanReportOptions& options);

// The plan as one table for a spreadsheet (plan --format csv): a row per service, training job
// and batch job, what it runs on and what it costs; plain numbers, USD; empty where a workload
// has no plan (its reason in the last column).
Table plan_summary_table(const PlanResult& result);

// What the CLI writes to stderr after the plan, one line each ("gpuwise: " first): services and
// jobs that cannot be planned, quotas the account is short of, the budget exceeded. With
// quotas_only, only the quota lines (JSON carries the rest).
std::vector<std::string> plan_warnings(const PlanResult& result, bool quotas_only);

}  // namespace gw
