// The plan as one table for a spreadsheet (plan --format csv): a row per workload with plain
// numbers that add up to the plan's total, and a row that says why where there is no plan.
#include "plan/plan_report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "plan/plan_spec.h"
#include "spec/spec.h"

namespace gw {
namespace {

size_t column(const Table& t, const std::string& name) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

TEST(PlanSummaryTable, ARowPerWorkloadThatAddsUpToTheTotal) {
  auto spec = load_spec(std::string(GPUWISE_SOURCE_DIR) + "/examples/nightly-batch.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  static const Catalog catalog = Catalog::embedded().value();
  PlanSpecOptions options;
  options.sim_requests = 2000;
  auto result = plan_spec(catalog, spec.value(), options);
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  const Table t = plan_summary_table(result.value());
  ASSERT_EQ(t.rows.size(), 2u);
  double month = 0;
  for (const auto& row : t.rows) {
    EXPECT_EQ(row[column(t, "kind")], "batch_job");
    EXPECT_EQ(row[column(t, "meets")], "true");
    month += std::stod(row[column(t, "usd_per_month")]);
    EXPECT_GT(std::stod(row[column(t, "usd_per_run")]), 0);
  }
  EXPECT_NEAR(month, result.value().total_usd_per_month, 1e-6 * month);
  // The summaries' spot price is the Atlanta Local Zone's: the zone has its own column.
  EXPECT_EQ(t.rows[0][column(t, "region")], "us-east-1");
  EXPECT_EQ(t.rows[0][column(t, "zone")], "use1-atl2-az1");

  auto impossible = parse_spec(R"(
constraints: {clouds: [aws], accelerators: [T4]}
models: {m: {preset: llama-3.1-70b, precision: bf16}}
services:
  - name: chat
    model: m
    traffic: {rps: 1}
    tokens: {input: 1000, output: 100}
    slo: {ttft_p99_s: 1, tpot_p99_s: 0.05}
)",
                               "impossible.yaml");
  ASSERT_TRUE(impossible.ok()) << impossible.error().to_string();
  auto none = plan_spec(catalog, impossible.value(), options);
  ASSERT_TRUE(none.ok());
  const Table u = plan_summary_table(none.value());
  ASSERT_EQ(u.rows.size(), 1u);
  EXPECT_EQ(u.rows[0][column(u, "meets")], "false");
  EXPECT_EQ(u.rows[0][column(u, "usd_per_month")], "");
  EXPECT_FALSE(u.rows[0][column(u, "note")].empty());
}

}  // namespace
}  // namespace gw
