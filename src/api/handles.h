// What the public handles (include/gpuwise/) hold: the library's own values, shared and immutable.
#pragma once

#include <optional>

#include "catalog/catalog.h"
#include "core/error.h"
#include "gpuwise/catalog.h"
#include "gpuwise/error.h"
#include "gpuwise/plan.h"
#include "gpuwise/simulate.h"
#include "gpuwise/spec.h"
#include "plan/plan_spec.h"
#include "plan/simulate_spec.h"
#include "spec/spec.h"

struct gpuwise::Catalog::Impl {
  gw::Catalog catalog;
};

struct gpuwise::Spec::Impl {
  gw::Spec spec;
};

struct gpuwise::PlanResult::Impl {
  std::shared_ptr<const gpuwise::Catalog::Impl> catalog;  // the result points into it
  gw::PlanResult result;
};

struct gpuwise::SimulateResult::Impl {
  gw::SimulateResult result;
  bool explain = false;
};

namespace gw {

// The public exception for a library error, with the same text the CLI prints.
gpuwise::Error public_error(const Error& error);

// A calibration file for an entry point's options: nullopt for an empty path. Throws gpuwise::Error.
std::optional<Calibration> load_public_calibration(const std::string& path);

}  // namespace gw
