// The time-cost frontier of training runs as a table, shared by `train` and `plan`.
#pragma once

#include <vector>

#include "plan/training_plan.h"
#include "report/table.h"

namespace gw {

Table training_frontier_table(const std::vector<TrainingCandidate>& candidates);

}  // namespace gw
