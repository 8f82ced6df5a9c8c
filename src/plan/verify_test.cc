// Simulated verification of plans: when no screened candidate meets the SLO over a bursty trace,
// the plan is the cheapest layout grown until the replay agrees, which a brute force over every
// screened layout (each grown without a price cap) confirms.
#include "plan/verify.h"
#include "plan/plan_spec.h"

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

// Qwen2.5-72B in fp8 serving 2,500-token prompts and 300-token answers at 9 requests/s, under
// the given constraints.
std::string qwen_support_spec(const std::string& constraints) {
  return "version: 1\nconstraints: " + constraints + R"(
models: {m: {preset: qwen2.5-72b, precision: fp8}}
services:
  - name: support
    model: m
    traffic: {rps: 9}
    tokens: {input: {mean: 2500, p99: 8000}, output: 300}
    slo: {ttft_p99_s: 1.5, tpot_p99_s: 0.05}
)";
}

// Qwen2.5-72B in fp8 at 9 requests/s on GCP H100s: the screen's cheapest, four replicas of 2
// GPUs (a tie between four 2-GPU nodes and two 4-GPU ones), misses the TPOT in simulation and is
// grown to five. Five replicas fill five 2-GPU nodes but three 4-GPU ones: the grown layout is
// placed on the nodes cheapest for its count ($33.91/hour), not kept on the screen's (three
// a3-highgpu-4g, $40.70/hour, which a tp4 layout then undercut at the same price).
TEST(VerifyPlan, AGrownLayoutIsPlacedOnTheNodesCheapestForItsCount) {
  auto spec = parse_spec(qwen_support_spec("{clouds: [gcp], pricing: [reserved-1y], accelerators: [H100]}"), "support.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  const ServiceSpec& service = spec.value().services.front();
  const ModelSpec& model = spec.value().models.at(service.model_key);
  PlannerOptions one_pool;
  one_pool.consider_disaggregated = false;
  ServicePlan plan = plan_service(catalog, spec.value(), service, one_pool);
  const ServicePlan screened = plan;
  VerifyOptions options;
  options.requests = 4000;
  verify_plan(catalog, spec.value(), service, plan, options);
  ASSERT_TRUE(plan.feasible && plan.best && plan.best->simulated && plan.best->simulated->meets) << plan.binding;
  EXPECT_EQ(plan.best->config.tensor_parallel, 2);
  EXPECT_EQ(plan.best->replicas, 5);
  EXPECT_EQ(plan.best->offering->instance_type, "a3-highgpu-2g");
  EXPECT_EQ(plan.best->instances, 5);
  EXPECT_EQ(plan.best->gpus(), 10);
  // Every offering the screen priced the layout on, at the grown count: none is cheaper.
  ASSERT_TRUE(plan.best->placements);
  for (const Placement& placement : *plan.best->placements) {
    PlanOption other = *plan.best;
    other.offering = placement.offering;
    other.pricing = placement.pricing;
    other.floor_offering = placement.floor_offering;
    place_replicas(other, plan.best->needed_replicas);
    EXPECT_GE(other.usd_per_hour, plan.best->usd_per_hour - 1e-9) << placement.offering->instance_type;
  }
  // Each screened layout grown: none undercuts the plan.
  for (const PlanOption& option : screened.ranked) {
    auto grown = grow_until_verified(catalog, model, service, option, options);
    if (grown) {
      EXPECT_GE(grown->usd_per_hour, plan.best->usd_per_hour - 1e-9) << option.config.tensor_parallel;
    }
  }
}

// The same service on three clouds: three prefill and two decode replicas of 2 x H100 meet the
// SLO at $24,757.66/month; one pool's screened four replicas miss the TPOT and, grown to five on
// the nodes cheapest for five (five a3-highgpu-2g, not three a3-highgpu-4g at $29,709.18), cost
// the same. At equal cost one pool is kept, replayed in full as every plan is (it was grown on
// the comparison's shorter runs), and it heads the frontier it is chosen from.
TEST(VerifyPlan, AtEqualCostTheGrownPoolIsKeptAfterAFullReplay) {
  auto spec = parse_spec(qwen_support_spec("{clouds: [aws, gcp, azure], pricing: [on-demand, spot, reserved-1y]}"), "support.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  static const Catalog catalog = Catalog::embedded().value();  // the plan points into it
  PlanSpecOptions options;
  options.sim_requests = 20000;
  options.jobs = 1;
  auto result = plan_spec(catalog, spec.value(), options);
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  const ServicePlan& plan = result.value().services[0];
  ASSERT_TRUE(plan.best && plan.disaggregated) << plan.binding;
  EXPECT_FALSE(plan.best->disaggregated());
  EXPECT_EQ(plan.best->offering->instance_type, "a3-highgpu-2g");
  EXPECT_EQ(plan.best->replicas, 5);
  EXPECT_NEAR(plan.best->usd_per_hour, plan.disaggregated->usd_per_hour, 1e-6);
  ASSERT_TRUE(plan.best->simulated && plan.best->simulated->meets);
  EXPECT_EQ(plan.best->simulated->requests, 20000);
  ASSERT_FALSE(plan.pareto.empty());
  EXPECT_TRUE(same_layout(plan.pareto.front(), *plan.best));
  EXPECT_NE(plan.disaggregation_verdict.find("costs the same as"), std::string::npos) << plan.disaggregation_verdict;
}

// Llama-3.1-70B in fp8 on AWS, 6 requests/s, TPOT p99 60 ms: four prefill replicas of 2 x L40S
// and two decode of 4 x L40S pass first, so the cheaper-than-$32k aggregated layouts behind them
// were never replayed. The verdict weighs them replayed as screened: two replicas of 8 x A100-40GB
// meet the SLO (their frontier run says so), where each had been grown from the screen's count
// without a replay ("the screen's 2 replicas grown to 3": $48,087.23 against $32,058.15).
TEST(VerifyPlan, TheAggregatedLayoutWeighedIsReplayedAsScreenedBeforeItIsGrown) {
  auto spec = parse_spec(R"(
version: 1
constraints: {clouds: [aws], pricing: [on-demand]}
models: {m: {preset: llama-3.1-70b, precision: fp8}}
services:
  - name: chat
    model: m
    traffic: {rps: 6}
    tokens: {input: 1500, output: 300}
    slo: {ttft_p99_s: 2, tpot_p99_s: 0.06}
)",
                         "chat.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  static const Catalog catalog = Catalog::embedded().value();  // the plan points into it
  PlanSpecOptions options;
  options.jobs = 1;
  auto result = plan_spec(catalog, spec.value(), options);
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  const ServicePlan& plan = result.value().services[0];
  ASSERT_TRUE(plan.best && plan.best->disaggregated()) << plan.binding;
  const std::string& verdict = plan.disaggregation_verdict;
  EXPECT_NE(verdict.find("against the cheapest aggregated layout, 2 replica(s) of A100-40GB tp8"), std::string::npos) << verdict;
  EXPECT_EQ(verdict.find("grown to"), std::string::npos) << verdict;
  // The frontier's row for that layout passed its replay at that count.
  bool replayed = false;
  for (const PlanOption& o : plan.pareto)
    if (!o.disaggregated() && o.config.accelerator->name == "A100-40GB" && o.replicas == 2) {
      replayed = true;
      ASSERT_TRUE(o.simulated);
      EXPECT_TRUE(o.simulated->meets);
    }
  EXPECT_TRUE(replayed);
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
