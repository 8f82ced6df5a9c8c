#include "gpuwise/train.h"

#include "api/handles.h"
#include "plan/train_report.h"
#include "plan/train_run.h"

namespace gpuwise {

Answer train(const Catalog& catalog, const TrainQuery& query) {
  gw::TrainOptions o;
  gw::TrainChoiceText choices{query.precision, query.recompute, query.pricing};
  if (auto error = gw::apply_train_choices(choices, o)) throw gw::public_error(*error);
  o.tokens = query.tokens;
  o.accelerator = query.accelerator;
  o.count = query.count;
  o.offering = query.offering;
  o.zero = query.zero;
  o.allow_tcp_clusters = query.allow_tcp_clusters;
  o.cross_zone = query.cross_zone;
  o.deadline_days = query.deadline_days;
  o.sequence_length = query.sequence_length;
  o.global_batch_tokens = query.global_batch_tokens;
  o.preemptions_per_hour = query.preemptions_per_hour;
  o.spot_trace = query.spot_trace;
  o.storage_gbps = query.storage_gbps;
  o.interval_min = query.checkpoint_interval_min;
  o.provisioning_s = query.provisioning_s;
  o.runs = query.runs;
  o.seed = query.seed;
  o.clouds = query.clouds;
  o.regions = query.regions;
  std::optional<gw::Calibration> calibration = gw::load_public_calibration(query.calibration_path);
  if (calibration) o.calibration = &*calibration;
  auto held = catalog.impl();  // the result points into it
  auto result = std::make_shared<const gw::TrainResult>(
      gw::value_or_throw(gw::train_run(held->catalog, gw::public_model(query.model), o)));
  // With no run at all the CLI writes only the reason, and so there is no answer to give.
  if (!result->plan.best) throw Error("", 0, "", result->plan.binding, Error::Kind::infeasible);
  Answer::Impl a;
  a.command = "train";
  a.body = gw::to_json(*result);
  if (!result->plan.feasible) {
    a.exit_code = 3;
    a.warnings.push_back("gpuwise: " + result->plan.binding);
  }
  a.text = [held, result](bool explain) { return gw::train_report(*result, explain).text; };
  a.markdown = [held, result](bool explain) { return gw::render_markdown(gw::train_report(*result, explain).document); };
  a.document = [held, result] { return gw::train_report(*result, false).document; };
  return Answer(std::make_shared<const Answer::Impl>(std::move(a)));
}

}  // namespace gpuwise
