#include "gpuwise/scale.h"

#include "api/handles.h"
#include "plan/scale_spec.h"

namespace gpuwise {

Answer scale(const Catalog& catalog, const Spec& spec, const ScaleOptions& options) {
  gw::ScaleSpecOptions o;
  std::optional<gw::Calibration> calibration = gw::load_public_calibration(options.calibration_path);
  if (calibration) o.calibration = &*calibration;
  o.seed = options.seed;
  o.hours = options.hours;
  o.shapes = options.shapes;
  o.explain = options.explain;
  o.jobs = options.jobs;
  o.exact = options.exact;
  o.fast_forward = options.fast_forward;
  auto out = std::make_shared<const gw::ScaleOutput>(
      gw::value_or_throw(gw::scale_spec(catalog.impl()->catalog, spec.impl()->spec, o)));
  Answer::Impl a;
  a.command = "scale";
  a.body = gw::to_json(*out);
  a.exit_code = out->all_meet ? 0 : 3;
  // The explanation is part of the one pass (options.explain).
  a.text = [out](bool) { return out->text; };
  a.markdown = [out](bool) { return gw::render_markdown(out->doc); };
  a.document = [out] { return out->doc; };
  return Answer(std::make_shared<const Answer::Impl>(std::move(a)));
}

}  // namespace gpuwise
