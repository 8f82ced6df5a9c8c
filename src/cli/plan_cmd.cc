// gpuwise plan SPEC: the cheapest configuration that meets each service's SLO, and why.
#include <CLI/CLI.hpp>

#include <filesystem>

#include "cli/context.h"
#include "core/atomic_file.h"
#include "plan/plan_json.h"
#include "plan/plan_manifests.h"
#include "plan/plan_report.h"
#include "plan/plan_spec.h"
#include "report/style.h"

namespace gw {

namespace {

struct PlanArgs {
  std::string spec;
  std::string calibration;
  PlanSpecOptions plan;
  bool no_simulate = false;
  std::string emit_k8s;  // folder for the Deployment, KEDA, HPA and Karpenter manifests
  std::string prometheus_url = "http://prometheus-operated.monitoring.svc:9090";
};

void write_manifests(CommandContext& context, const PlanResult& result, const PlanArgs& args) {
  // Every manifest first: a plan they cannot be written for leaves no folder behind.
  auto manifests = plan_manifests(context.catalog(), result, args.plan, args.prometheus_url);
  if (!manifests.ok()) throw InputError{manifests.error()};
  std::error_code error;
  std::filesystem::create_directories(args.emit_k8s, error);
  if (error) fail("--emit-k8s", "cannot create the folder '" + args.emit_k8s + "': " + error.message());
  for (const auto& m : manifests.value()) {
    std::string path = (std::filesystem::path(args.emit_k8s) / m.file_name).string();
    if (auto e = write_file_atomically(path, m.yaml)) throw InputError{*e};
    context.note("wrote " + path + (context.options.explain && !m.summary.empty() ? ": " + m.summary : ""));
  }
}

int run_plan(CommandContext& context, PlanArgs args) {
  auto spec = load_spec(args.spec);
  if (!spec.ok()) throw InputError{spec.error()};
  context.add_input(args.spec);
  std::optional<Calibration> calibration = load_calibration_option(args.calibration);
  if (calibration) context.add_input(args.calibration);
  args.plan.calibration = calibration ? &*calibration : nullptr;
  args.plan.simulate = !args.no_simulate;
  auto planned = plan_spec(context.catalog(), spec.value(), args.plan);
  if (!planned.ok()) throw InputError{planned.error()};
  const PlanResult& result = planned.value();
  if (!args.emit_k8s.empty()) write_manifests(context, result, args);

  const bool json = context.options.format == "json";
  if (json) {
    context.emit_json(to_json(result), "plan");
  } else {
    PlanReportOptions report;
    report.markdown = context.options.format == "md";
    report.colour = colour_wanted_here(!context.options.output.empty(), context.options.format);
    report.explain = context.options.explain;
    PlanReport written = plan_report(result, report);
    if (context.options.format == "html")
      context.emit_document(written.document);
    else if (context.options.format == "csv")
      context.emit_table(plan_summary_table(result), "");
    else
      context.emit(written.text);
  }
  for (const auto& line : plan_warnings(result, json)) context.err() << line << "\n";
  return result.exit_code();
}

}  // namespace

void add_plan_command(CLI::App& app, CommandContext& context, Action& action) {
  auto* plan = app.add_subcommand("plan", "Cheapest configuration meeting each service's SLO (workload spec in YAML)");
  auto args = std::make_shared<PlanArgs>();
  plan->add_option("SPEC", args->spec, "Workload spec (YAML); see examples/")->required();
  plan->add_option("--calibration", args->calibration, "Efficiency factors from `gpuwise calibrate`");
  plan->add_option("--usable-fraction", args->plan.usable_fraction, "Share of device memory the server may use")
      ->check(CLI::Range(0.05, 1.0));
  plan->add_option("--overhead-gib", args->plan.overhead_gib, "Runtime overhead per device")->check(CLI::Range(0.0, 1024.0));
  plan->add_option("--prefill-chunk", args->plan.prefill_chunk_tokens, "Token budget per step (chunked prefill)")
      ->check(CLI::Range(64, 1 << 20));
  plan->add_flag("--no-simulate", args->no_simulate, "Screen only; do not verify candidates in the simulator");
  plan->add_option("--sim-requests", args->plan.sim_requests, "Requests per simulated candidate")
      ->check(CLI::Range(100LL, 100000000LL));
  plan->add_option("--seed", args->plan.seed, "Simulation seed");
  plan->add_option("-j,--jobs", args->plan.jobs, "Services (or one service's frontier) planned at once; 0: one per core. "
                   "The plan is the same for any value")
      ->check(CLI::Range(0, 1024));
  plan->add_option("--emit-k8s", args->emit_k8s, "Write Kubernetes manifests here: per service a Deployment, Service, KEDA ScaledObject, HPA and the nodes (a Karpenter NodePool; on GCP a GKE ComputeClass); a disaggregated plan: its pools, the vLLM Router and its RBAC; replicas across nodes: a LeaderWorkerSet; per batch job an Indexed Job (a CronJob on its schedule) and its driver's ConfigMap");
  plan->add_option("--prometheus-url", args->prometheus_url, "Prometheus the KEDA trigger queries (with --emit-k8s)");
  plan->callback([&context, &action, args] { action = [&context, args] { return run_plan(context, *args); }; });
}

}  // namespace gw
