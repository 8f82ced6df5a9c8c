#include "plan/mix_question.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/formatting.h"
#include "plan/inference.h"
#include "plan/scaling_plan.h"
#include "plan/verify.h"
#include "report/json_document.h"
#include "sim/arrivals.h"
#include "sim/deployment.h"

namespace gw {

namespace {

using nlohmann::json;

[[noreturn]] void option_fail(const std::string& option, const std::string& message) { throw InputError{Error{"", 0, option, message}}; }

bool is_spec(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

// Prices per unit-hour of an instance type (the cheapest region offering it on demand).
MixPrices offering_prices(const Catalog& catalog, const std::string& name, double units_per_instance) {
  const Offering* best = nullptr;
  for (const auto& o : catalog.offerings())
    if (o.instance_type == name && o.on_demand_usd_per_hour && (!best || *o.on_demand_usd_per_hour < *best->on_demand_usd_per_hour))
      best = &o;
  if (!best) option_fail("--offering", "no offering named '" + name + "' with an on-demand price in the catalog (see `gpuwise catalog offerings`)");
  MixPrices p;
  p.on_demand = *best->on_demand_usd_per_hour / units_per_instance;
  if (best->reserved_1y_usd_per_hour) p.reserved_1y = *best->reserved_1y_usd_per_hour / units_per_instance;
  if (best->reserved_3y_usd_per_hour) p.reserved_3y = *best->reserved_3y_usd_per_hour / units_per_instance;
  if (best->spot_usd_per_hour) p.spot = *best->spot_usd_per_hour / units_per_instance;
  return p;
}

struct SpecDemand {
  std::vector<DemandInterval> intervals;
  std::string unit, source;
  const Offering* offering = nullptr;
  double units_per_instance = 1;
};

// A service's demand in replicas per hour: its traffic (profile, rates, trace, or a daily shape
// for average/peak), counted by the hour from the same arrivals the simulator replays, over the
// replica the plan chose at its capacity at the utilization limit.
SpecDemand spec_demand(const Catalog& catalog, const MixOptions& args) {
  auto spec = load_spec(args.demand);
  if (!spec.ok()) throw InputError{spec.error()};
  const ServiceSpec* service = nullptr;
  for (const auto& s : spec.value().services)
    if (args.service.empty() || s.name == args.service) {
      service = &s;
      break;
    }
  if (!service) option_fail("--service", args.service.empty() ? "the spec has no services" : "no service named '" + args.service + "'");
  PlannerOptions planner;
  ServicePlan plan = plan_service(catalog, spec.value(), *service, planner);
  VerifyOptions verify;
  verify.seed = args.seed;
  verify_plan(catalog, spec.value(), *service, plan, verify);
  if (!plan.feasible || !plan.best)
    throw InputError{Error{args.demand, service->line, "services." + service->name, "no configuration meets the SLO: " + plan.binding}};
  const PlanOption& best = *plan.best;
  SpecDemand out;
  out.offering = best.offering;
  out.units_per_instance = best.config.pipeline_parallel > 1 ? 1.0 / best.config.pipeline_parallel
                                                              : static_cast<double>(best.offering->accelerator_count) / best.config.tensor_parallel;
  out.unit = "replica";
  // A replica's share of the load as verified: the screen's capacity at the utilization limit,
  // or less where the simulation needed more replicas at peak than the screen did.
  const double screened = best.level.capacity_rps * spec.value().constraints.max_utilization;
  const int needed = best.needed_replicas > 0 ? best.needed_replicas : best.replicas;
  const double per_replica = needed > 0 && service->traffic.peak_rps > 0 ? std::min(screened, service->traffic.peak_rps / needed) : screened;
  const int floor = std::max(1, service->min_replicas);
  ArrivalOptions arrivals = arrival_options(*service, service->traffic.average_rps);
  double span_s = 3600;
  if (arrivals.process == "curve") span_s = service->traffic.profile.size() * 3600.0;
  else if (arrivals.process == "series") span_s = service->traffic.rates->duration_s;
  else if (arrivals.process == "trace") span_s = service->traffic.trace->duration_s;
  else if (service->traffic.peak_rps > service->traffic.average_rps * 1.0001) option_fail("DEMAND", "give the service a profile, rates or a trace: average and peak alone do not say how many hours are at peak");
  if (span_s > kMaxTrafficSpanS)
    throw InputError{Error{args.demand, service->line, "services." + service->name + ".traffic",
                           fmt::format("the traffic spans {:.0f} days; a demand curve covers at most 366", span_s / 86400)}};
  size_t hours = static_cast<size_t>(std::ceil(span_s / 3600 - 1e-9));
  std::vector<double> counts(hours, 0);
  Rng rng(args.seed);
  auto process = make_arrivals(arrivals, *service, rng);
  while (auto a = process->next()) {
    if (a->time_s >= span_s) break;
    counts[std::min(hours - 1, static_cast<size_t>(a->time_s / 3600))] += 1;
  }
  if (auto e = process->error()) throw InputError{*e};
  for (size_t h = 0; h < hours; ++h) {
    double length_h = std::min(1.0, span_s / 3600 - static_cast<double>(h));
    double rate = counts[h] / (length_h * 3600);
    // Never under min_replicas while requests come (the plan's availability rule); an hour with
    // none may scale to zero.
    out.intervals.push_back({length_h, rate > 0 ? std::max<double>(floor, std::ceil(rate / per_replica - 1e-9)) : 0, 0});
  }
  out.source = fmt::format("service {}: its traffic by the hour over {:.0f} h, in replicas ({} x{}) of {:.3g} requests/s each ({}), "
                           "at least {} while requests come (min_replicas)",
                           service->name, span_s / 3600, best.config.accelerator->name, best.config.devices(), per_replica,
                           per_replica < screened - 1e-9
                               ? fmt::format("the peak {:.3g}/s over the {} replica{} the simulation needed", service->traffic.peak_rps, needed,
                                             needed == 1 ? "" : "s")
                               : fmt::format("capacity at {:.0f}% utilization", spec.value().constraints.max_utilization * 100),
                           floor);
  return out;
}

// Demand over time by how it is paid: reserved units at work, on-demand bursts, spot (at most
// 2,000 intervals drawn; longer curves are sampled evenly).
Chart mix_chart(const std::vector<DemandInterval>& demand, const PricingMix& m) {
  json values = json::array();
  const long long reserved = m.reserved_1y + m.reserved_3y;
  size_t stride = std::max<size_t>(1, (demand.size() + 1999) / 2000);
  double hours = 0;
  for (size_t i = 0; i < demand.size(); ++i) {
    const auto& d = demand[i];
    if (i % stride == 0) {
      double firm = std::ceil(d.firm_units - 1e-9), stacked = std::ceil(d.firm_units + d.interruptible_units - 1e-9);
      double r = static_cast<double>(reserved);
      values.push_back({{"hours", hours}, {"units", std::min(stacked, r)}, {"paid", "reserved"}});
      values.push_back({{"hours", hours}, {"units", std::max(0.0, firm - r)}, {"paid", "on demand"}});
      values.push_back({{"hours", hours}, {"units", std::max(0.0, stacked - std::max(r, firm))}, {"paid", "spot"}});
    }
    hours += d.hours;
  }
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"width", 640},
               {"height", 240},
               {"data", {{"values", values}}},
               {"mark", {{"type", "area"}, {"interpolate", "step-after"}, {"tooltip", true}}},
               {"encoding", {{"x", {{"field", "hours"}, {"type", "quantitative"}, {"title", "hours"}}},
                             {"y", {{"field", "units"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "units"}}},
                             {"color", {{"field", "paid"}, {"type", "nominal"}, {"title", nullptr},
                                        {"sort", {"reserved", "on demand", "spot"}}}}}}};
  return {"Demand by how it is paid", spec};
}

MixResult mix_or_throw(const Catalog& catalog, const MixOptions& args) {
  MixResult r;
  r.demand = args.demand;
  bool have_prices = false;
  if (is_spec(args.demand)) {
    SpecDemand d = spec_demand(catalog, args);
    r.intervals = d.intervals;
    r.unit = d.unit;
    r.source = d.source;
    if (args.offering.empty()) {
      r.prices = offering_prices(catalog, d.offering->instance_type, d.units_per_instance);
      r.source += fmt::format("; prices of {} {} per replica", d.offering->cloud, d.offering->instance_type);
      have_prices = true;
    }
  } else {
    auto loaded = load_demand_csv(args.demand);
    if (!loaded.ok()) throw InputError{loaded.error()};
    r.intervals = loaded.value();
    r.source = "demand curve " + args.demand;
  }
  if (!args.offering.empty()) {
    r.prices = offering_prices(catalog, args.offering, 1);
    r.source += "; prices of " + args.offering + " per instance";
    have_prices = true;
  }
  if (args.on_demand) r.prices.on_demand = *args.on_demand, have_prices = true;
  if (args.reserved_1y) r.prices.reserved_1y = *args.reserved_1y;
  if (args.reserved_3y) r.prices.reserved_3y = *args.reserved_3y;
  if (args.spot) r.prices.spot = *args.spot;
  if (!have_prices) option_fail("--on-demand", "give prices per unit-hour (--on-demand, --reserved-1y, --reserved-3y, --spot) or --offering NAME");
  r.prices.horizon_months = args.horizon_months;
  auto result = optimize_pricing_mix(r.intervals, r.prices);
  if (!result.ok()) option_fail("--" + result.error().field, result.error().message);
  r.mix = result.value();
  r.saving_usd_per_month = r.mix.all_on_demand_usd_per_month - r.mix.usd_per_month;
  return r;
}

}  // namespace

