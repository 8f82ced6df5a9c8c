#include "gpuwise/fleet.h"

#include "api/handles.h"
#include "fleet/fleet_spec.h"

namespace gpuwise {

Answer fleet(const Catalog& catalog, const Spec& spec, const FleetOptions& options) {
  gw::FleetSpecOptions o;
  std::optional<gw::Calibration> calibration = gw::load_public_calibration(options.calibration_path);
  if (calibration) o.calibration = &*calibration;
  o.seed = options.seed;
  auto report = std::make_shared<const gw::FleetReport>(
      gw::value_or_throw(gw::fleet_spec(catalog.impl()->catalog, spec.impl()->spec, o)));
  Answer::Impl a;
  a.command = "fleet";
  a.body = gw::to_json(*report);
  a.text = [report](bool explain) { return gw::fleet_text(*report, explain); };
  a.markdown = [report](bool) { return gw::render_markdown(report->doc); };
  a.document = [report] { return report->doc; };
  return Answer(std::make_shared<const Answer::Impl>(std::move(a)));
}

}  // namespace gpuwise
