// The plan as JSON (schemas/plan.schema.json): the document `gpuwise plan --format json` prints,
// and what C++ programs and Python get for the same result.
#pragma once

#include <nlohmann/json.hpp>

#include "plan/plan_spec.h"

namespace gw {

// The whole document, schema_version and command included.
nlohmann::json to_json(const PlanResult& result);

// Cost per 1k inferences and per 1M tokens (input + output) at the service's average rate; NaN
// with no traffic.
double usd_per_1k_inferences(const PlanOption& option, const ServicePlan& plan);
double usd_per_million_tokens(const PlanOption& option, const ServicePlan& plan);

}  // namespace gw
