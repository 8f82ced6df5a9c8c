// What the public handles (include/gpuwise/) hold: the library's own values, shared and immutable.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "catalog/catalog.h"
#include "model/model_arch.h"
#include "core/error.h"
#include "gpuwise/answer.h"
#include "gpuwise/catalog.h"
#include "gpuwise/error.h"
#include "gpuwise/plan.h"
#include "gpuwise/simulate.h"
#include "gpuwise/spec.h"
#include "plan/plan_spec.h"
#include "plan/simulate_spec.h"
#include "report/document.h"
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
  gw::PlanSpecOptions options;                  // as planned: the manifests' scaling simulation reuses them
  std::optional<gw::Calibration> calibration;   // options.calibration points here
};

struct gpuwise::SimulateResult::Impl {
  gw::SimulateResult result;
  bool explain = false;
};

// What the CLI would write for an answer, each writer computed when asked for.
struct gpuwise::Answer::Impl {
  std::string command;
  nlohmann::json body;  // without the envelope json_document adds
  int exit_code = 0;
  std::vector<std::string> warnings;
  std::function<std::string(bool explain)> text;
  std::function<std::string(bool explain)> markdown;  // empty: the command has none
  std::function<gw::Document()> document;             // for HTML; empty: none
};

namespace gw {

// The public exception for a library error, with the same text the CLI prints.
gpuwise::Error public_error(const Error& error);

// A calibration file for an entry point's options: nullopt for an empty path. Throws gpuwise::Error.
std::optional<Calibration> load_public_calibration(const std::string& path);

// A model preset name or config.json path. Throws gpuwise::Error.
ModelArch public_model(const std::string& name_or_path);

// Throws gpuwise::Error (interrupted) when this thread's InterruptScope was set: the call that
// just returned stopped early, so what it returned is not an answer.
void throw_if_interrupted();

// The value of a library Result, or its error thrown as gpuwise::Error.
template <typename T>
T value_or_throw(Result<T> result) {
  throw_if_interrupted();
  if (!result.ok()) throw public_error(result.error());
  return std::move(result.value());
}

}  // namespace gw
