// The audit as a report document: headline figures, the moves largest first, a GPU x
// hour-of-week utilization heat map, waste by finding kind, and cost by group with its Pareto line.
#pragma once

#include "audit/audit.h"
#include "report/document.h"

namespace gw {

Document audit_document(const AuditReport& report, const std::string& group_by, int top);

// The moves, largest first (healthy series left out), at most `top` rows; and cost by group.
// Shared by the terminal output and the report document.
Table findings_table(const AuditReport& report, int top);
Table attribution_table(const AuditReport& report, const std::string& group_by);

}  // namespace gw
