#include "gpuwise/mix.h"

#include "api/handles.h"
#include "plan/mix_question.h"

namespace gpuwise {

Answer mix(const Catalog& catalog, const MixQuery& query) {
  gw::MixOptions o;
  o.demand = query.demand;
  o.offering = query.offering;
  o.service = query.service;
  o.on_demand = query.on_demand;
  o.reserved_1y = query.reserved_1y;
  o.reserved_3y = query.reserved_3y;
  o.spot = query.spot;
  o.horizon_months = query.horizon_months;
  o.seed = query.seed;
  auto result = std::make_shared<const gw::MixResult>(gw::value_or_throw(gw::mix_question(catalog.impl()->catalog, o)));
  Answer::Impl a;
  a.command = "mix";
  a.body = gw::to_json(*result);
  a.text = [result](bool explain) { return gw::mix_report(*result, explain).text; };
  a.markdown = [result](bool explain) { return gw::render_markdown(gw::mix_report(*result, explain).document); };
  a.document = [result] { return gw::mix_report(*result, false).document; };
  return Answer(std::make_shared<const Answer::Impl>(std::move(a)));
}

}  // namespace gpuwise
