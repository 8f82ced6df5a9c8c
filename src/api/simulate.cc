#include "gpuwise/simulate.h"

#include "api/handles.h"
#include "plan/simulate_report.h"
#include "report/json_document.h"

namespace gpuwise {

SimulateResult simulate(const Catalog& catalog, const Spec& spec, const SimulateOptions& options) {
  gw::SimulateSpecOptions o;
  std::optional<gw::Calibration> calibration = gw::load_public_calibration(options.calibration_path);
  if (calibration) o.calibration = &*calibration;
  o.seed = options.seed;
  o.average_rate = options.average_rate;
  o.requests = options.requests;
  o.duration_s = options.duration_s;
  o.sample_steps = options.explain;
  auto result = gw::value_or_throw(gw::simulate_spec(catalog.impl()->catalog, spec.impl()->spec, o));
  return SimulateResult(std::make_shared<const SimulateResult::Impl>(SimulateResult::Impl{std::move(result), options.explain}));
}

bool SimulateResult::all_meet() const { return impl_->result.all_meet(); }
std::string SimulateResult::to_json() const { return gw::json_text(gw::to_json(impl_->result)); }
std::string SimulateResult::to_text() const { return gw::simulate_report(impl_->result, impl_->explain).text; }
std::string SimulateResult::to_markdown() const {
  return gw::render_markdown(gw::simulate_report(impl_->result, impl_->explain).document);
}

}  // namespace gpuwise
