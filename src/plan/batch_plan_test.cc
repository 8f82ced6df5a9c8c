#include "plan/batch_plan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "plan/plan_spec.h"

namespace gw {
namespace {

// The plans point into the catalog: one for the test program.
const Catalog& batch_catalog() {
  static const Catalog embedded = Catalog::embedded().value();
  return embedded;
}

Spec batch_spec(const std::string& jobs, const std::string& constraints = "{clouds: [aws, gcp], pricing: [on-demand, spot]}") {
  auto spec = parse_spec("version: 1\nconstraints: " + constraints + R"(
models:
  summarizer: {preset: llama-3.1-8b, precision: bf16}
  scorer: {params: 50e6, flops_per_item: 2e8, bytes_per_item: 4e4}
batch_jobs:
)" + jobs,
                         "batch.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().to_string();
  return spec.value();
}

const char* kSummaries = R"(  - name: summaries
    model: summarizer
    items: 200000
    tokens: {input: 1500, output: 200}
    deadline_hours: 4
    schedule: "0 1 * * *"
)";

// 200,000 summaries by 4 hours after 01:00: the cheapest layout per run finishes in time after
// its cold start, no node fewer would, its price is its nodes' for the run, and its replicas
// keep up in simulation at the rate the deadline needs. No other layout priced costs less.
TEST(BatchPlan, TheCheapestRunThatMeetsTheDeadline) {
  const Spec spec = batch_spec(kSummaries);
  const BatchJobSpec& job = spec.batch_jobs.front();
  EXPECT_NEAR(job.runs_per_month, 365.0 / 12, 1e-9);  // a nightly schedule
  VerifyOptions verify;
  const BatchJobPlan plan = plan_batch_job(batch_catalog(), spec, job, PlannerOptions{}, &verify);
  ASSERT_TRUE(plan.feasible) << plan.binding;
  const BatchOption& b = *plan.best;
  EXPECT_LE(b.run_hours, job.deadline_hours);
  EXPECT_GT(b.startup_s, 0);
  // The run: the cold start, then the items at the replicas' full rate less spot's losses.
  const double rate = b.items_per_s_per_replica * b.replicas * (1 - b.spot_loss_share);
  EXPECT_NEAR(b.run_hours * 3600, b.startup_s + job.items / rate, 1e-6 * b.run_hours * 3600);
  EXPECT_NEAR(b.usd_per_run, *b.offering->usd_per_hour(b.pricing) * b.nodes * b.run_hours, 1e-9);
  // The fewest nodes: one fewer does not get through the items after the cold start.
  const int per_node = b.replicas / b.nodes;
  if (b.nodes > 1) {
    EXPECT_LT(b.items_per_s_per_replica * (b.nodes - 1) * per_node * (1 - b.spot_loss_share) * (job.deadline_hours * 3600 - b.startup_s),
              job.items);
  }
  ASSERT_TRUE(b.simulated);
  EXPECT_FALSE(b.simulated->overloaded);
  EXPECT_GT(b.simulated->requests, 0);
  // Spot, since the job may be interrupted, with the reclaims' cost counted.
  EXPECT_EQ(b.pricing, Pricing::spot);
  EXPECT_GT(b.spot_loss_share, 0);
  EXPECT_NEAR(plan.usd_per_month, b.usd_per_run * job.runs_per_month, 1e-9);
  ASSERT_FALSE(plan.frontier.empty());
  for (size_t i = 1; i < plan.frontier.size(); ++i) {
    EXPECT_GE(plan.frontier[i].usd_per_run, plan.frontier[i - 1].usd_per_run - 1e-9);
    EXPECT_NE(plan.frontier[i].config.accelerator, plan.frontier[i - 1].config.accelerator);
  }
  EXPECT_EQ(plan.frontier.front().config.accelerator, b.config.accelerator);
}

// Not interruptible: no spot node anywhere in the answer.
TEST(BatchPlan, AJobThatMayNotBeInterruptedStaysOffSpot) {
  std::string jobs = kSummaries;
  jobs += "    interruptible: false\n";
  const Spec spec = batch_spec(jobs);
  const BatchJobPlan plan = plan_batch_job(batch_catalog(), spec, spec.batch_jobs.front(), PlannerOptions{}, nullptr);
  ASSERT_TRUE(plan.feasible) << plan.binding;
  EXPECT_NE(plan.best->pricing, Pricing::spot);
  for (const auto& o : plan.frontier) EXPECT_NE(o.pricing, Pricing::spot);
  EXPECT_DOUBLE_EQ(plan.best->spot_loss_share, 0);
}

// A deadline (3 minutes) shorter than a node takes to start serving the 8B model (181 s): no
// plan, and the reason.
TEST(BatchPlan, ADeadlineInsideTheColdStartHasNoPlan) {
  const Spec spec =
      batch_spec(R"(  - {name: quick, model: summarizer, items: 1000, tokens: {input: 100, output: 10}, deadline_hours: 0.05})");
  const BatchJobPlan plan = plan_batch_job(batch_catalog(), spec, spec.batch_jobs.front(), PlannerOptions{}, nullptr);
  EXPECT_FALSE(plan.feasible);
  EXPECT_NE(plan.binding.find("cold start"), std::string::npos) << plan.binding;
}

// More items than any fleet gets through by the deadline: no plan, not an overflow.
TEST(BatchPlan, MoreWorkThanAnyFleetHasNoPlan) {
  const Spec spec = batch_spec(R"(  - {name: ocean, model: summarizer, items: 1e15, tokens: {input: 4000, output: 1000}, deadline_hours: 1})");
  const BatchJobPlan plan = plan_batch_job(batch_catalog(), spec, spec.batch_jobs.front(), PlannerOptions{}, nullptr);
  EXPECT_FALSE(plan.feasible);
  EXPECT_FALSE(plan.best);
  EXPECT_NE(plan.binding.find("no layout gets through"), std::string::npos) << plan.binding;
}

// In a plan: the jobs' monthly cost is in the total, their nodes in the quotas, and a one-off job
// (no schedule) is priced per run beside it.
TEST(BatchPlan, JobsCountInThePlansTotalAndQuotas) {
  const Spec spec = batch_spec(std::string(kSummaries) + "  - {name: backfill, model: scorer, items: 1e9, deadline_hours: 12}\n");
  PlanSpecOptions options;
  options.simulate = false;
  auto result = plan_spec(batch_catalog(), spec, options);
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  const PlanResult& r = result.value();
  ASSERT_EQ(r.batch_jobs.size(), 2u);
  ASSERT_TRUE(r.batch_jobs[0].best && r.batch_jobs[1].best);
  EXPECT_NEAR(r.total_usd_per_month, r.batch_jobs[0].usd_per_month, 1e-9);
  EXPECT_NEAR(r.one_off_batch_usd, r.batch_jobs[1].best->usd_per_run, 1e-9);
  EXPECT_TRUE(r.met());
  int quota_rows = 0;
  for (const auto& q : r.quotas)
    for (const auto& by : q.by) quota_rows += by == "summaries" || by == "backfill";
  EXPECT_GE(quota_rows, 2);
}

}  // namespace
}  // namespace gw
