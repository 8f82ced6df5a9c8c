// Simulated verification of plans: when no screened candidate meets the SLO over a bursty trace,
// the plan is the cheapest layout grown until the replay agrees, which a brute force over every
// screened layout (each grown without a price cap) confirms.
#include "plan/verify.h"

#include <algorithm>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gw {
namespace {

TEST(VerifyPlan, GrownPlanIsTheCheapestOfEveryLayoutGrown) {
  Catalog catalog = Catalog::embedded().value();
  auto loaded = load_spec(std::string(GPUWISE_SOURCE_DIR) + "/examples/code-azure.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  const Spec& spec = loaded.value();
  const ServiceSpec& service = spec.services.front();
  const ModelSpec& model = spec.models.at(service.model_key);
  ServicePlan plan = plan_service(catalog, spec, service, PlannerOptions{});
  ServicePlan screened = plan;
  VerifyOptions options;
  verify_plan(catalog, spec, service, plan, options);
  ASSERT_TRUE(plan.feasible);
  ASSERT_TRUE(plan.best->simulated && plan.best->simulated->meets);
  // Every screened candidate failed the replay as screened: the plan had to grow one.
  EXPECT_EQ(plan.dropped.size(), screened.ranked.size());
  auto same_layout = std::find_if(screened.ranked.begin(), screened.ranked.end(),
                                  [&](const PlanOption& o) { return o.config == plan.best->config; });
  ASSERT_NE(same_layout, screened.ranked.end());
  EXPECT_GT(plan.best->replicas, same_layout->replicas);
  int grown_layouts = 0;
  for (const auto& option : screened.ranked) {
    auto grown = grow_until_verified(catalog, model, service, option, options);
    if (!grown) continue;
    ++grown_layouts;
    EXPECT_GE(grown->usd_per_hour, plan.best->usd_per_hour - 1e-9)
        << option.config.accelerator->name << " tp" << option.config.tensor_parallel << " grown to " << grown->replicas;
  }
  EXPECT_GE(grown_layouts, 3);
  // The screen's cheapest layout alone, grown (the old rule), never costs less than the plan;
  // here it is the plan's layout (on L4s below it costs more).
  auto first = grow_until_verified(catalog, model, service, screened.best.value(), options);
  ASSERT_TRUE(first.has_value());
  EXPECT_GE(first->usd_per_hour, plan.best->usd_per_hour - 1e-9);
}

// Weighing disaggregated pools only adds options: the plan never costs more for it. The code
// trace's screened candidates all miss as screened; the disaggregated ones had taken slots of
// the twelve one-pool layouts the simulation verifies, so the GH200 layout that passes was never
// simulated and a grown A40 pool was the plan ($12.32/hour against $6.87).
TEST(VerifyPlan, WeighingDisaggregationNeverCostsAOnePoolLayoutItsVerification) {
  Catalog catalog = Catalog::embedded().value();
  auto loaded = load_spec(std::string(GPUWISE_SOURCE_DIR) + "/examples/code-azure.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  const Spec& spec = loaded.value();
  const ServiceSpec& service = spec.services.front();
  PlannerOptions one_pool, both;
  both.consider_disaggregated = true;
  ServicePlan alone = plan_service(catalog, spec, service, one_pool), weighed = plan_service(catalog, spec, service, both);
  int disaggregated = 0, pooled = 0;
  for (const PlanOption& o : weighed.ranked) (o.disaggregated() ? disaggregated : pooled)++;
  EXPECT_GT(disaggregated, 0);
  EXPECT_EQ(pooled, static_cast<int>(alone.ranked.size()));
  VerifyOptions options;
  verify_plan(catalog, spec, service, alone, options);
  verify_plan(catalog, spec, service, weighed, options);
  ASSERT_TRUE(alone.best && weighed.best);
  EXPECT_LE(weighed.best->usd_per_hour, alone.best->usd_per_hour + 1e-9)
      << weighed.best->config.accelerator->name << " x" << weighed.best->replicas << " against " << alone.best->config.accelerator->name
      << " x" << alone.best->replicas;
}

// The code-completion trace on L4s with a TPOT p99 of 50 ms: its bursts within the busiest
// minute, which a screen at the peak rate does not see, make the cheap layouts miss as
// screened; the first that passes as screened holds far more replicas, and a missed layout
// grown until the replay agrees costs far less: it is the plan, and --explain says so. Behind
// the vLLM Router's round_robin: 20 replicas of tp4 at $49.00/h against the 102 of tp2,
// $99.96/h, that first passed. Every missed layout grown without a price bound costs at least
// the plan: the bounded search tries every count under the bound (doubling no further than it).
TEST(VerifyPlan, AMissedLayoutGrownUndercutsTheFirstThatPassedAsScreened) {
  auto spec = parse_spec(fmt::format(R"(
version: 1
constraints: {{pricing: [on-demand], accelerators: [L4]}}
models: {{code: {{preset: llama-3.1-8b, precision: bf16}}}}
services:
  - name: code
    model: code
    traffic: {{trace: {}/examples/traces/azure-llm-2023-code.csv, trace_format: azure}}
    slo: {{ttft_p99_s: 2, tpot_p99_s: 0.05}}
)",
                                     GPUWISE_SOURCE_DIR),
                         "spec.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  const ServiceSpec& service = spec.value().services.front();
  const ModelSpec& model = spec.value().models.at(service.model_key);
  ServicePlan plan = plan_service(catalog, spec.value(), service, PlannerOptions{});
  const ServicePlan screened = plan;
  VerifyOptions options;
  verify_plan(catalog, spec.value(), service, plan, options);
  ASSERT_TRUE(plan.feasible && plan.best && plan.best->simulated && plan.best->simulated->meets);
  ASSERT_FALSE(plan.dropped.empty());
  ASSERT_LT(plan.dropped.size(), screened.ranked.size()) << "one passed as screened";
  const PlanOption& passed = screened.ranked[plan.dropped.size()];
  EXPECT_LT(plan.best->usd_per_hour, 0.5 * passed.usd_per_hour);
  EXPECT_LT(plan.best->replicas, passed.replicas);
  const std::string why = fmt::format("{}", fmt::join(plan.assumptions, "\n"));
  EXPECT_NE(why.find("costs less than the first that met it as screened"), std::string::npos) << why;
  // No layout that missed, grown, is cheaper than the plan.
  for (size_t i = 0; i < plan.dropped.size(); ++i) {
    auto grown = grow_until_verified(catalog, model, service, screened.ranked[i], options);
    if (grown) {
      EXPECT_GE(grown->usd_per_hour, plan.best->usd_per_hour - 1e-9) << i;
    }
  }
}

// Llama 3.1 70B at 15 requests/s with spot allowed for the service: the plan keeps N+1 nodes
// with an on-demand floor, and the simulation, which reclaims one spot node at peak and waits
// a cold start for its replacement, still meets the SLO.
TEST(VerifyPlan, ASpotPlanSurvivesASimulatedReclaim) {
  auto spec = parse_spec(R"(
constraints: {clouds: [aws], pricing: [on-demand, spot]}
models: {big: {preset: llama-3.1-70b, precision: bf16}}
services:
  - name: chat
    model: big
    interruptible: true
    traffic: {rps: 15}
    tokens: {input: 2000, output: 300}
    slo: {ttft_p99_s: 2.0, tpot_p99_s: 0.060}
)", "big.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  const ServiceSpec& service = spec.value().services[0];
  ServicePlan plan = plan_service(catalog, spec.value(), service, PlannerOptions{});
  VerifyOptions options;
  options.requests = 8000;
  verify_plan(catalog, spec.value(), service, plan, options);
  ASSERT_TRUE(plan.feasible) << plan.binding;
  const PlanOption& best = *plan.best;
  ASSERT_EQ(best.pricing, Pricing::spot);
  ASSERT_TRUE(best.spot_with_floor());
  ASSERT_TRUE(best.simulated && best.simulated->reclaimed);
  EXPECT_TRUE(best.simulated->meets) << best.simulated->miss;
  EXPECT_GE(best.simulated->reclaim_replicas, 1);
  EXPECT_GT(best.simulated->replacement_s, 120);  // node provisioning alone is 120 s
  EXPECT_GE(best.simulated->drained_s, 0);
  EXPECT_LE(best.simulated->drained_s, best.simulated->notice_s);
  EXPECT_GE(best.instances, 3);
  // The N+1 rule: one node more than the load needs.
  const int per_node = best.replicas_per_node();
  EXPECT_EQ(best.instances, (best.needed_replicas + per_node - 1) / per_node + 1);
}

// The simulation routes as --emit-k8s deploys: LLM replicas behind the vLLM Router (round_robin;
// replicas across nodes, their leaders), both halves of a disaggregated plan likewise; a router
// the spec names wins; other models behind HAProxy as the screen assumed (one shared queue
// unbatched, round robin batched). A pool scaled to zero keeps its router (its scaling
// simulation routes with the same routing_as_deployed).
TEST(VerifyPlan, RoutesAsTheManifestsDeploy) {
  PlanOption one_node;
  one_node.config.batching = Batching::continuous;
  EXPECT_EQ(routing_as_deployed(one_node, true, nullptr), Router::round_robin);
  PlanOption across = one_node;  // the router draws the groups' leaders
  across.config.pipeline_parallel = 2;
  EXPECT_EQ(routing_as_deployed(across, true, nullptr), Router::round_robin);
  PlanOption split = one_node;
  split.decode = DecodePool{};
  EXPECT_EQ(routing_as_deployed(split, true, nullptr), Router::round_robin);
  PlanOption split_across = split;
  split_across.config.pipeline_parallel = 2;
  EXPECT_EQ(routing_as_deployed(split_across, true, nullptr), Router::round_robin);
  Deployment named;
  named.router = "power-of-two";
  named.router_given = true;
  EXPECT_EQ(routing_as_deployed(one_node, true, &named), Router::power_of_two);
  EXPECT_EQ(decode_routing_as_deployed(Router::power_of_two), Router::power_of_two);
  EXPECT_EQ(decode_routing_as_deployed(Router::round_robin), Router::round_robin);
  EXPECT_EQ(decode_routing_as_deployed(Router::shortest_queue), Router::least_tokens);
  Deployment defaulted;  // router not given: its default is not how the user routes
  EXPECT_EQ(routing_as_deployed(one_node, true, &defaulted), Router::round_robin);
  PlanOption classic;
  classic.config.batching = Batching::none;
  EXPECT_EQ(routing_as_deployed(classic, false, nullptr), Router::shared_queue);
  classic.config.batching = Batching::dynamic;
  EXPECT_EQ(routing_as_deployed(classic, false, nullptr), Router::round_robin);
  // HAProxy routes what the vLLM Router does not: a shared queue (one request per replica at a
  // time), the fewest in flight, round robin and two drawn for other models.
  EXPECT_EQ(haproxy_routing(Router::shared_queue, false).balance, "leastconn");
  EXPECT_EQ(haproxy_routing(Router::shared_queue, false).maxconn_per_replica, 1);
  EXPECT_EQ(haproxy_routing(Router::round_robin, false).balance, "roundrobin");
  EXPECT_EQ(haproxy_routing(Router::round_robin, false).maxconn_per_replica, 0);
  EXPECT_EQ(haproxy_routing(Router::power_of_two, false).balance, "random(2)");
  EXPECT_EQ(haproxy_routing(Router::shortest_queue, true).balance, "leastconn");
  EXPECT_EQ(haproxy_routing(Router::round_robin, true).balance, "");  // the vLLM Router's
  EXPECT_EQ(haproxy_routing(Router::random, false).balance, "");      // a Service's
  EXPECT_EQ(haproxy_routing(Router::least_tokens, true).balance, "");  // neither has it
  // Each deployed policy in words for --explain.
  EXPECT_NE(routing_words(Router::power_of_two, true).find("power_of_two"), std::string::npos);
  EXPECT_NE(routing_words(Router::round_robin, true).find("--policy round_robin"), std::string::npos);
  EXPECT_NE(routing_words(Router::random, true).find("kube-proxy"), std::string::npos);
  EXPECT_NE(routing_words(Router::shared_queue, false).find("HAProxy in front"), std::string::npos);
  EXPECT_NE(routing_words(Router::power_of_two, false).find("random(2)"), std::string::npos);
}

// A started replica gets requests once the router deployed for its routing has found it: behind
// HAProxy after its DNS cache, re-resolution and first check (half a 5 s period each on
// average), behind the vLLM Router as it turns ready; from zero the router's readiness probe
// adds half a period; a Service's kube-proxy adds nothing.
TEST(VerifyPlan, ARouterFindsAStartedReplicaAfterItsOwnDelays) {
  EXPECT_DOUBLE_EQ(router_join_s(Router::shared_queue, false, false), 7.5);
  EXPECT_DOUBLE_EQ(router_join_s(Router::shared_queue, false, true), 10.0);
  EXPECT_DOUBLE_EQ(router_join_s(Router::round_robin, false, false), 7.5);
  EXPECT_DOUBLE_EQ(router_join_s(Router::shortest_queue, true, false), 7.5);  // HAProxy's leastconn for an LLM
  EXPECT_DOUBLE_EQ(router_join_s(Router::round_robin, true, false), 0.0);     // the vLLM Router
  EXPECT_DOUBLE_EQ(router_join_s(Router::round_robin, true, true), 2.5);
  EXPECT_DOUBLE_EQ(router_join_s(Router::power_of_two, true, true), 2.5);
  EXPECT_DOUBLE_EQ(router_join_s(Router::random, true, true), 0.0);        // a Service
  EXPECT_DOUBLE_EQ(router_join_s(Router::least_tokens, true, true), 0.0);  // no router has it: a Service
}

}  // namespace
}  // namespace gw
