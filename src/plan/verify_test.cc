// Simulated verification of plans: when no screened candidate meets the SLO over a bursty trace,
// the plan is the cheapest layout grown until the replay agrees, which a brute force over every
// screened layout (each grown without a price cap) confirms.
#include "plan/verify.h"

#include <gtest/gtest.h>

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
  EXPECT_GT(plan.best->replicas, screened.ranked.front().replicas);
  int grown_layouts = 0;
  for (const auto& option : screened.ranked) {
    auto grown = grow_until_verified(catalog, model, service, option, options);
    if (!grown) continue;
    ++grown_layouts;
    EXPECT_GE(grown->usd_per_hour, plan.best->usd_per_hour - 1e-9)
        << option.config.accelerator->name << " tp" << option.config.tensor_parallel << " grown to " << grown->replicas;
  }
  EXPECT_GE(grown_layouts, 3);
  // The screen's cheapest layout alone, grown, costs more than the plan (the old rule).
  auto first = grow_until_verified(catalog, model, service, screened.best.value(), options);
  ASSERT_TRUE(first.has_value());
  EXPECT_GT(first->usd_per_hour, plan.best->usd_per_hour * 1.2);
}

}  // namespace
}  // namespace gw
