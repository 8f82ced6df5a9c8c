// gpuwise::plan: the cheapest configuration meeting each service's latency SLO and each training
// job's deadline in a spec (accelerator, count, batching, pricing, nodes), with the cost per
// month, per 1k inferences and per 1M tokens, verified by simulation; totals against the budget
// and the quotas the plan needs. The question `gpuwise plan SPEC` answers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuwise/catalog.h"
#include "gpuwise/spec.h"

namespace gpuwise {

// Every field left unset takes the library's default, the one `gpuwise plan` uses.
struct PlanOptions {
  std::string calibration_path;                  // from `gpuwise calibrate`; empty: the catalog's
  std::optional<double> usable_memory_fraction;  // of device memory for the server (0.90, vLLM)
  std::optional<double> overhead_gib;            // runtime memory per device outside it (1 GiB)
  std::optional<int> step_token_budget;          // tokens per engine step, chunked prefill (2048)
  bool simulate = true;                          // verify candidates in the simulator
  std::optional<long long> sim_requests;         // per simulated candidate (20,000)
  std::uint64_t seed = 1;                        // the same seed, the same plan
  int jobs = 0;                                  // threads (0: one per core); the same plan for any
};

class PlanResult {
 public:
  // Every service and job planned, within the budget and the quotas given.
  bool met() const;
  // `gpuwise plan`'s exit status for this result: 0 met, 3 not.
  int exit_code() const;
  double total_usd_per_month() const;

  // The document `gpuwise plan --format json` prints, byte for byte (schemas/plan.schema.json).
  std::string to_json() const;
  // What `gpuwise plan` prints as a table (no colour) or with --format md; explain adds each
  // service's assumptions (--explain).
  std::string to_text(bool explain = false) const;
  std::string to_markdown(bool explain = false) const;
  // The self-contained HTML report of --format html. Throws gpuwise::Error if the library was
  // built without the chart libraries.
  std::string to_html() const;
  // The lines the CLI writes to stderr: what cannot be planned, quotas short, budget exceeded.
  std::vector<std::string> warnings() const;
  // --format csv: a row per service, training job and batch job, plain numbers.
  std::string to_csv() const;
  // What `gpuwise plan --emit-k8s` writes, file name and YAML, in its order: per service the
  // workload, Service, autoscalers and nodes (a Karpenter NodePool; on GCP a GKE ComputeClass),
  // per batch job its Indexed Job or CronJob, the driver's ConfigMap and nodes. prometheus_url:
  // what the KEDA triggers query. Throws gpuwise::Error where they cannot be written (a plan on
  // TPU v3, which GKE has no nodes for).
  std::vector<std::pair<std::string, std::string>> manifests(
      const std::string& prometheus_url = "http://prometheus-operated.monitoring.svc:9090") const;

  struct Impl;
  explicit PlanResult(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

// Plans `spec` against `catalog`. Throws gpuwise::Error for a spec the question cannot take (a
// service without an SLO, a name the catalog lacks, an unreadable calibration or spot trace);
// a plan that cannot meet its constraints is a result (met() false), not an error.
// Seconds for a few services with simulation; safe to call from several threads at once.
PlanResult plan(const Catalog& catalog, const Spec& spec, const PlanOptions& options = {});

}  // namespace gpuwise
