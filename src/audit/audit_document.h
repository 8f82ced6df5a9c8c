// The audit as a report document: headline figures, the moves largest first, a GPU x
// hour-of-week utilization heat map, waste by finding kind, and cost by group with its Pareto line.
#pragma once

#include "audit/audit.h"
#include "report/document.h"

namespace gw {

Document audit_document(const AuditReport& report, const std::string& group_by, int top);

}  // namespace gw