Result<MixResult> mix_question(const Catalog& catalog, const MixOptions& options) {
  // The readers below report a bad field by throwing, deep in their loops; it stops here.
  try {
    return mix_or_throw(catalog, options);
  } catch (const InputError& e) {
    return e.error;
  }
}

nlohmann::json to_json(const MixResult& r) {
  const PricingMix& m = r.mix;
  json levels = json::array();
  const double to_month = m.hours > 0 ? kHoursPerMonth / m.hours : 0;
  for (const auto& l : m.levels)
    levels.push_back({{"unit", l.unit}, {"firm_hour_share", l.firm_hour_share}, {"stacked_hour_share", l.stacked_hour_share},
                      {"usd_if_reserved", l.usd_if_reserved}, {"usd_if_not_reserved", l.usd_if_not_reserved},
                      {"usd_per_month_if_reserved", l.usd_if_reserved * to_month},
                      {"usd_per_month_if_not_reserved", l.usd_if_not_reserved * to_month}, {"choice", l.choice}});
  return json_document("mix", {{"demand", r.demand}, {"unit", r.unit}, {"source", r.source}, {"hours", m.hours}, {"peak_units", m.peak_units},
                     {"prices", {{"on_demand", r.prices.on_demand},
                                 {"reserved_1y", r.prices.reserved_1y ? json(*r.prices.reserved_1y) : json(nullptr)},
                                 {"reserved_3y", r.prices.reserved_3y ? json(*r.prices.reserved_3y) : json(nullptr)},
                                 {"spot", r.prices.spot ? json(*r.prices.spot) : json(nullptr)},
                                 {"horizon_months", r.prices.horizon_months}}},
                     {"reserved_1y", m.reserved_1y}, {"reserved_3y", m.reserved_3y},
                     {"on_demand_unit_hours", m.on_demand_unit_hours}, {"spot_unit_hours", m.spot_unit_hours},
                     {"reserved_unit_hours", m.reserved_unit_hours}, {"reserved_used_unit_hours", m.reserved_used_unit_hours},
                     {"usd", m.usd}, {"all_on_demand_usd", m.all_on_demand_usd},
                     {"usd_per_month", m.usd_per_month}, {"all_on_demand_usd_per_month", m.all_on_demand_usd_per_month},
                     {"saving_usd_per_month", r.saving_usd_per_month}, {"levels", levels}, {"assumptions", m.assumptions}});
}

