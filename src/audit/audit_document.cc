#include "audit/audit_document.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace gw {

namespace {

using nlohmann::json;

// The most expensive GPUs first; a heat map of thousands of rows helps nobody.
constexpr size_t kHeatMapGpus = 60;

// A row name a person recognises: the pod (and GPU index), else the GPU's UUID, else the host
// and GPU index; the full label set only when those do not tell the series apart.
std::string short_name(const SeriesReport& s) {
  auto label = [&](std::initializer_list<const char*> keys) -> std::string {
    for (const char* key : keys)
      for (const auto& [k, v] : s.labels)
        if (k == key && !v.empty()) return v;
    return "";
  };
  const std::string pod = label({"pod", "exported_pod", "pod_name"});
  const std::string gpu = label({"gpu", "GPU_I_ID", "minor_number", "index"});
  const std::string uuid = label({"UUID", "uuid", "gpu_uuid"});
  const std::string host = label({"Hostname", "hostname", "host", "node", "instance"});
  auto with_gpu = [&](const std::string& base) { return gpu.empty() ? base : base + " gpu " + gpu; };
  if (!pod.empty()) return with_gpu(pod);
  if (!uuid.empty()) return uuid;
  if (!host.empty()) return with_gpu(host);
  return s.id;
}

Chart heat_map(const AuditReport& r) {
  std::vector<const SeriesReport*> order;
  for (const auto& s : r.series) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const SeriesReport* a, const SeriesReport* b) { return a->usd_per_month > b->usd_per_month; });
  if (order.size() > kHeatMapGpus) order.resize(kHeatMapGpus);
  static const char* days[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  std::map<std::string, int> uses;
  for (const auto* s : order) ++uses[short_name(*s)];
  json values = json::array();
  for (const auto* s : order) {
    std::string name = short_name(*s);
    if (uses[name] > 1) name = s->id;  // two series would share a row: keep them apart
    for (size_t h = 0; h < s->hour_of_week_util_pct.size(); ++h)
      if (s->hour_of_week_util_pct[h] >= 0)
        values.push_back({{"gpu", name}, {"series", s->id}, {"hour", h}, {"day", days[h / 24]}, {"util_pct", s->hour_of_week_util_pct[h]}});
  }
  json spec = {
      {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
      {"width", 760},
      {"data", {{"values", values}}},
      {"mark", {{"type", "rect"}, {"tooltip", true}}},
      {"encoding",
       {{"x", {{"field", "hour"}, {"type", "ordinal"}, {"title", "hour of the week (Monday 00:00 first, UTC)"},
               {"axis", {{"values", json::array({0, 24, 48, 72, 96, 120, 144})}, {"labelExpr", "['Mon','Tue','Wed','Thu','Fri','Sat','Sun'][datum.value / 24]"}}}}},
        {"y", {{"field", "gpu"}, {"type", "nominal"}, {"title", nullptr}, {"sort", nullptr}}},
        {"color", {{"field", "util_pct"}, {"type", "quantitative"}, {"title", "duty cycle %"},
                   {"scale", {{"domain", json::array({0, 100})}, {"scheme", "viridis"}}}}}}}};
  return {fmt::format("Duty cycle by hour of the week ({} most expensive GPUs)", order.size()), spec};
}

Chart waste_by_kind(const AuditReport& r) {
  std::map<std::string, double> waste;
  for (const auto& f : r.findings)
    if (f.waste_usd_per_month > 0) waste[f.kind] += f.waste_usd_per_month;
  json values = json::array();
  for (const auto& [kind, usd] : waste) values.push_back({{"kind", kind}, {"usd_per_month", usd}});
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"width", 520},
               {"data", {{"values", values}}},
               {"mark", {{"type", "bar"}, {"tooltip", true}}},
               {"encoding",
                {{"y", {{"field", "kind"}, {"type", "nominal"}, {"sort", "-x"}, {"title", nullptr}}},
                 {"x", {{"field", "usd_per_month"}, {"type", "quantitative"}, {"title", "USD per month"}}}}}};
  return {"Waste by finding", spec};
}

// From today's monthly cost to the recommended fleet's: one step down per kind of finding.
Chart waterfall(const AuditReport& r) {
  std::map<std::string, double> waste;
  std::map<std::string, double> per_scope;  // each series' largest finding, as the summary counts it
  std::map<std::string, std::string> kind_of_scope;
  for (const auto& f : r.findings) {
    if (f.waste_usd_per_month > per_scope[f.scope]) {
      per_scope[f.scope] = f.waste_usd_per_month;
      kind_of_scope[f.scope] = f.kind;
    }
  }
  for (const auto& [scope, usd] : per_scope)
    if (usd > 0) waste[kind_of_scope[scope]] += usd;
  json values = json::array();
  double level = r.fleet_usd_per_month;
  values.push_back({{"step", "today"}, {"start", 0}, {"end", level}, {"kind", "total"}, {"order", 0}});
  int order = 1;
  for (const auto& [kind, usd] : waste) {
    values.push_back({{"step", kind}, {"start", level}, {"end", level - usd}, {"kind", "saving"}, {"order", order++}});
    level -= usd;
  }
  values.push_back({{"step", "recommended"}, {"start", 0}, {"end", level}, {"kind", "total"}, {"order", order}});
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"width", 560},
               {"data", {{"values", values}}},
               {"mark", {{"type", "bar"}, {"tooltip", true}}},
               {"encoding",
                {{"x", {{"field", "step"}, {"type", "nominal"}, {"sort", {{"field", "order"}}}, {"title", nullptr}, {"axis", {{"labelAngle", 0}}}}},
                 {"y", {{"field", "start"}, {"type", "quantitative"}, {"title", "USD per month"}}},
                 {"y2", {{"field", "end"}}},
                 {"color", {{"field", "kind"}, {"type", "nominal"}, {"title", nullptr},
                            {"scale", {{"domain", {"total", "saving"}}, {"range", {"#2458a6", "#c2410c"}}}}}}}}};
  return {"From today's fleet to the recommended one (USD per month)", spec};
}

