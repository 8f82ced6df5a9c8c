// The fleet examples' arithmetic: projects on a shared pool (peak, average, dollars, shifts),
// buy versus rent (owned cost, break-even utilization and month, the hybrid against brute
// force), what-if steps with their payback, and a model too big for a shared pool.
#include <gtest/gtest.h>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "fleet/buy_vs_rent.h"
#include "fleet/fleet_spec.h"
#include "fleet/shared_pool.h"
#include "fleet/what_if.h"
#include "plan/inference.h"
#include "plan/verify.h"

namespace gw {
namespace {

Spec fleet_example(const std::string& name) {
  auto spec = load_spec(std::string(GPUWISE_SOURCE_DIR) + "/examples/" + name);
  EXPECT_TRUE(spec.ok()) << spec.error().to_string();
  return spec.value();
}

TEST(SharedPool, TheIssuesThreeProjects) {
  Spec spec = fleet_example("fleet-shared-pool.yaml");
  SharedPoolOptions options;
  options.usd_per_gpu_hour = 4;
  auto r = plan_shared_pool(spec.fleet->projects, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().static_gpus, 7);
  EXPECT_EQ(r.value().static_cover_gpus, 9);
  EXPECT_EQ(r.value().pool_peak_gpus, 6);  // churn (4) beside anomaly's night (2)
  // 2 always + 2 more for 8 of 24 h + 1 for 2 of 24 h + 4 for 3 of 168 h.
  double average = 2 + 2 * 8.0 / 24 + 1 * 2.0 / 24 + 4 * 3.0 / 168;
  EXPECT_NEAR(r.value().pool_average_gpus, average, 1e-9);
  EXPECT_NEAR(r.value().static_usd_per_month, 7 * 730 * 4.0, 1e-9);
  EXPECT_NEAR(r.value().pool_usd_per_month, average * 730 * 4.0, 1e-6);
  EXPECT_TRUE(r.value().shifts.empty());  // 6 is the floor: churn must overlap the service's 2
  EXPECT_EQ(r.value().week_peak_by_hour[4], 6);     // Monday 04:00
  EXPECT_EQ(r.value().week_peak_by_hour[24 + 10], 4);  // Tuesday 10:00
}

TEST(SharedPool, ShiftsMoveAJobOutOfThePeak) {
  std::vector<FleetProjectSpec> projects(2);
  projects[0].name = "service";
  projects[0].gpus = 2;
  projects[0].peak_gpus = 6;
  projects[0].peak_from_hour = 9;
  projects[0].peak_to_hour = 17;
  projects[1].name = "nightly";
  projects[1].gpus = 4;
  projects[1].schedule = "0 15 * * *";  // runs into the service's peak
  projects[1].duration_hours = 3;
  SharedPoolOptions options;
  options.usd_per_gpu_hour = 2;
  auto r = plan_shared_pool(projects, options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().pool_peak_gpus, 10);
  ASSERT_EQ(r.value().shifts.size(), 1u);
  EXPECT_EQ(r.value().shifts[0].project, "nightly");
  EXPECT_GE(r.value().shifts[0].hours, 2);  // out of the 09-17 window
  EXPECT_EQ(r.value().shifted_peak_gpus, 6);
  projects[1].shiftable = false;
  EXPECT_TRUE(plan_shared_pool(projects, options).value().shifts.empty());
}

TEST(BuyVsRent, EightGpusForOneHundredTwentyThousand) {
  BuyVsRentInput in;
  in.gpus = 8;
  in.purchase_usd = 120000;
  in.overhead_fraction = 0.75;  // one lump, no interest or resale: the straight-line case
  in.cost_of_capital = 0;
  in.resale_fraction = 0;
  in.life_years = 3;
  in.utilization = 0.6;
  in.on_demand_usd_per_gpu_hour = 4;
  auto r = buy_vs_rent(in);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r.value().owned_usd_per_month, 120000 * 1.75 / 36, 1e-9);
  EXPECT_NEAR(r.value().on_demand_usd_per_month, 8 * 730 * 0.6 * 4, 1e-9);
  EXPECT_NEAR(r.value().break_even_utilization, 120000 * 1.75 / 36 / (8 * 730 * 4), 1e-12);
  ASSERT_TRUE(r.value().break_even_months);
  EXPECT_NEAR(*r.value().break_even_months, 120000 / (8 * 730 * 0.6 * 4 - 120000 * 0.75 / 36), 1e-9);
  ASSERT_EQ(r.value().owned_lines.size(), 2u);  // purchase and the lump
  EXPECT_EQ(r.value().cheapest, "own");
  in.utilization = 0.1;  // under the break-even: renting wins, and owning never pays back in cash
  r = buy_vs_rent(in);
  EXPECT_EQ(r.value().cheapest, "on-demand");
  EXPECT_FALSE(r.value().break_even_months);
}

// Line by line: power from watts x utilization x PUE x $/kWh, colocation per provisioned kW,
// staff per GPU, networking with the purchase, resale as a credit and the cost of capital as a
// capital recovery payment; the break-even utilization is where owning and renting cost the
// same, the payback month where the cumulative cash crosses.
TEST(BuyVsRent, EachLineFromItsTermsAndTheBreakEvenWhereTheyCross) {
  BuyVsRentInput in;
  in.gpus = 8;
  in.purchase_usd = 240000;
  in.life_years = 4;
  in.watts_per_gpu = 700;
  in.pue = 1.3;
  in.usd_per_kwh = 0.10;
  in.colocation_usd_per_kw_month = 200;
  in.networking_fraction = 0.125;
  in.staff_usd_per_gpu_month = 50;
  in.cost_of_capital = 0.06;
  in.resale_fraction = 0.2;
  in.utilization = 0.7;
  in.on_demand_usd_per_gpu_hour = 3;
  auto r = buy_vs_rent(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::map<std::string, double> line;
  double sum = 0;
  for (const auto& l : r.value().owned_lines) line[l.name] = l.usd_per_month, sum += l.usd_per_month;
  EXPECT_NEAR(sum, r.value().owned_usd_per_month, 1e-6);
  EXPECT_NEAR(line["power"], 8 * 0.7 * 0.7 * 1.3 * 0.10 * 730, 1e-9);
  EXPECT_NEAR(line["colocation"], 5.6 * 200, 1e-9);
  EXPECT_NEAR(line["staff"], 400, 1e-9);
  EXPECT_NEAR(line["networking"], 30000.0 / 48, 1e-9);
  EXPECT_NEAR(line["resale value"], -48000.0 / 48, 1e-9);
  // Capital recovery on 270,000 less the resale's present value, at 0.5% a month for 48 months.
  const double i = 0.005, n = 48, capital = 270000, resale = 48000;
  const double payment = (capital - resale / std::pow(1 + i, n)) * i / (1 - std::pow(1 + i, -n));
  EXPECT_NEAR(line["cost of capital"], payment - (capital - resale) / n, 1e-6);
  EXPECT_GT(line["cost of capital"], 0);
  // At the break-even utilization owning and renting cost the same.
  BuyVsRentInput at = in;
  at.utilization = r.value().break_even_utilization;
  auto even = buy_vs_rent(at);
  ASSERT_TRUE(even.ok());
  EXPECT_NEAR(even.value().owned_usd_per_month, even.value().on_demand_usd_per_month, 1e-6);
  ASSERT_TRUE(r.value().break_even_months);
  EXPECT_NEAR(*r.value().break_even_months * (r.value().on_demand_usd_per_month - r.value().running_usd_per_month), capital, 1e-6);
  // Without watts there is no power line to compute: an error, not a guess.
  BuyVsRentInput no_watts = in;
  no_watts.watts_per_gpu = 0;
  EXPECT_FALSE(buy_vs_rent(no_watts).ok());
}

TEST(BuyVsRent, HybridEqualsBruteForceOverOwnedCounts) {
  BuyVsRentInput in;
  in.gpus = 8;
  in.purchase_usd = 120000;
  in.on_demand_usd_per_gpu_hour = 4;
  in.utilization = 0.5;
  in.watts_per_gpu = 350;
  for (int h = 0; h < 168; ++h) in.demand.push_back({1, static_cast<double>(h % 24 < 8 ? 2 : h % 24 < 18 ? 7 : 4), 0});
  auto r = buy_vs_rent(in);
  ASSERT_TRUE(r.ok());
  double per_gpu_hour = r.value().owned_usd_per_gpu_hour;
  double best = 1e300;
  int best_k = -1;
  for (int k = 0; k <= 8; ++k) {
    double usd = 0;
    for (const auto& d : in.demand) usd += k * per_gpu_hour + std::max(0.0, d.firm_units - k) * 4;
    if (usd < best - 1e-9) best = usd, best_k = k;
  }
  EXPECT_EQ(*r.value().hybrid_owned_gpus, best_k);
  EXPECT_NEAR(r.value().hybrid_usd_per_month, best * 730 / 168, 1e-6);
}

TEST(WhatIf, TenT4sBatchingThenInt8) {
  Spec spec = fleet_example("what-if-t4.yaml");
  Catalog catalog = Catalog::embedded().value();
  auto r = plan_what_if(catalog, spec, *spec.fleet->what_if, nullptr, 1);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& steps = r.value().steps;
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].name, "right-size");
  for (const auto& s : steps) EXPECT_TRUE(s.feasible) << s.name << ": " << s.binding;
  // Each step at most as many GPUs as the one before; batching saves GPUs on short inputs.
  EXPECT_LT(steps[0].gpus, 10);
  EXPECT_LT(steps[1].gpus, steps[0].gpus);
  EXPECT_LE(steps[2].gpus, steps[1].gpus);
  // Priced at today's $350 per T4-month; payback = weeks x $4,000 / (saving x 12/52).
  for (const auto& s : steps) EXPECT_NEAR(s.usd_per_month, s.gpus * 350.0, 1e-9);
  EXPECT_NEAR(steps[1].saving_usd_per_month, (steps[0].gpus - steps[1].gpus) * 350.0, 1e-9);
  ASSERT_TRUE(steps[1].payback_weeks);
  EXPECT_NEAR(*steps[1].payback_weeks, 2 * 4000 / (steps[1].saving_usd_per_month * 12 / 52), 1e-9);
  EXPECT_NEAR(r.value().total_saving_usd_per_month, 3500 - steps[2].usd_per_month, 1e-9);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// A fleet with a model no one GPU (nor one node of H100s) holds: it is planned on nodes of its
// own as `plan` plans it, beside the shared pool of the model that runs on one GPU, and the
// fleet's total counts both; the JSON entry has exactly the schema's fields.
TEST(SharedPools, AModelTooBigForOneGpuGetsNodesOfItsOwn) {
  auto spec = parse_spec(R"(
constraints: {clouds: [aws], pricing: [on-demand], accelerators: [H100, L4]}
models:
  big: {preset: llama-3.1-405b, precision: bf16}
  small: {preset: llama-3.1-8b, precision: bf16}
services:
  - {name: chat, model: big, traffic: {rps: {average: 1, peak: 2}}, tokens: {input: 1000, output: 200}, slo: {ttft_p99_s: 5, tpot_p99_s: 0.1}}
  - {name: helper, model: small, traffic: {rps: {average: 1, peak: 2}}, tokens: {input: 1000, output: 200}, slo: {ttft_p99_s: 2, tpot_p99_s: 0.1}}
fleet: {shared_pools: true}
)", "fleet.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  auto report = fleet_spec(catalog, spec.value(), FleetSpecOptions{});
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  const auto& shared = report.value().out["shared_pools"];
  ASSERT_EQ(shared["own_nodes"].size(), 1u);
  const auto& own = shared["own_nodes"][0];
  EXPECT_EQ(own["service"], "chat");
  EXPECT_EQ(own["tensor_parallel"], 8);
  EXPECT_EQ(own["pipeline_parallel"], 2);
  EXPECT_EQ(own["instances"].get<int>(), 2 * own["replicas"].get<int>());
  // The same plan `plan` makes for the service alone.
  ServicePlan alone = plan_service(catalog, spec.value(), spec.value().services[0], PlannerOptions{});
  VerifyOptions verify;
  verify_plan(catalog, spec.value(), spec.value().services[0], alone, verify);
  ASSERT_TRUE(alone.best);
  EXPECT_NEAR(own["usd_per_month"].get<double>(), alone.best->usd_per_month(), 1e-6);
  EXPECT_NEAR(shared["own_nodes_usd_per_month"].get<double>(), alone.best->usd_per_month(), 1e-6);
  ASSERT_EQ(shared["models"].size(), 1u);
  EXPECT_EQ(shared["models"][0]["service"], "helper");
  EXPECT_NE(report.value().text.find("chat on nodes of its own"), std::string::npos) << report.value().text;
  // Exactly the fields the schema lists for an entry.
  std::ifstream file(std::string(GPUWISE_SOURCE_DIR) + "/schemas/fleet.schema.json");
  const auto schema = nlohmann::json::parse(file)["properties"]["shared_pools"]["properties"]["own_nodes"]["items"];
  for (const auto& [key, value] : own.items()) EXPECT_TRUE(schema["properties"].contains(key)) << key;
  for (const auto& key : schema["required"]) EXPECT_TRUE(own.contains(key.get<std::string>())) << key;
}

// A card-authorisation model (50 ms p99 at 600 requests/s) beside a 3B chat model on T4s: the
// cheapest assignment by the shares puts the three services in one pool, where card-auth's
// requests wait behind the chat model's steps (76 ms p99 however many of ten GPUs the pool
// gets). The fleet is not that pool: card-auth is taken apart, the rest assigned again, and the
// layout chosen is the cheapest that meets every SLO as simulated; the pool it replaced is named.
TEST(SharedPools, AModelThatMissesBesideTheOthersIsTakenApart) {
  auto spec = parse_spec(R"(
constraints: {clouds: [aws], pricing: [on-demand, reserved-1y]}
models:
  fraud: {params: 30e6, flops_per_item: 6e7, bytes_per_item: 2e4, precision: fp16}
  kyc-vision: {preset: vit-large, precision: fp16}
  chat: {preset: llama-3.2-3b, precision: bf16}
services:
  - {name: card-auth, model: fraud, traffic: {rps: {average: 200, peak: 600}}, slo: {latency_p99_s: 0.05}}
  - {name: kyc, model: kyc-vision, traffic: {rps: {average: 2, peak: 8}, profile: weekday-business-hours}, slo: {latency_p99_s: 0.5}}
  - {name: support-chat, model: chat, traffic: {rps: {average: 1, peak: 4}}, tokens: {input: 800, output: 200}, slo: {ttft_p99_s: 1, tpot_p99_s: 0.05}}
fleet: {shared_pools: true}
)", "fintech.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  auto report = fleet_spec(catalog, spec.value(), FleetSpecOptions{});
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  const auto& shared = report.value().out["shared_pools"];
  // Every model meets its SLO in the pools chosen, and card-auth has a pool of its own.
  for (const auto& m : shared["models"]) {
    ASSERT_TRUE(m["simulated"].is_object()) << m.dump();
    EXPECT_TRUE(m["simulated"]["slo_met"].get<bool>()) << m.dump();
  }
  bool apart = false;
  for (const auto& p : shared["pools"])
    if (p["models"].size() == 1 && p["models"][0] == "card-auth") apart = true;
  EXPECT_TRUE(apart) << shared["pools"].dump();
  // The one pool for all three the shares chose is named as not chosen, with the model it missed
  // (weighed again with the shares its simulation took, one pool on another type is named too).
  bool all_in_one = false;
  for (const auto& l : shared["not_chosen"])
    if (l["pools"] == 1 && l["method"] == "MILP (GLPK)") {
      all_in_one = true;
      EXPECT_EQ(l["missed"], nlohmann::json::array({"card-auth"})) << l.dump();
    }
  EXPECT_TRUE(all_in_one) << shared["not_chosen"].dump();
  // The cheapest of what was simulated: no layout not chosen that met every SLO costs less.
  for (const auto& l : shared["not_chosen"])
    if (l["missed"].empty()) {
      EXPECT_GE(l["usd_per_month"].get<double>(), shared["pool_usd_per_month"].get<double>()) << l.dump();
    }
  EXPECT_LE(shared["pool_usd_per_month"].get<double>(), shared["one_pool_per_model_usd_per_month"].get<double>());
  EXPECT_NE(report.value().text.find("card-auth apart"), std::string::npos) << report.value().text;
  EXPECT_NE(report.value().text.find("not chosen: 1 pool(s)"), std::string::npos) << report.value().text;
}

// gpt-oss-120b beside gpt-oss-20b: by the shares, the big model's pool is 3 A100s, but simulated
// it needs 4 ($9,633.77/month); its shares on the A100 were optimistic. Weighed again with them
// scaled by what the simulation took, 2 H100s carry it and meet every SLO for less.
TEST(SharedPools, TypesAreWeighedAgainWithTheSharesSimulationTook) {
  auto spec = parse_spec(R"(
constraints: {clouds: [aws, gcp], pricing: [on-demand]}
models:
  big: {preset: gpt-oss-120b}
  small: {preset: gpt-oss-20b}
services:
  - {name: reasoning, model: big, traffic: {rps: {average: 0.5, peak: 1.5}}, tokens: {input: 2000, output: 800}, slo: {ttft_p99_s: 2, tpot_p99_s: 0.05}}
  - {name: helper, model: small, traffic: {rps: {average: 0.3, peak: 1}}, tokens: {input: 800, output: 300}, slo: {ttft_p99_s: 2, tpot_p99_s: 0.08}}
fleet: {shared_pools: true}
)", "assistants.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  auto report = fleet_spec(catalog, spec.value(), FleetSpecOptions{});
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  const auto& shared = report.value().out["shared_pools"];
  EXPECT_NE(shared["method"].get<std::string>().find("weighed again"), std::string::npos) << shared.dump();
  for (const auto& m : shared["models"]) {
    ASSERT_TRUE(m["simulated"].is_object()) << m.dump();
    EXPECT_TRUE(m["simulated"]["slo_met"].get<bool>()) << m.dump();
  }
  // The layout the shares chose is named, met every SLO once grown, and costs more.
  bool first = false;
  for (const auto& l : shared["not_chosen"])
    if (l["method"] == "MILP (GLPK)") {
      first = true;
      EXPECT_TRUE(l["missed"].empty()) << l.dump();
      EXPECT_GT(l["usd_per_month"].get<double>(), shared["pool_usd_per_month"].get<double>()) << l.dump();
    }
  EXPECT_TRUE(first) << shared["not_chosen"].dump();
  EXPECT_NE(report.value().text.find("not chosen: 2 pool(s) (MILP (GLPK)): "), std::string::npos) << report.value().text;
}

// An interruptible tagger may run on spot; the chat service beside it may not. A pool is one
// offer (accelerator, instance, pricing): the two share an on-demand pool (the tagger's on-demand
// candidate), billed on demand, never the chat service on the tagger's spot nodes at their price.
TEST(SharedPools, ARealTimeServiceIsNeverPooledOnSpot) {
  auto spec = parse_spec(R"(
constraints: {clouds: [aws], pricing: [on-demand, spot]}
models:
  a: {preset: llama-3.2-1b}
  b: {preset: llama-3.2-1b}
services:
  - {name: tagger, model: a, interruptible: true, traffic: {rps: {average: 2, peak: 4}}, tokens: {input: 300, output: 50}, slo: {ttft_p99_s: 5, tpot_p99_s: 0.2}}
  - {name: chat, model: b, traffic: {rps: {average: 1, peak: 2}}, tokens: {input: 500, output: 150}, slo: {ttft_p99_s: 1, tpot_p99_s: 0.05}}
fleet: {shared_pools: true}
)", "mixed.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  auto report = fleet_spec(catalog, spec.value(), FleetSpecOptions{});
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  const auto& shared = report.value().out["shared_pools"];
  bool chat_placed = false;
  for (const auto& pool : shared["pools"]) {
    bool has_chat = false;
    for (const auto& m : pool["models"]) has_chat = has_chat || m == "chat";
    if (!has_chat) continue;
    chat_placed = true;
    EXPECT_EQ(pool["pricing"], "on-demand") << pool.dump();
    // Billed at its instance's on-demand price per GPU, the cheapest in the allowed regions.
    double on_demand = 1e9;
    for (const Offering& o : catalog.offerings())
      if (o.cloud == "aws" && o.instance_type == pool["instance_type"].get<std::string>() && o.on_demand_usd_per_hour)
        on_demand = std::min(on_demand, *o.on_demand_usd_per_hour / o.accelerator_count);
    EXPECT_NEAR(pool["usd_per_month"].get<double>(), pool["gpus"].get<int>() * on_demand * 730, 1e-6) << pool.dump();
  }
  EXPECT_TRUE(chat_placed) << shared.dump();
  // Shared on demand, cheaper than a spot pool for the tagger beside an on-demand one for chat.
  EXPECT_LT(shared["pool_usd_per_month"].get<double>(), shared["one_pool_per_model_usd_per_month"].get<double>());
}

}  // namespace
}  // namespace gw