MixReport mix_report(const MixResult& r, bool explain) {
  const PricingMix& m = r.mix;
  MixReport report;
  Table table;
  // Per month, as the headline is (the curve's span scaled to 730 hours).
  table.columns = {"unit", "hours with firm demand", "with batch work", "per month if reserved", "if not", "choice"};
  table.align = {Align::right, Align::right, Align::right, Align::right, Align::right, Align::left};
  const double to_month = m.hours > 0 ? kHoursPerMonth / m.hours : 0;
  for (const auto& l : m.levels)
    table.add_row({std::to_string(l.unit), fmt::format("{:.1f}%", l.firm_hour_share * 100), fmt::format("{:.1f}%", l.stacked_hour_share * 100),
                   format_usd(l.usd_if_reserved * to_month), format_usd(l.usd_if_not_reserved * to_month), l.choice});
  std::string& text = report.summary;
  text = fmt::format("Demand: {} ({:.1f} hours, peak {:.3g} {}s)\n", r.source, m.hours, m.peak_units, r.unit);
  text += fmt::format("Mix: {} reserved 3-year + {} reserved 1-year, {} {}-hours on demand, {} on spot\n", m.reserved_3y, m.reserved_1y,
                      format_number(m.on_demand_unit_hours, 1), r.unit, format_number(m.spot_unit_hours, 1));
  text += fmt::format("Cost: {}/month against {}/month all on demand: {}/month saved ({:.1f}%); reserved units busy {:.0f}% of their hours\n",
                      format_usd(m.usd_per_month), format_usd(m.all_on_demand_usd_per_month), format_usd(r.saving_usd_per_month),
                      m.all_on_demand_usd_per_month > 0 ? 100 * r.saving_usd_per_month / m.all_on_demand_usd_per_month : 0,
                      m.reserved_unit_hours > 0 ? 100 * m.reserved_used_unit_hours / m.reserved_unit_hours : 0);
  report.levels = table;
  Document doc;
  doc.kind = "mix";
  doc.title = "Pricing mix: " + r.demand;
  doc.facts = {{"per month", format_usd(m.usd_per_month)}, {"all on demand", format_usd(m.all_on_demand_usd_per_month)},
               {"saved", format_usd(r.saving_usd_per_month)}};
  Section section;
  section.heading = "Reserved, on-demand and spot";
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) section.paragraphs.push_back(line);
  section.charts.push_back(mix_chart(r.intervals, m));
  section.tables.push_back(table);
  doc.sections.push_back(section);
  doc.assumptions = m.assumptions;
  report.document = std::move(doc);
  report.text = text + "\n" + render_text(table);
  if (explain) {
    report.text += "assumptions:\n";
    for (const auto& a : m.assumptions) report.text += "  - " + a + "\n";
  }
  return report;
}

}  // namespace gw
