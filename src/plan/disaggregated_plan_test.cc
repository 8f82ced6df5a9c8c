#include "plan/disaggregated_plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/serving_defaults.h"
#include "plan/plan_spec.h"

namespace gw {
namespace {

// Long prompts and a tight TPOT: in one pool every decode step carries prompt chunks, so only
// separate pools meet it (DistServe's case); with a loose TPOT one pool is cheaper.
std::string long_prompt_spec(double tpot_p99_s) {
  return R"(
constraints: {clouds: [aws], pricing: [on-demand], accelerators: [H100]}
models: {m: {preset: llama-3.1-70b, precision: fp8}}
services:
  - name: rag
    model: m
    traffic: {rps: 16}
    tokens: {input: 6000, output: 300}
    slo: {ttft_p99_s: 2.0, tpot_p99_s: )" + std::to_string(tpot_p99_s) + "}\n";
}

// The plans point into the catalog: one for the whole test program.
const Catalog& disaggregated_catalog() {
  static const Catalog embedded = Catalog::embedded().value();
  return embedded;
}

PlanResult plan_text(const std::string& text, bool simulate) {
  auto spec = parse_spec(text, "rag.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().to_string();
  PlanSpecOptions options;
  options.simulate = simulate;
  options.sim_requests = 4000;
  options.jobs = 1;
  auto result = plan_spec(disaggregated_catalog(), spec.value(), options);
  EXPECT_TRUE(result.ok());
  return result.value();
}

TEST(DisaggregatedPlan, SeparatePoolsWinWhenPromptChunksBreakTheTpot) {
  const PlanResult result = plan_text(long_prompt_spec(0.025), true);
  const ServicePlan& plan = result.services[0];
  ASSERT_TRUE(plan.best) << plan.binding;
  ASSERT_TRUE(plan.best->disaggregated());
  ASSERT_TRUE(plan.best->simulated && plan.best->simulated->meets);
  EXPECT_LE(plan.best->simulated->tpot_p99_s, 0.025);
  // Both pools on p5.48xlarge (EFA, 3,200 Gb/s over 8 GPUs), each on at least min_replicas nodes.
  EXPECT_EQ(plan.best->offering->instance_type, "p5.48xlarge");
  EXPECT_EQ(plan.best->decode->link, "efa");
  EXPECT_DOUBLE_EQ(plan.best->decode->link_gbps_per_gpu, 400);
  ASSERT_EQ(plan.best->nodes.size(), 2u);
  EXPECT_GE(plan.best->nodes[0].instances, 2);
  EXPECT_GE(plan.best->nodes[1].instances, 2);
  EXPECT_EQ(plan.best->gpus(), plan.best->config.tensor_parallel * plan.best->replicas +
                                   plan.best->decode->config.tensor_parallel * plan.best->decode->replicas);
  EXPECT_NE(plan.disaggregation_verdict.find("win"), std::string::npos) << plan.disaggregation_verdict;
  // A mean prompt's KV: 6,000 tokens x 80 layers x 8 KV heads x 128 x 2 (K and V) x 1 byte (fp8)
  // over the prefill replica's GPUs at 400 Gb/s each.
  const double bytes = 6000.0 * 80 * 8 * 128 * 2;
  EXPECT_NEAR(plan.best->decode->kv_transfer_s, bytes / (plan.best->config.tensor_parallel * 400e9 / 8), 1e-3 * plan.best->decode->kv_transfer_s);
}

TEST(DisaggregatedPlan, OnePoolWinsWhenTheTpotIsLoose) {
  const PlanResult result = plan_text(long_prompt_spec(0.2), false);
  const ServicePlan& plan = result.services[0];
  ASSERT_TRUE(plan.best && plan.disaggregated);
  EXPECT_FALSE(plan.best->disaggregated());
  EXPECT_LT(plan.best->usd_per_hour, plan.disaggregated->usd_per_hour);
  EXPECT_NE(plan.disaggregation_verdict.find("lose"), std::string::npos) << plan.disaggregation_verdict;
  EXPECT_NE(plan.disaggregation_verdict.find("prefill pool is bound by"), std::string::npos);
}

TEST(DisaggregatedPlan, PoolsBecomeRolesInTheSimulatedDeployment) {
  const PlanResult result = plan_text(long_prompt_spec(0.2), false);
  const PlanOption& d = *result.services[0].disaggregated;
  Deployment deployment = deployment_of(d, true, 2048);
  ASSERT_EQ(deployment.groups.size(), 2u);
  EXPECT_EQ(deployment.groups[0].role, "prefill");
  EXPECT_EQ(deployment.groups[0].count, d.replicas);
  EXPECT_EQ(deployment.groups[1].role, "decode");
  EXPECT_EQ(deployment.groups[1].tensor_parallel, d.decode->config.tensor_parallel);
  ASSERT_TRUE(deployment.disaggregation);
  EXPECT_EQ(deployment.disaggregation->link, d.decode->link);
  EXPECT_EQ(deployment.disaggregation->kv_transfer, "overlapped");
  // The spec's engine pulls its KV between steps: the verified deployment does too.
  Deployment engine;
  engine.disaggregation = DisaggregationSpec{};
  engine.disaggregation->kv_transfer = "between_steps";
  EXPECT_EQ(deployment_of(d, true, 2048, &engine).disaggregation->kv_transfer, "between_steps");
  EXPECT_EQ(d.layout(), std::to_string(d.config.tensor_parallel * d.replicas) + ":" +
                            std::to_string(d.decode->config.tensor_parallel * d.decode->replicas));
}

TEST(DisaggregatedPlan, TheLinkIsTheFabricOrTheSpecs) {
  Offering efa;
  efa.accelerator_count = 8;
  efa.fabric = "efa";
  efa.network_gbps = 3200;
  Offering plain;
  plain.accelerator_count = 2;
  plain.network_gbps = 100;
  Offering unknown;
  unknown.accelerator_count = 4;
  unknown.fabric = "infiniband";
  ServiceSpec service;
  EXPECT_EQ(kv_link_for(efa, service).name, "efa");
  EXPECT_DOUBLE_EQ(kv_link_for(efa, service).gbps_per_gpu, 400);
  EXPECT_EQ(kv_link_for(plain, service).name, "tcp");
  EXPECT_DOUBLE_EQ(kv_link_for(plain, service).gbps_per_gpu, 50);
  EXPECT_DOUBLE_EQ(kv_link_for(unknown, service).gbps_per_gpu, 400);
  service.deployment = Deployment{};
  service.deployment->disaggregation = DisaggregationSpec{};
  service.deployment->disaggregation->link = "roce";
  service.deployment->disaggregation->gbps_per_gpu = 200.0;
  EXPECT_EQ(kv_link_for(plain, service).name, "roce");
  EXPECT_DOUBLE_EQ(kv_link_for(plain, service).gbps_per_gpu, 200);
  EXPECT_FALSE(kv_link_for(plain, service).pulled_between_steps);
  service.deployment->disaggregation->kv_transfer = "between_steps";
  EXPECT_TRUE(kv_link_for(plain, service).pulled_between_steps);
  EXPECT_DOUBLE_EQ(kv_link_for(plain, service).pull_call_s, kEngineWorkerCallS);
}

// An engine that pulls each request's KV between its decode steps (DistServe's) stops its decode
// replica for every pull: the screen counts that time against the decode pool, where it once
// assumed the KV streamed behind the prefill whatever the spec said.
TEST(DisaggregatedPlan, PullsBetweenStepsTakeTheDecodeReplicasTime) {
  const std::string tight = long_prompt_spec(0.025);
  const PlanResult streamed = plan_text(tight + "    deployment: {disaggregation: {link: efa}}\n", false);
  const PlanResult pulled = plan_text(tight + "    deployment: {disaggregation: {link: efa, kv_transfer: between_steps}}\n", false);
  ASSERT_TRUE(streamed.services[0].disaggregated && pulled.services[0].disaggregated);
  const PlanOption& s = *streamed.services[0].disaggregated;
  const PlanOption& p = *pulled.services[0].disaggregated;
  EXPECT_FALSE(s.decode->kv_pulled_between_steps);
  EXPECT_DOUBLE_EQ(s.decode->pull_share(), 0);
  ASSERT_TRUE(p.decode->kv_pulled_between_steps);
  // A pull takes the slower end: the prefill replica's GPUs sending (kv_transfer_s) or the decode
  // replica's receiving, each GPU at 400 Gb/s; then the worker's call. Per decode replica the
  // load needs, 16 req/s shared.
  const double bytes = 6000.0 * 80 * 8 * 128 * 2;
  const double receive_s = bytes / (p.decode->config.tensor_parallel * 400e9 / 8);
  const double pull_s = std::max(p.decode->kv_transfer_s, receive_s) + kEngineWorkerCallS;
  EXPECT_NEAR(p.decode->pull_share_needed, 16.0 / p.decode->needed_replicas * pull_s, 1e-9);
  EXPECT_GT(p.decode->pull_share_needed, 0.05);
  // What the deployed replicas spend (min_replicas 2 where the load needs fewer), as the verdict says.
  EXPECT_NEAR(p.decode->pull_share(), 16.0 / p.decode->replicas * pull_s, 1e-9);
  EXPECT_NE(pulled.services[0].disaggregation_verdict.find(fmt::format("{:.1f}% of their time at peak", p.decode->pull_share() * 100)),
            std::string::npos);
  // The same pools, a longer screened TPOT: the steps stretched by the pulls and a pull's wait.
  ASSERT_EQ(s.layout(), p.layout());
  ASSERT_EQ(s.decode->replicas, p.decode->replicas);
  EXPECT_GT(p.level.tpot_p99_s, s.level.tpot_p99_s * (1 + 0.5 * p.decode->pull_share()));
  EXPECT_GT(p.level.latency_p99_s, s.level.latency_p99_s);
  EXPECT_NE(pulled.services[0].disaggregation_verdict.find("pulled by the decode replicas between their steps"), std::string::npos)
      << pulled.services[0].disaggregation_verdict;
  // --explain says so, and what a pull costs.
  auto says = [](const ServicePlan& plan, const std::string& text) {
    return std::any_of(plan.assumptions.begin(), plan.assumptions.end(),
                       [&](const std::string& a) { return a.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(says(pulled.services[0], "pulled by the decode replica between its steps"));
  EXPECT_TRUE(says(pulled.services[0], "worker call of 0.49 ms"));
  EXPECT_TRUE(says(streamed.services[0], "streamed behind its prefill"));
}

// A caller may leave disaggregation out (one pool of replicas only).
TEST(DisaggregatedPlan, CanBeLeftOut) {
  auto spec = parse_spec(long_prompt_spec(0.025), "rag.yaml");
  PlanSpecOptions options;
  options.simulate = false;
  options.disaggregated = false;
  auto result = plan_spec(disaggregated_catalog(), spec.value(), options);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result.value().services[0].disaggregated);
  if (result.value().services[0].best) {
    EXPECT_FALSE(result.value().services[0].best->disaggregated());
  }
}

}  // namespace
}  // namespace gw