Chart cost_by_group(const AuditReport& r, const std::string& group_by) {
  json values = json::array();
  double cumulative = 0;
  for (const auto& a : r.attribution) {
    cumulative += a.usd_per_month;
    values.push_back({{"group", a.group}, {"usd_per_month", a.usd_per_month},
                      {"cumulative_share", r.fleet_usd_per_month > 0 ? cumulative / r.fleet_usd_per_month : 0}});
  }
  json x = {{"field", "group"}, {"type", "nominal"}, {"sort", nullptr}, {"title", group_by}};
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"width", 620},
               {"data", {{"values", values}}},
               {"layer", json::array({
                             {{"mark", {{"type", "bar"}, {"tooltip", true}}},
                              {"encoding", {{"x", x}, {"y", {{"field", "usd_per_month"}, {"type", "quantitative"}, {"title", "USD per month"}}}}}},
                             {{"mark", {{"type", "line"}, {"point", true}, {"color", "#c2410c"}}},
                              {"encoding", {{"x", x},
                                            {"y", {{"field", "cumulative_share"}, {"type", "quantitative"}, {"title", "cumulative share"},
                                                   {"axis", {{"format", "%"}}}, {"scale", {{"domain", json::array({0, 1})}}}}}}}},
                         })},
               {"resolve", {{"scale", {{"y", "independent"}}}}}};
  return {fmt::format("Cost by {} (the top 20% hold {:.0f}%)", group_by, r.top20_cost_share * 100), spec};
}

}  // namespace

Table findings_table(const AuditReport& r, int top) {
  Table table;
  table.columns = {"kind", "scope", "waste_per_month", "confidence", "evidence", "recommendation"};
  table.align = {Align::left, Align::left, Align::right, Align::left, Align::left, Align::left};
  int shown = 0;
  for (const auto& f : r.findings) {
    if (f.kind == "healthy") continue;
    if (++shown > top) break;
    table.add_row({f.kind, f.scope, format_usd(f.waste_usd_per_month), f.confidence, f.evidence, f.recommendation});
  }
  return table;
}

Table attribution_table(const AuditReport& r, const std::string& group_by) {
  Table groups;
  groups.columns = {group_by, "gpus", "usd_per_month", "mean_util_pct"};
  groups.align = {Align::left, Align::right, Align::right, Align::right};
  for (const auto& a : r.attribution)
    groups.add_row({a.group, std::to_string(a.gpus), format_usd(a.usd_per_month), format_number(a.mean_util_pct, 1)});
  return groups;
}

Document audit_document(const AuditReport& r, const std::string& group_by, int top) {
  Document d;
  d.kind = "audit";
  d.title = fmt::format("GPU audit: {} recoverable per month", format_usd(r.recoverable_usd_per_month));
  d.facts = {{"recoverable per month", format_usd(r.recoverable_usd_per_month)},
             {"fleet cost per month", format_usd(r.fleet_usd_per_month)},
             {"GPUs", std::to_string(r.gpus)},
             {"mean duty cycle", fmt::format("{:.1f}%", r.mean_util_pct)},
             {"idle samples", fmt::format("{:.0f}%", r.idle_sample_fraction * 100)}};
  if (r.usd_per_1k_inferences) d.facts.emplace_back("per 1k inferences", format_usd(*r.usd_per_1k_inferences));

  Section moves;
  moves.heading = "Moves, largest first";
  if (r.underused_gpus > 0)
    moves.paragraphs.push_back(fmt::format("The work of the {} under-used GPUs fits on {} at 70% busy.", r.underused_gpus, r.underused_fit_on));
  moves.tables.push_back(findings_table(r, top));
  moves.charts.push_back(waterfall(r));
  moves.charts.push_back(waste_by_kind(r));
  d.sections.push_back(moves);

  Section when;
  when.heading = "When the GPUs work";
  when.charts.push_back(heat_map(r));
  d.sections.push_back(when);

  if (!r.attribution.empty()) {
    Section cost;
    cost.heading = "Cost by " + group_by;
    cost.charts.push_back(cost_by_group(r, group_by));
    cost.tables.push_back(attribution_table(r, group_by));
    d.sections.push_back(cost);
  }
  d.assumptions = r.assumptions;
  return d;
}

}  // namespace gw
