// gpuwise as a library: include this, link gpuwise::gpuwise (CMake: find_package(gpuwise)).
// The CLI is a thin layer over the same calls, so a program gets the CLI's answers byte for byte.
//
//   gpuwise::Catalog catalog = gpuwise::Catalog::embedded();
//   gpuwise::PlanResult plan = gpuwise::plan(catalog, gpuwise::Spec::load("spec.yaml"));
//   std::cout << plan.to_json();
//
// Units are in names throughout (usd_per_month, vram_gib); every call that can fail on input
// throws gpuwise::Error with the file, line and field at fault.
#pragma once

#include "gpuwise/answer.h"
#include "gpuwise/audit.h"
#include "gpuwise/catalog.h"
#include "gpuwise/error.h"
#include "gpuwise/fit.h"
#include "gpuwise/fleet.h"
#include "gpuwise/interrupt.h"
#include "gpuwise/mix.h"
#include "gpuwise/perf.h"
#include "gpuwise/plan.h"
#include "gpuwise/scale.h"
#include "gpuwise/simulate.h"
#include "gpuwise/spec.h"
#include "gpuwise/train.h"

namespace gpuwise {

// The library's version ("0.1.0"), the same as `gpuwise --version`.
const char* version();

}  // namespace gpuwise
