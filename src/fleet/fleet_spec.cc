#include "fleet/fleet_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/formatting.h"
#include "core/money.h"
#include "core/text.h"
#include "fleet/bucket_mix.h"
#include "fleet/colocated_pool.h"
#include "fleet/buy_vs_rent.h"
#include "fleet/model_pools.h"
#include "fleet/rent_prices.h"
#include "fleet/shared_pool.h"
#include "fleet/what_if.h"
#include "plan/inference.h"
#include "plan/spec_names.h"
#include "plan/verify.h"
#include "sim/deployment.h"
#include "report/json_document.h"

namespace gw {

namespace {

using nlohmann::json;

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

Chart pool_chart(const SharedPoolReport& r) {
  json values = json::array();
  static const char* days[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  for (size_t h = 0; h < r.week_peak_by_hour.size(); ++h) {
    std::string when = fmt::format("{} {:02d}:00", days[h / 24], h % 24);
    values.push_back({{"hour", static_cast<double>(h)}, {"when", when}, {"gpus", r.week_peak_by_hour[h]}, {"series", "shared pool"}});
    if (!r.shifts.empty())
      values.push_back({{"hour", static_cast<double>(h)}, {"when", when}, {"gpus", r.shifted_week_peak_by_hour[h]}, {"series", "pool with shifts"}});
    values.push_back({{"hour", static_cast<double>(h)}, {"when", when}, {"gpus", r.static_gpus}, {"series", "static allocation"}});
  }
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"width", 640},
               {"height", 240},
               {"data", {{"values", values}}},
               {"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"tooltip", true}}},
               {"encoding", {{"x", {{"field", "hour"}, {"type", "quantitative"}, {"title", "hour of the week (Monday 00:00 = 0)"},
                                    {"scale", {{"domain", {0, 168}}}}}},
                             {"y", {{"field", "gpus"}, {"type", "quantitative"}, {"title", "GPUs"}}},
                             {"color", {{"field", "series"}, {"type", "nominal"}, {"title", nullptr}}}}}};
  return {"GPUs busy through the week", spec};
}

Chart what_if_chart(const WhatIfReport& r) {
  json values = json::array();
  values.push_back({{"step", "today"}, {"order", 0}, {"usd_per_month", r.current_usd_per_month}});
  int order = 1;
  for (const auto& s : r.steps)
    if (s.feasible) values.push_back({{"step", s.name}, {"order", order++}, {"usd_per_month", s.usd_per_month}});
  json spec = {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
               {"width", 480},
               {"height", 220},
               {"data", {{"values", values}}},
               {"mark", {{"type", "bar"}, {"tooltip", true}}},
               {"encoding", {{"x", {{"field", "step"}, {"type", "nominal"}, {"sort", {{"field", "order"}}}, {"title", nullptr}}},
                             {"y", {{"field", "usd_per_month"}, {"type", "quantitative"}, {"title", "USD per month"}}}}}};
  return {"Cost per month after each step", spec};
}

// Everything a section reads.
struct FleetInputs {
  const Catalog& catalog;
  const Spec& spec;
  const FleetSpecOptions& options;
};

// Requests simulated per pool check: enough for a p99 of every model with a share of 5% or more.
constexpr long long kColocatedRequests = 40000;
constexpr int kColocatedExtraGpus = 8;  // GPUs a pool may gain before its check gives up

// A pool's models together on its GPUs, each at its rate in the pool's busiest hour (the hour
// its GPU count was sized for); nodes are added one at a time until every model meets its SLO.
// Returns the check's JSON per model; sets the pool's GPUs and cost to what passed.
json verify_pool(const FleetInputs& in, const std::vector<ModelDemand>& models, ModelPool& pool, std::string& note) {
  const Spec& spec = in.spec;
  std::vector<ColocatedModel> colocated;
  std::vector<double> busiest(24, 0);
  for (int m : pool.models)
    if (const PoolCandidate* c = candidate_in(models[static_cast<size_t>(m)], pool))
      for (int h = 0; h < 24; ++h) busiest[static_cast<size_t>(h)] += c->hourly_gpus.empty() ? c->peak_gpus : c->hourly_gpus[static_cast<size_t>(h)];
  const int hour = static_cast<int>(std::max_element(busiest.begin(), busiest.end()) - busiest.begin());
  for (int m : pool.models) {
    const ModelDemand& d = models[static_cast<size_t>(m)];
    const ServiceSpec& service = *std::find_if(spec.services.begin(), spec.services.end(),
                                               [&](const ServiceSpec& s) { return s.name == d.service; });
    const PoolCandidate* c = candidate_in(d, pool);
    Deployment deployment = service.deployment ? *service.deployment : Deployment{};
    deployment.groups = {DeploymentGroup{pool.accelerator, 1, 1}};
    ReplicaBuildOptions build;
    build.calibration = in.options.calibration;
    auto replicas = build_replicas(in.catalog, spec.models.at(service.model_key), service, deployment, build);
    if (!replicas.ok()) throw InputError{replicas.error()};
    ColocatedModel cm;
    cm.service = d.service;
    cm.spec = &service;
    cm.replica = replicas.value().front();
    const double share_now = c && !c->hourly_gpus.empty() && c->peak_gpus > 0 ? c->hourly_gpus[static_cast<size_t>(hour)] / c->peak_gpus : 1.0;
    cm.rate_rps = service.traffic.peak_rps * share_now;
    colocated.push_back(cm);
  }
  const int sized = pool.gpus;
  Result<ColocatedResult> check = simulate_colocated(colocated, pool.gpus, kColocatedRequests, in.options.seed);
  while (check.ok() && !check.value().all_met() && pool.gpus < sized + kColocatedExtraGpus) {
    pool.gpus += std::max(1, pool.gpus_per_node);
    check = simulate_colocated(colocated, pool.gpus, kColocatedRequests, in.options.seed);
  }
  if (!check.ok()) throw InputError{check.error()};
  pool.usd_per_month = pool.usd_per_month / sized * pool.gpus;
  json out = json::array();
  std::string missed;
  for (const auto& m : check.value().models) {
    out.push_back({{"service", m.service}, {"requests", m.requests}, {"metric", m.binding_metric},
                   {"target_s", m.binding_target_s}, {"simulated_s", m.binding_simulated_s}, {"slo_met", m.slo_met},
                   {"latency_p99_s", m.latency_p99_s}});
    if (!m.slo_met) missed += fmt::format("{}{} ({} {} against {})", missed.empty() ? "" : ", ", m.service, m.binding_metric,
                                          fmt::format("{:.0f} ms", m.binding_simulated_s * 1e3), fmt::format("{:.0f} ms", m.binding_target_s * 1e3));
  }
  if (!missed.empty())
    note = fmt::format("pool on {}: even {} GPUs miss {}", pool.accelerator, pool.gpus, missed);
  else if (pool.gpus > sized)
    note = fmt::format("pool on {}: {} GPUs by the shares, {} once its models were simulated together on them", pool.accelerator,
                       sized, pool.gpus);
  return out;
}

// One assignment of the models to pools, each pool simulated with its models together.
struct VerifiedLayout {
  PoolAssignment assignment;
  std::vector<json> checks;          // per pool, per model
  std::vector<std::string> notes;    // pools grown past their shares, or missing a model's SLO
  std::vector<std::string> misses;   // the notes of pools that miss
  std::vector<std::string> missed;   // services that miss their SLO in their pool
  double usd_per_month = 0;
};

VerifiedLayout verify_layout(const FleetInputs& in, const std::vector<ModelDemand>& models, PoolAssignment assignment) {
  VerifiedLayout out;
  for (ModelPool& pool : assignment.pools) {
    std::string note;
    out.checks.push_back(verify_pool(in, models, pool, note));
    const size_t missed_before = out.missed.size();
    for (const json& m : out.checks.back())
      if (!m["slo_met"].get<bool>()) out.missed.push_back(m["service"].get<std::string>());
    if (!note.empty()) out.notes.push_back(note);
    if (!note.empty() && out.missed.size() > missed_before) out.misses.push_back(note);
    out.usd_per_month += pool.usd_per_month;
  }
  assignment.usd_per_month = out.usd_per_month;
  out.assignment = std::move(assignment);
  return out;
}

// The cheapest assignment by the shares (GLPK), with the models marked apart in pools of their own.
PoolAssignment exact_pools(const FleetInputs& in, const std::vector<ModelDemand>& models, const std::vector<bool>& apart) {
  std::vector<ModelDemand> together, alone;
  std::vector<int> together_index, alone_index;
  for (size_t i = 0; i < models.size(); ++i) {
    (apart[i] ? alone : together).push_back(models[i]);
    (apart[i] ? alone_index : together_index).push_back(static_cast<int>(i));
  }
  PoolAssignment out;
  if (!together.empty()) {
    auto shared = assign_pools_exact(together, in.spec.constraints.max_utilization);
    if (!shared.ok()) {
      Error e = shared.error();
      e.file = in.spec.path;
      throw InputError{e};
    }
    out = shared.value();
    for (ModelPool& p : out.pools)
      for (int& m : p.models) m = together_index[static_cast<size_t>(m)];
  }
  PoolAssignment own = one_pool_per_model(alone, in.spec.constraints.max_utilization);
  for (ModelPool p : own.pools) {
    for (int& m : p.models) m = alone_index[static_cast<size_t>(m)];
    out.pools.push_back(std::move(p));
  }
  if (out.method.empty()) out.method = own.method;
  out.usd_per_month += own.usd_per_month;
  return out;
}

// Whether two assignments put the same models on the same types.
bool same_pools(const PoolAssignment& a, const PoolAssignment& b) {
  auto key = [](const PoolAssignment& x) {
    std::vector<std::pair<std::string, std::vector<int>>> pools;
    for (const ModelPool& p : x.pools) pools.emplace_back(p.offer, p.models);
    std::sort(pools.begin(), pools.end());
    return pools;
  };
  return key(a) == key(b);
}

json simulated_entry(const json& checks, const std::string& service) {
  for (const auto& c : checks)
    if (c["service"] == service) return c;
  return nullptr;
}

// "12 ms / 50 ms" (simulated p99 against the SLO's tightest target), or "-".
std::string simulated_cell(const json& c) {
  if (c.is_null() || c["metric"].get<std::string>().empty()) return "-";
  return fmt::format("{:.0f} / {:.0f} ms {}{}", c["simulated_s"].get<double>() * 1e3, c["target_s"].get<double>() * 1e3,
                     c["metric"].get<std::string>(), c["slo_met"].get<bool>() ? "" : " MISSED");
}

// Services no one GPU serves at their SLO (a model that needs tensor parallelism, or nodes):
// planned and simulated as `plan` does, each on nodes of its own beside the pools.
struct OwnNodes {
  json entries = json::array();
  Table table;
  double usd_per_month = 0;
};

OwnNodes plan_on_own_nodes(const FleetInputs& in, const std::vector<std::string>& services) {
  OwnNodes out;
  out.table.columns = {"model", "replica", "replicas", "nodes", "per month", "per 1k requests"};
  out.table.align = {Align::left, Align::left, Align::right, Align::left, Align::right, Align::right};
  PlannerOptions planner;
  planner.calibration = in.options.calibration;
  VerifyOptions verify;
  verify.build.calibration = in.options.calibration;
  verify.seed = in.options.seed;
  for (const std::string& name : services) {
    const ServiceSpec& service = *std::find_if(in.spec.services.begin(), in.spec.services.end(), [&](const ServiceSpec& s) { return s.name == name; });
    ServicePlan plan = plan_service(in.catalog, in.spec, service, planner);
    verify_plan(in.catalog, in.spec, service, plan, verify);
    if (!plan.feasible || !plan.best)
      throw InputError{Error{in.spec.path, service.line, "services." + service.name,
                             "fits on no allowed accelerator at its SLO: " + plan.binding}};
    const PlanOption& b = *plan.best;
    const double usd = b.usd_per_month(), requests = service.traffic.average_rps * kHoursPerMonth * 3600;
    const std::string replica = fmt::format("{} x {} ({})", b.config.devices(), b.config.accelerator->name, parallel_layout(b.config));
    out.usd_per_month += usd;
    out.table.add_row({service.name, replica, std::to_string(b.replicas), describe_nodes(b), format_usd(usd),
                       requests > 0 ? fmt::format("${:.4f}", usd / requests * 1000) : "-"});
    out.entries.push_back({{"service", service.name}, {"accelerator", b.config.accelerator->name},
                           {"tensor_parallel", b.config.tensor_parallel}, {"pipeline_parallel", b.config.pipeline_parallel},
                           {"replicas", b.replicas}, {"instances", b.instances}, {"instance_type", b.offering->instance_type},
                           {"usd_per_month", usd}, {"usd_per_1k_requests", requests > 0 ? json(usd / requests * 1000) : json(nullptr)}});
  }
  return out;
}

void add_shared_pools(FleetReport& report, const FleetInputs& in) {
  const Spec& spec = in.spec;
  auto demands = model_demands(in.catalog, spec, in.options.calibration);
  if (!demands.ok()) throw InputError{demands.error()};
  // A pool shares its GPUs among models that each run on one: the others get nodes of their own.
  std::vector<ModelDemand> models;
  std::vector<std::string> alone;
  for (const ModelDemand& d : demands.value()) {
    if (d.candidates.empty()) alone.push_back(d.service);
    else models.push_back(d);
  }
  const OwnNodes own = plan_on_own_nodes(in, alone);
  PoolAssignment shared;
  if (!models.empty()) shared = exact_pools(in, models, std::vector<bool>(models.size(), false));
  // The cheapest assignment as the shares price it, then checked: where a pool misses a model's
  // SLO however many GPUs it gains, or sharing costs more once simulated, the models that missed
  // are taken apart (the rest assigned again), and one pool per model is simulated too. The
  // fleet is the cheapest layout that meets every SLO (the fewest models missing, where none does).
  std::vector<VerifiedLayout> layouts;
  layouts.push_back(verify_layout(in, models, shared));
  if (!layouts.front().missed.empty() && layouts.front().missed.size() < models.size()) {
    std::vector<bool> apart(models.size(), false);
    for (size_t i = 0; i < models.size(); ++i)
      apart[i] = std::find(layouts.front().missed.begin(), layouts.front().missed.end(), models[i].service) != layouts.front().missed.end();
    PoolAssignment split = exact_pools(in, models, apart);
    split.method += ", " + join_list(layouts.front().missed) + " apart";
    layouts.push_back(verify_layout(in, models, split));
  }
  // A pool that grew in its check carried its models on more GPUs than their shares said: on its
  // type the shares were optimistic. Weighed again with those shares scaled by what the check
  // took, the models may be cheaper on another type (gpt-oss-120b: 6 A100s by the shares, 8 once
  // simulated, where 4 H100s carry it).
  const std::vector<ModelDemand> as_simulated = shares_as_simulated(models, shared, layouts.front().assignment);
  if (!as_simulated.empty()) {
    PoolAssignment again = exact_pools(in, as_simulated, std::vector<bool>(models.size(), false));
    for (ModelPool& p : again.pools) p.peak_gpus = pool_peak_gpus(models, p);
    if (!same_pools(again, shared)) {
      again.method += ", weighed again with the shares simulation took";
      layouts.push_back(verify_layout(in, models, again));
    }
  }
  layouts.push_back(verify_layout(in, models, one_pool_per_model(models, spec.constraints.max_utilization)));
  size_t chosen_at = 0;
  for (size_t i = 1; i < layouts.size(); ++i) {
    const VerifiedLayout &a = layouts[i], &b = layouts[chosen_at];
    if (a.missed.size() < b.missed.size() || (a.missed.size() == b.missed.size() && a.usd_per_month < b.usd_per_month - 0.005))
      chosen_at = i;
  }
  const VerifiedLayout& chosen = layouts[chosen_at];
  const VerifiedLayout& separate = layouts.back();
  const PoolAssignment& r = chosen.assignment;
  const std::vector<json>& pool_checks = chosen.checks;
  std::vector<std::string> pool_notes = chosen.notes;
  json rejected = json::array();
  for (size_t i = 0; i < layouts.size(); ++i) {
    if (i == chosen_at) continue;
    const VerifiedLayout& l = layouts[i];
    const std::string why = !l.missed.empty() ? join_list(l.misses, "; ")
                                              : fmt::format("{}/month, {} more", format_usd(l.usd_per_month),
                                                            format_usd(l.usd_per_month - chosen.usd_per_month));
    // One pool per model that met every SLO is the headline's comparison already.
    if (i + 1 < layouts.size() || !l.missed.empty())
      pool_notes.push_back(fmt::format("not chosen: {} pool(s) ({}): {}", l.assignment.pools.size(), l.assignment.method, why));
    rejected.push_back({{"method", l.assignment.method}, {"pools", l.assignment.pools.size()}, {"usd_per_month", l.usd_per_month},
                        {"missed", l.missed}});
  }
  Table t;
  // The instance and its host CPU in the table, not only in --explain: an arm64 host needs
  // serving images built for linux/arm64.
  t.columns = {"pool", "accelerator", "GPUs", "instance", "models", "peak GPU share", "memory GiB", "per month"};
  t.align = {Align::left, Align::left, Align::right, Align::left, Align::left, Align::right, Align::right, Align::right};
  json pools = json::array(), per_model = json::array();
  std::string arm_pools;
  for (size_t i = 0; i < r.pools.size(); ++i) {
    const auto& p = r.pools[i];
    std::string names;
    std::string pool_host, pool_arch;
    Pricing pool_pricing = Pricing::on_demand;
    json members = json::array();
    for (int m : p.models) {
      const ModelDemand& d = models[static_cast<size_t>(m)];
      names += (names.empty() ? "" : ", ") + d.service;
      members.push_back(d.service);
      // The pool's cost shared by peak GPU share; per 1k requests at the model's average rate.
      const PoolCandidate* c = candidate_in(d, p);
      double share = c && p.peak_gpus > 0 ? c->peak_gpus / p.peak_gpus : 0;
      double usd = p.usd_per_month * share;
      double requests = d.average_rps * kHoursPerMonth * 3600;
      bool low = c && c->average_gpus < 0.1;
      if (c && pool_host.empty()) pool_host = c->instance_type, pool_arch = c->cpu_architecture, pool_pricing = c->pricing;
      per_model.push_back({{"service", d.service}, {"pool", i + 1}, {"accelerator", p.accelerator}, {"usd_per_month", usd},
                           {"usd_per_1k_requests", requests > 0 ? json(usd / requests * 1000) : json(nullptr)},
                           {"average_gpus", c ? c->average_gpus : 0},
                           {"serverless_candidate", low && d.latency_tolerant && d.scale_to_zero_fits}, {"low_traffic", low},
                           {"scale_to_zero", d.scale_to_zero_fits}, {"scale_to_zero_why", d.scale_to_zero_why},
                           {"simulated", simulated_entry(pool_checks[i], d.service)}});
    }
    t.add_row({std::to_string(i + 1), p.accelerator, std::to_string(p.gpus),
               fmt::format("{}{}{}", pool_host, pool_arch.empty() ? "" : " (" + pool_arch + ")",
                           pool_pricing == Pricing::on_demand ? "" : fmt::format(", {} with an on-demand floor", pricing_name(pool_pricing))),
               names,
               format_number(p.peak_gpus, 2),
               format_number(p.vram_gib, 1), format_usd(p.usd_per_month)});
    pools.push_back({{"accelerator", p.accelerator}, {"gpus", p.gpus}, {"models", members}, {"peak_gpus", p.peak_gpus},
                     {"vram_gib", p.vram_gib}, {"usd_per_month", p.usd_per_month}, {"instance_type", pool_host},
                     {"cpu_architecture", pool_arch}, {"pricing", pricing_name(pool_pricing)}, {"simulated", pool_checks[i]}});
    if (pool_arch == "arm64")
      arm_pools += fmt::format("{}pool {} ({} on {})", arm_pools.empty() ? "" : ", ", i + 1, p.accelerator, pool_host);
  }
  Table m;
  m.columns = {"model", "pool", "per month", "per 1k requests", "average GPUs", "p99 shared / SLO", "note"};
  m.align = {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right, Align::left};
  for (const auto& x : per_model)
    m.add_row({x["service"].get<std::string>(), std::to_string(x["pool"].get<int>()), format_usd(x["usd_per_month"].get<double>()),
               x["usd_per_1k_requests"].is_null() ? "-" : fmt::format("${:.4f}", x["usd_per_1k_requests"].get<double>()),
               format_number(x["average_gpus"].get<double>(), 3), simulated_cell(x["simulated"]),
               x["serverless_candidate"].get<bool>() ? "low traffic, latency-tolerant: serverless; " + x["scale_to_zero_why"].get<std::string>()
               : x["low_traffic"].get<bool>() || x["scale_to_zero"].get<bool>() ? x["scale_to_zero_why"].get<std::string>()
                                                                                  : ""});
  // The layout chosen against one pool per model, both as simulated.
  const double less = separate.usd_per_month > 0 ? 1 - r.usd_per_month / separate.usd_per_month : 0;
  const bool one_each = chosen_at + 1 == layouts.size();
  std::string headline =
      one_each ? fmt::format("{} model{}, one pool per model: {}/month as simulated; no shared pool meets every model's SLO for less (below).",
                             models.size(), models.size() == 1 ? "" : "s", format_usd(r.usd_per_month))
               : fmt::format("{} model{} on shared pools: {}/month in {} pool(s) ({}), against {}/month with one pool per model "
                             "({}), both as simulated.",
                             models.size(), models.size() == 1 ? "" : "s", format_usd(r.usd_per_month), r.pools.size(), r.method,
                             format_usd(separate.usd_per_month),
                             separate.missed.size() > chosen.missed.size()
                                 ? "which misses " + join_list(separate.missed) + "'s SLO"
                                 : fmt::format("{:.0f}% less", less * 100));
  if (!chosen.missed.empty()) headline += " No layout meets every model's SLO: the one missing the fewest.";
  if (models.empty()) headline = "No model runs on one GPU at its SLO: no shared pool.";
  if (!alone.empty())
    headline += fmt::format(" {} on nodes of {} own (no one GPU serves {} at {} SLO): {}/month; the fleet {}/month.", join_list(alone),
                            alone.size() == 1 ? "its" : "their", alone.size() == 1 ? "it" : "them", alone.size() == 1 ? "its" : "their",
                            format_usd(own.usd_per_month), format_usd(r.usd_per_month + own.usd_per_month));
  std::vector<std::string> paragraphs = {headline};
  for (const auto& n : pool_notes) paragraphs.push_back(n);
  std::vector<Table> tables = {t, m};
  if (!alone.empty()) tables.push_back(own.table);
  report.add_section("Models on shared pools", paragraphs, tables);
  report.doc.assumptions.push_back(fmt::format(
      "pools: every GPU of a pool hosts each of its models (weights and working set at the operating batch must fit in {:.0f}% "
      "of its memory); GPUs = ceil(the busiest hour's sum of the models' GPU shares / {:.0f}%) in whole nodes of its instance "
      "(billed whole), hours from each model's daily or "
      "weekly profile (its peak all day without one); a share is the model's peak rate over its capacity per GPU at its SLO from "
      "the planner (tensor parallel 1); each pool then simulated with its models together on its GPUs (each GPU runs one "
      "model's step at a time, the models with work taking turns; requests to the GPU with the fewest outstanding; every "
      "model Poisson at its rate in the pool's busiest hour, {} requests, seeded) and nodes added until every model's p99 "
      "meets its SLO",
      PlannerOptions{}.usable_fraction * 100, spec.constraints.max_utilization * 100, kColocatedRequests));
  report.doc.assumptions.push_back("per model: the pool's cost shared by peak GPU share, per 1k requests at the model's average rate");
  report.doc.assumptions.push_back("scale to zero: advised only where the traffic pauses for longer than the keep-alive (a profile's "
                                   "hours at zero, or Poisson gaps at the average rate) and a cold start meets at most 1% of "
                                   "requests or fits the SLO");
  if (!arm_pools.empty())
    report.doc.assumptions.push_back("host CPU arm64 (Graviton or Grace) for " + arm_pools +
                                     ": build the serving images for linux/arm64, or set constraints.cpu_architectures: [x86_64]");
  if (!alone.empty())
    report.doc.assumptions.push_back("models no one GPU serves at their SLO are planned and simulated as `gpuwise plan` plans them "
                                     "(tensor parallel within a node, whole nodes for a model no node holds), on nodes of their own");
  report.out["shared_pools"] = {{"pools", pools}, {"models", per_model}, {"pool_usd_per_month", r.usd_per_month},
                                {"one_pool_per_model_usd_per_month", separate.usd_per_month}, {"method", r.method},
                                {"not_chosen", rejected},
                                {"own_nodes", own.entries}, {"own_nodes_usd_per_month", own.usd_per_month}};
}

void add_bucket_mix(FleetReport& report, const FleetInputs& in, const BucketMixSpec& mix) {
  const Spec& spec = in.spec;
  const ServiceSpec& service = *std::find_if(spec.services.begin(), spec.services.end(),
                                             [&](const ServiceSpec& s) { return s.name == mix.service; });
  auto buckets = request_buckets(in.catalog, spec, service, mix.buckets, in.options.calibration);
  if (!buckets.ok()) throw InputError{buckets.error()};
  auto mixed = assign_buckets_exact(buckets.value(), spec.constraints.max_utilization);
  if (!mixed.ok()) throw InputError{Error{in.spec.path, mix.line, mixed.error().field, mixed.error().message}};
  BucketAssignment single = best_single_type(buckets.value(), spec.constraints.max_utilization);
  const BucketAssignment& r = mixed.value();
  Table t;
  t.columns = {"prompt tokens", "share", "mean in/out", "peak rps", "on"};
  t.align = {Align::left, Align::right, Align::right, Align::right, Align::left};
  json bucket_list = json::array();
  for (size_t b = 0; b < buckets.value().size(); ++b) {
    const RequestBucket& k = buckets.value()[b];
    const BucketOption& o = k.options[static_cast<size_t>(r.option_of_bucket[b])];
    t.add_row({fmt::format("{:.0f}-{:.0f}", k.input_from, k.input_to), fmt::format("{:.0f}%", k.share * 100),
               fmt::format("{:.0f}/{:.0f}", k.mean_input, k.mean_output), format_number(k.peak_rps, 2),
               fmt::format("{} ({:.2f}/s per replica)", type_key(o), o.capacity_rps)});
    bucket_list.push_back({{"input_from", k.input_from}, {"input_to", k.input_to}, {"share", k.share}, {"peak_rps", k.peak_rps},
                           {"accelerator", o.accelerator}, {"tensor_parallel", o.tensor_parallel},
                           {"pipeline_parallel", o.pipeline_parallel}, {"capacity_rps", o.capacity_rps}});
  }
  std::string replicas, single_replicas;
  json replica_list = json::array();
  for (const auto& [type, count] : r.replicas) {
    replicas += fmt::format("{}{} x {}", replicas.empty() ? "" : " + ", count, type);
    replica_list.push_back({{"type", type}, {"replicas", count}});
  }
  for (const auto& [type, count] : single.replicas) single_replicas += fmt::format("{} x {}", count, type);
  double saving = single.usd_per_month > 0 ? 1 - r.usd_per_month / single.usd_per_month : 0;
  // The whole service as `gpuwise plan` sizes it, verified in the simulator, for contrast.
  PlannerOptions planner;
  planner.calibration = in.options.calibration;
  ServicePlan whole = plan_service(in.catalog, spec, service, planner);
  VerifyOptions verify;
  verify.build.calibration = planner.calibration;
  verify.seed = in.options.seed;
  verify_plan(in.catalog, spec, service, whole, verify);
  std::string headline = fmt::format("Accelerator mix for {} by prompt length ({} buckets): {} at {}/month, against the best single "
                                     "type {} at {}/month ({:.0f}% less).",
                                     mix.service, mix.buckets, replicas, format_usd(r.usd_per_month), single_replicas,
                                     format_usd(single.usd_per_month), saving * 100) +
                         (whole.best ? fmt::format(" Bucket capacities come from the planner's screen; the whole service as `gpuwise "
                                                   "plan` sizes it, checked in the simulator, costs {}/month.",
                                                   format_usd(whole.best->usd_per_month()))
                                     : "");
  report.add_section("Accelerator mix by request size", {headline}, {t});
  report.doc.assumptions.push_back("bucket mix: each bucket's capacity per replica from the planner at the SLO with only that bucket's "
                                   "requests at its share of the peak; a bucket goes wholly to one type; replicas of a type carry their "
                                   "buckets' load at the utilization limit (capacities add as shares of replica time)");
  report.out["bucket_mix"] = {{"service", mix.service}, {"buckets", bucket_list}, {"replicas", replica_list},
                              {"usd_per_month", r.usd_per_month}, {"single_type_usd_per_month", single.usd_per_month},
                              {"saving", saving}, {"method", r.method},
                              {"whole_service_usd_per_month", whole.best ? json(whole.best->usd_per_month()) : json(nullptr)}};
}

// Returns the pool's figures: buy-versus-rent takes its demand from them.
SharedPoolReport add_projects(FleetReport& report, const FleetInputs& in, const FleetSpec& fleet, const std::optional<BuyVsRentSpec>& buy) {
  SharedPoolOptions options;
  if (fleet.usd_per_gpu_hour) options.usd_per_gpu_hour = *fleet.usd_per_gpu_hour;
  else if (buy) options.usd_per_gpu_hour = buy->on_demand_usd_per_gpu_hour;
  else throw InputError{Error{in.spec.path, fleet.line, "fleet.usd_per_gpu_hour", "required to price the pool"}};
  auto result = plan_shared_pool(fleet.projects, options);
  if (!result.ok()) {
    Error e = result.error();
    e.file = in.spec.path;
    throw InputError{e};
  }
  const SharedPoolReport& r = result.value();
  Table t;
  t.columns = {"allocation", "GPUs", "per month"};
  t.align = {Align::left, Align::right, Align::right};
  t.add_row({"static: each project its own GPUs", std::to_string(r.static_gpus), format_usd(r.static_usd_per_month)});
  t.add_row({"shared pool sized for its peak", std::to_string(r.pool_peak_gpus), format_usd(r.pool_fixed_usd_per_month)});
  t.add_row({"elastic shared pool (GPU-hours used)", fmt::format("{:.2f} average", r.pool_average_gpus), format_usd(r.pool_usd_per_month)});
  std::string shifts;
  for (const auto& s : r.shifts) shifts += fmt::format("{}{} {:+d} h", shifts.empty() ? "" : ", ", s.project, s.hours);
  std::string headline = fmt::format("Projects on a shared pool ({} projects over {} days): peak {} GPUs, average {:.2f}; static "
                                     "allocation {} GPUs ({} to cover every peak).",
                                     fleet.projects.size(), r.days, r.pool_peak_gpus, r.pool_average_gpus, r.static_gpus,
                                     r.static_cover_gpus);
  std::string verdict = r.shifts.empty() ? "No start-time shift lowers the peak."
                                         : fmt::format("Shifting {} lowers the peak from {} to {} GPUs.", shifts, r.pool_peak_gpus,
                                                       r.shifted_peak_gpus);
  report.add_section("Projects on a shared pool", {headline, verdict}, {t}, {pool_chart(r)});
  report.assume(r.assumptions);
  json shift_list = json::array();
  for (const auto& s : r.shifts) shift_list.push_back({{"project", s.project}, {"hours", s.hours}});
  report.out["pool"] = {{"days", r.days}, {"static_gpus", r.static_gpus}, {"static_cover_gpus", r.static_cover_gpus},
                        {"static_usd_per_month", r.static_usd_per_month}, {"pool_usd_per_month", r.pool_usd_per_month},
                        {"pool_fixed_usd_per_month", r.pool_fixed_usd_per_month}, {"pool_peak_gpus", r.pool_peak_gpus},
                        {"pool_average_gpus", r.pool_average_gpus}, {"shifts", shift_list}, {"shifted_peak_gpus", r.shifted_peak_gpus},
                        {"usd_per_gpu_hour", r.usd_per_gpu_hour}, {"week_peak_by_hour", r.week_peak_by_hour}};
  return r;
}

void add_buy_vs_rent(FleetReport& report, const FleetInputs& inputs, const BuyVsRentSpec& b, const std::optional<SharedPoolReport>& pool) {
  BuyVsRentInput in;
  static_cast<BuyVsRentTerms&>(in) = b;
  std::string watts_source = "watts_per_gpu";
  if (!b.accelerator.empty()) {
    auto named = inputs.catalog.accelerator_named(b.accelerator);
    if (!named.ok()) throw InputError{Error{inputs.spec.path, b.accelerator_line, "fleet.buy_vs_rent.accelerator", named.error().message}};
    if (!(in.watts_per_gpu > 0)) {
      if (!named.value()->tdp_watts)
        throw InputError{Error{inputs.spec.path, b.line, "fleet.buy_vs_rent.watts_per_gpu",
                               named.value()->name + " has no TDP in the catalog: give watts_per_gpu"}};
      // A GPU server draws more than its GPUs: CPUs, memory, NICs, NVSwitches and fans.
      in.watts_per_gpu = *named.value()->tdp_watts * kServerWattsPerGpuWatt;
      watts_source = fmt::format("{}'s TDP of {:.0f} W ({}) x {:.2f} for the rest of the server ({})", named.value()->name,
                                 *named.value()->tdp_watts, named.value()->source, kServerWattsPerGpuWatt, kServerWattsSource);
    }
  }
  std::string utilization_source = "given";
  if (b.utilization) {
    in.utilization = *b.utilization;
  } else {
    in.utilization = std::min(1.0, pool->pool_average_gpus / b.gpus);
    utilization_source = fmt::format("the projects' average {:.2f} GPUs of {}", pool->pool_average_gpus, b.gpus);
  }
  if (pool)
    for (int g : pool->hourly_peak) in.demand.push_back({1, static_cast<double>(g), 0});
  auto result = buy_vs_rent(in);
  if (!result.ok()) throw InputError{Error{inputs.spec.path, b.line, result.error().field, result.error().message}};
  const BuyVsRentReport& r = result.value();
  Table lines;
  lines.columns = {"owning, per month", "usd", "how"};
  lines.align = {Align::left, Align::right, Align::left};
  for (const auto& l : r.owned_lines) lines.add_row({l.name, format_usd(l.usd_per_month), l.formula});
  lines.add_row({"total", format_usd(r.owned_usd_per_month), fmt::format("${:.3g} per GPU-hour, busy or idle", r.owned_usd_per_gpu_hour)});
  Table t;
  t.columns = {"option", "per month"};
  t.align = {Align::left, Align::right};
  t.add_row({fmt::format("own {} GPUs", b.gpus), format_usd(r.owned_usd_per_month)});
  t.add_row({fmt::format("rent on demand at {:.0f}% utilization", in.utilization * 100), format_usd(r.on_demand_usd_per_month)});
  if (r.reserved_1y_usd_per_month) t.add_row({"reserved 1-year", format_usd(*r.reserved_1y_usd_per_month)});
  if (r.reserved_3y_usd_per_month) t.add_row({"reserved 3-year", format_usd(*r.reserved_3y_usd_per_month)});
  if (r.spot_usd_per_month) t.add_row({"spot (interruptible work only)", format_usd(*r.spot_usd_per_month)});
  if (r.hybrid_owned_gpus)
    t.add_row({fmt::format("hybrid for the projects' demand: own {}, rent {:.0f} GPU-hours/month", *r.hybrid_owned_gpus,
                           r.hybrid_cloud_gpu_hours_per_month),
               format_usd(r.hybrid_usd_per_month)});
  std::string headline = fmt::format(
      "Buy or rent {} GPUs (${}, {:.3g}-year life; utilization {:.0f}%, {}): owning breaks even {}{}; cheapest here: {}.",
      b.gpus, format_number(b.purchase_usd, 0), b.life_years, in.utilization * 100, utilization_source,
      r.break_even_utilization <= 1 ? fmt::format("above {:.1f}% utilization", r.break_even_utilization * 100)
                                    : std::string("at no utilization (renting on demand costs less even when always busy)"),
      r.break_even_months ? fmt::format(", and pays for itself in {:.1f} months against on-demand", *r.break_even_months) : "",
      r.cheapest);
  report.add_section("Buy or rent", {headline}, {lines, t});
  report.assume(r.assumptions);
  report.assume({b.rent_source});
  if (!b.overhead_fraction) report.assume({fmt::format("power at {:.0f} W per GPU: {}", in.watts_per_gpu, watts_source)});
  json owned_lines = json::array();
  for (const auto& l : r.owned_lines)
    owned_lines.push_back({{"name", l.name}, {"usd_per_month", l.usd_per_month}, {"formula", l.formula},
                           {"varies_with_utilization", l.varies_with_utilization}});
  report.out["buy_vs_rent"] = {{"gpus", b.gpus}, {"purchase_usd", b.purchase_usd}, {"utilization", in.utilization},
                               {"owned_usd_per_month", r.owned_usd_per_month}, {"owned_usd_per_gpu_hour", r.owned_usd_per_gpu_hour},
                               {"on_demand_usd_per_month", r.on_demand_usd_per_month},
                               {"reserved_1y_usd_per_month", optional_json(r.reserved_1y_usd_per_month)},
                               {"reserved_3y_usd_per_month", optional_json(r.reserved_3y_usd_per_month)},
                               {"spot_usd_per_month", optional_json(r.spot_usd_per_month)},
                               {"owned_lines", owned_lines}, {"capital_usd", r.capital_usd},
                               {"running_usd_per_month", r.running_usd_per_month},
                               {"break_even_utilization", std::isfinite(r.break_even_utilization) ? json(r.break_even_utilization) : json(nullptr)},
                               {"break_even_months", optional_json(r.break_even_months)},
                               {"cheapest", r.cheapest},
                               {"hybrid_owned_gpus", r.hybrid_owned_gpus ? json(*r.hybrid_owned_gpus) : json(nullptr)},
                               {"hybrid_cloud_gpu_hours_per_month", r.hybrid_cloud_gpu_hours_per_month},
                               {"hybrid_usd_per_month", r.hybrid_owned_gpus ? json(r.hybrid_usd_per_month) : json(nullptr)}};
}

void add_what_if(FleetReport& report, const FleetInputs& in, const WhatIfSpec& what_if) {
  auto result = plan_what_if(in.catalog, in.spec, what_if, in.options.calibration, in.options.seed);
  if (!result.ok()) throw InputError{result.error()};
  const WhatIfReport& r = result.value();
  Table t;
  t.columns = {"step", "change", "weeks", "GPUs", "per month", "saves", "payback weeks"};
  t.align = {Align::left, Align::left, Align::right, Align::right, Align::right, Align::right, Align::right};
  t.add_row({"today", "", "", std::to_string(r.current_gpus), format_usd(r.current_usd_per_month), "", ""});
  json steps = json::array();
  for (const auto& s : r.steps) {
    t.add_row({s.name, s.change, format_number(s.weeks, 1), s.feasible ? std::to_string(s.gpus) : "-",
               s.feasible ? format_usd(s.usd_per_month) : "misses the SLO", s.feasible ? format_usd(s.saving_usd_per_month) : "",
               s.feasible && s.weeks == 0 ? "now" : s.payback_weeks ? format_number(*s.payback_weeks, 1) : "never"});
    steps.push_back({{"name", s.name}, {"change", s.change}, {"weeks", s.weeks}, {"feasible", s.feasible}, {"binding", s.binding},
                     {"gpus", s.gpus}, {"usd_per_month", s.usd_per_month}, {"saving_usd_per_month", s.saving_usd_per_month},
                     {"payback_weeks", optional_json(s.payback_weeks)}, {"latency_p99_s", s.latency_p99_s}});
  }
  std::string headline = fmt::format("What-if for {} ({} x {} at {}/month today): {}/month saved after every step, {:.1f} weeks of work{}.",
                                     r.service, r.current_gpus, r.accelerator, format_usd(r.current_usd_per_month),
                                     format_usd(r.total_saving_usd_per_month), r.total_weeks,
                                     r.total_payback_weeks ? fmt::format(", paid back in {:.1f} weeks", *r.total_payback_weeks) : "");
  report.add_section("What-if optimizations", {headline}, {t}, {what_if_chart(r)});
  report.assume(r.assumptions);
  report.out["what_if"] = {{"service", r.service}, {"accelerator", r.accelerator}, {"current_gpus", r.current_gpus},
                           {"current_usd_per_month", r.current_usd_per_month}, {"steps", steps},
                           {"saving_usd_per_month", r.total_saving_usd_per_month}, {"weeks", r.total_weeks},
                           {"payback_weeks", optional_json(r.total_payback_weeks)}};
}

}  // namespace

Result<FleetReport> fleet_spec(const Catalog& catalog, const Spec& spec, const FleetSpecOptions& options) {
  if (auto missing = require_slos(spec, "plan a fleet")) return *missing;
  if (auto bad_name = check_spec_names(spec, catalog, spec.path)) return *bad_name;
  if (!spec.fleet) return Error{spec.path, 0, "fleet", "the spec has no fleet section (projects, buy_vs_rent, what_if)"};
  const FleetSpec& fleet = *spec.fleet;
  FleetInputs in{catalog, spec, options};
  FleetReport report;
  report.doc.kind = "fleet";
  report.doc.title = "Fleet: " + spec.path;
  // The sections report a bad field by throwing (deep in their loops); it stops here.
  try {
    if (fleet.shared_pools) add_shared_pools(report, in);
    if (fleet.bucket_mix) add_bucket_mix(report, in, *fleet.bucket_mix);
    // Rent prices from the catalog where the spec names the GPU and leaves them out.
    std::optional<BuyVsRentSpec> buy;
    if (fleet.buy_vs_rent) {
      auto priced = with_catalog_rent_prices(catalog, spec.constraints, *fleet.buy_vs_rent, spec.path);
      if (!priced.ok()) return priced.error();
      buy = priced.value();
    }
    std::optional<SharedPoolReport> pool;
    if (!fleet.projects.empty()) pool = add_projects(report, in, fleet, buy);
    if (buy) add_buy_vs_rent(report, in, *buy, pool);
    if (fleet.what_if) add_what_if(report, in, *fleet.what_if);
  } catch (const InputError& e) {
    return e.error;
  }
  report.out["spec"] = spec.path;
  report.out["assumptions"] = report.doc.assumptions;
  return report;
}

nlohmann::json to_json(const FleetReport& report) { return json_document("fleet", report.out); }

std::string fleet_text(const FleetReport& report, bool explain) {
  std::string text = report.text;
  if (explain) {
    text += "assumptions:\n";
    for (const auto& a : report.doc.assumptions) text += "  - " + a + "\n";
  }
  return text;
}

}  // namespace gw
