#include "gpuwise/plan.h"

#include "api/handles.h"
#include "perf/efficiency.h"
#include "plan/plan_json.h"
#include "plan/plan_manifests.h"
#include "plan/plan_report.h"
#include "report/document.h"
#include "report/json_document.h"
#include "report/table.h"

namespace gpuwise {

PlanResult plan(const Catalog& catalog, const Spec& spec, const PlanOptions& options) {
  gw::PlanSpecOptions o;
  std::optional<gw::Calibration> calibration = gw::load_public_calibration(options.calibration_path);
  if (calibration) o.calibration = &*calibration;
  if (options.usable_memory_fraction) o.usable_fraction = *options.usable_memory_fraction;
  if (options.overhead_gib) o.overhead_gib = *options.overhead_gib;
  if (options.step_token_budget) o.prefill_chunk_tokens = *options.step_token_budget;
  if (options.sim_requests) o.sim_requests = *options.sim_requests;
  o.simulate = options.simulate;
  o.seed = options.seed;
  o.jobs = options.jobs;
  auto planned = gw::value_or_throw(gw::plan_spec(catalog.impl()->catalog, spec.impl()->spec, o));
  auto impl = std::make_shared<PlanResult::Impl>(PlanResult::Impl{catalog.impl(), std::move(planned), o, std::move(calibration)});
  impl->options.calibration = impl->calibration ? &*impl->calibration : nullptr;
  return PlanResult(std::move(impl));
}

bool PlanResult::met() const { return impl_->result.met(); }
int PlanResult::exit_code() const { return impl_->result.exit_code(); }
double PlanResult::total_usd_per_month() const { return impl_->result.total_usd_per_month; }

std::string PlanResult::to_json() const { return gw::json_text(gw::to_json(impl_->result)); }

std::string PlanResult::to_text(bool explain) const {
  gw::PlanReportOptions report;
  report.explain = explain;
  return gw::plan_report(impl_->result, report).text;
}

std::string PlanResult::to_markdown(bool explain) const {
  gw::PlanReportOptions report;
  report.markdown = true;
  report.explain = explain;
  return gw::plan_report(impl_->result, report).text;
}

std::string PlanResult::to_html() const {
  auto html = gw::render_html(gw::plan_report(impl_->result, {}).document);
  if (!html.ok()) throw gw::public_error(html.error());
  return html.value();
}

std::vector<std::string> PlanResult::warnings() const { return gw::plan_warnings(impl_->result, false); }

std::string PlanResult::to_csv() const { return gw::render_csv(gw::plan_summary_table(impl_->result)); }

std::vector<std::pair<std::string, std::string>> PlanResult::manifests(const std::string& prometheus_url) const {
  auto written = gw::value_or_throw(gw::plan_manifests(impl_->catalog->catalog, impl_->result, impl_->options, prometheus_url));
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& m : written) out.emplace_back(std::move(m.file_name), std::move(m.yaml));
  return out;
}

}  // namespace gpuwise
