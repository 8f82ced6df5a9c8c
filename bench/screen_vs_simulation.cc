// The plan's screen against its simulator on every example's chosen layout: p99 TTFT and TPOT
// for LLM services, p99 latency otherwise, the screen's error relative to the simulation at
// peak. Plans report the simulated figures (the screen only prunes); this prints how far the
// screen is from them. Exits 1 when any gap exceeds the 15% budget.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "plan/inference.h"
#include "plan/verify.h"
#include "spec/spec.h"

int main(int argc, char** argv) {
  using namespace gw;
  const std::string examples = argc > 1 ? argv[1] : "examples";
  constexpr double kBudget = 0.15;
  Catalog catalog = Catalog::embedded().value();
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(examples))
    if (entry.path().extension() == ".yaml") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  double worst = 0;
  int compared = 0;
  std::printf("%-28s %-16s %-6s %10s %10s %8s\n", "example", "service", "metric", "screen", "simulated", "error");
  for (const auto& path : paths) {
    auto spec = load_spec(path);
    if (!spec.ok()) continue;
    for (const auto& service : spec.value().services) {
      if (!service.slo_given) continue;
      ServicePlan plan = plan_service(catalog, spec.value(), service, PlannerOptions{});
      verify_plan(catalog, spec.value(), service, plan, VerifyOptions{});
      if (!plan.feasible || !plan.best || !plan.best->simulated) continue;
      const PlanOption& b = *plan.best;
      const bool llm = spec.value().models.at(service.model_key).arch.kind == ModelKind::decoder;
      std::vector<std::tuple<const char*, double, double>> rows;
      if (llm) rows = {{"ttft", b.level.ttft_p99_s, b.simulated->ttft_p99_s}, {"tpot", b.level.tpot_p99_s, b.simulated->tpot_p99_s}};
      else rows = {{"p99", b.level.latency_p99_s, b.simulated->latency_p99_s}};
      for (const auto& [metric, screen, simulated] : rows) {
        if (!(simulated > 0)) continue;
        double error = screen / simulated - 1;
        worst = std::max(worst, std::fabs(error));
        ++compared;
        std::printf("%-28s %-16s %-6s %10.4g %10.4g %+7.1f%%\n", std::filesystem::path(path).filename().string().c_str(),
                    service.name.c_str(), metric, screen, simulated, error * 100);
      }
    }
  }
  std::printf("screen against simulation on %d figures: worst %.1f%% (budget %.0f%%)\n", compared, worst * 100, kBudget * 100);
  return worst <= kBudget ? 0 : 1;
}
