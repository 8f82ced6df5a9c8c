#include "plan/batch_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "catalog/precision_support.h"
#include "core/formatting.h"
#include "core/text.h"
#include "plan/cold_start.h"
#include "plan/training_plan.h"

namespace gw {

namespace {

// Replicas a failed simulation may add, a node at a time, before the plan gives up on a layout;
// the cheapest layouts simulated before the plan gives up on all; the most replicas one job takes.
constexpr int kBatchExtraNodes = 4;
constexpr size_t kBatchLayoutsSimulated = 5;
constexpr double kMaxBatchReplicas = 100000;

// A replica of this layout run full: items per second at the largest batch it holds (LLMs:
// continuous batching at the KV cache's batch, vLLM's 256 at most; other models: the batch
// limit, of 16 to 256, that gets the most through). 0 where it holds no batch.
double full_replica_items_per_s(const ModelSpec& model, const ServiceSpec& service, const Accelerator* accelerator, int tp,
                                bool llm, const PlannerOptions& planner, Configuration& config) {
  double best = 0;
  for (int limit : llm ? std::vector<int>{256} : std::vector<int>{256, 64, 16}) {
    Configuration c{accelerator, tp, llm ? Batching::continuous : Batching::dynamic, limit};
    // At a negligible rate: the capacity, not a queue's.
    ServiceLevel level = evaluate_service(model, service, c, 1, 1e-6, planner);
    if (level.capacity_rps > best) best = level.capacity_rps, config = c;
  }
  return best;
}

bool cheaper(const BatchOption& a, const BatchOption& b) {
  if (std::fabs(a.usd_per_run - b.usd_per_run) > 1e-9) return a.usd_per_run < b.usd_per_run;
  if (a.nodes != b.nodes) return a.nodes < b.nodes;  // less to fail
  return a.run_hours < b.run_hours;
}

// The fewest whole nodes of the offering that finish by the deadline; each node's GPUs all
// serve (a replica per tp GPUs). None where even the cold start leaves no time.
std::optional<BatchOption> size_on(const BatchJobSpec& job, const Configuration& config, double per_replica, const Offering& offering,
                                   Pricing pricing, double startup_s, double spot_loss_share, int extra_nodes = 0) {
  const double available_s = job.deadline_hours * 3600 - startup_s;
  if (available_s <= 0 || per_replica <= 0) return std::nullopt;
  const int per_node = std::max(1, offering.accelerator_count / config.tensor_parallel);
  const double effective = per_replica * (1 - spot_loss_share);
  const double replicas_needed = std::ceil(job.items / (effective * available_s) - 1e-9);
  if (replicas_needed > kMaxBatchReplicas) return std::nullopt;  // past any fleet: not this layout
  const int nodes = static_cast<int>(std::ceil(replicas_needed / per_node - 1e-9)) + extra_nodes;
  BatchOption o;
  o.config = config;
  o.offering = &offering;
  o.pricing = pricing;
  o.nodes = std::max(1, nodes);
  o.replicas = o.nodes * per_node;
  o.items_per_s_per_replica = per_replica;
  o.startup_s = startup_s;
  o.spot_loss_share = spot_loss_share;
  o.run_hours = (startup_s + job.items / (o.replicas * effective)) / 3600;
  o.usd_per_run = *offering.usd_per_hour(pricing) * o.nodes * o.run_hours;  // billed by the second
  return o;
}

PlanOption as_plan_option(const BatchOption& b) {
  PlanOption o;
  o.config = b.config;
  o.offering = b.offering;
  o.pricing = b.pricing;
  o.replicas = b.replicas;
  o.needed_replicas = b.replicas;
  o.instances = b.nodes;
  o.nodes = {{b.offering, b.pricing, b.nodes, ""}};
  o.price_nodes();
  return o;
}

}  // namespace

ServiceSpec batch_job_service(const BatchJobSpec& job, bool llm, double rate_rps) {
  ServiceSpec s;
  s.name = job.name;
  s.model_key = job.model_key;
  s.input_tokens = job.input_tokens;
  s.output_tokens = job.output_tokens;
  s.traffic.average_rps = s.traffic.peak_rps = rate_rps;
  s.traffic.client_timeout_s = 0;  // a queue of work, not clients: nothing gives up
  s.traffic.client_timeout_given = true;
  s.batching = llm ? Batching::continuous : Batching::dynamic;
  s.min_replicas = 1;
  s.interruptible = job.interruptible;
  s.scaling = job.scaling;
  s.line = job.line;
  return s;
}

BatchJobPlan plan_batch_job(const Catalog& catalog, const Spec& spec, const BatchJobSpec& job, const PlannerOptions& planner,
                            const VerifyOptions* verify) {
  BatchJobPlan plan;
  plan.job = job.name;
  plan.runs_per_month = job.runs_per_month;
  const ModelSpec& model = spec.models.at(job.model_key);
  const bool llm = model.arch.kind == ModelKind::decoder;
  const ServiceSpec service = batch_job_service(job, llm, 1e-6);
  const ColdStart start = cold_start(model, job.scaling);
  const double preemptions_per_node_hour = SpotSettings{}.preemptions_per_hour;
  std::vector<BatchOption> options;
  std::vector<std::string> left_out;
  bool any_fit = false, any_in_time = false;
  for (const Accelerator* accelerator : allowed_accelerators(catalog, spec.constraints)) {
    if (const ServesOn serves = model_serves_on(catalog, model, *accelerator); !serves.ok) {
      if (!serves.why.empty()) left_out.push_back(accelerator->name + ": " + serves.why);
      continue;
    }
    for (int tp : {1, 2, 4, 8}) {
      if (model.arch.kind == ModelKind::generic ? tp > 1 : model.arch.num_heads % tp != 0) continue;
      Configuration config;
      const double per_replica = full_replica_items_per_s(model, service, accelerator, tp, llm, planner, config);
      if (per_replica <= 0) continue;  // the weights and one item's working set do not fit
      any_fit = true;
      for (const Offering* offering : allowed_offerings(catalog, spec.constraints, *accelerator, tp)) {
        for (Pricing pricing : spec.constraints.pricing) {
          if (!offering->usd_per_hour(pricing) || (pricing == Pricing::spot && !job.interruptible)) continue;
          // A reclaim costs the node its replacement's cold start and the batch it held (redone).
          const double spot_loss = pricing == Pricing::spot ? std::min(0.9, preemptions_per_node_hour * (start.start_s + 60) / 3600) : 0;
          if (auto o = size_on(job, config, per_replica, *offering, pricing, start.start_s, spot_loss)) {
            any_in_time = true;
            options.push_back(*o);
          }
        }
      }
    }
  }
  std::sort(options.begin(), options.end(), cheaper);
  // Verify the cheapest: its replicas at the rate the deadline needs, a node more where the
  // simulation falls behind; the next where it still does.
  for (size_t i = 0; i < options.size() && i < kBatchLayoutsSimulated && !plan.best; ++i) {
    if (!verify) {
      plan.best = options[i];
      break;
    }
    const BatchOption& screened = options[i];
    const double needed_rps = job.items / (job.deadline_hours * 3600 - screened.startup_s);
    const ServiceSpec at_rate = batch_job_service(job, llm, needed_rps);
    for (int extra = 0; extra <= kBatchExtraNodes && !plan.best; ++extra) {
      auto sized = size_on(job, screened.config, screened.items_per_s_per_replica, *screened.offering, screened.pricing,
                           screened.startup_s, screened.spot_loss_share, extra);
      if (!sized) break;
      VerifyOptions brief = *verify;
      brief.requests = std::min<long long>(verify->requests, std::max<long long>(2000, static_cast<long long>(job.items)));
      brief.router = Router::least_tokens;  // a job's own dispatcher keeps every replica's batch full
      auto check = simulate_option(catalog, model, at_rate, as_plan_option(*sized), brief);
      if (!check.ok()) break;
      sized->simulated = check.value();
      if (!check.value().overloaded) plan.best = *sized;
    }
  }
  std::map<std::string, bool> seen;
  for (const BatchOption& o : options)
    if (!seen[o.config.accelerator->name]) {
      seen[o.config.accelerator->name] = true;
      plan.frontier.push_back(o);
    }
  if (plan.best && !plan.frontier.empty() && plan.frontier.front().config.accelerator == plan.best->config.accelerator)
    plan.frontier.front() = *plan.best;
  plan.feasible = plan.best.has_value();
  if (!plan.feasible)
    plan.binding = !any_fit          ? "no allowed accelerator holds the model and one item's working set"
                   : !any_in_time && job.deadline_hours * 3600 <= start.start_s
                       ? fmt::format("the cold start ({:.0f} s) leaves no time before the {:.3g}-hour deadline", start.start_s,
                                     job.deadline_hours)
                   : !any_in_time ? fmt::format("no layout gets through {:.4g} items by the deadline with {:.0f} replicas or fewer",
                                                job.items, kMaxBatchReplicas)
                   : options.empty() ? "no allowed offering"
                                     : "the simulation fell behind the rate the deadline needs on the five cheapest layouts, each with up to four nodes more";
  if (plan.best) plan.usd_per_month = plan.best->usd_per_run * job.runs_per_month;
  plan.assumptions.push_back(fmt::format(
      "{:.4g} items per run, the last done by {:.3g} h after the start; each replica run full ({}), the fewest whole nodes that "
      "finish in time after a cold start of {:.0f} s (node provisioning, container start, weights at {:.3g} GB/s); every GPU of a "
      "node serves; billed by the second from the node's request to the last item",
      job.items, job.deadline_hours,
      llm ? "continuous batching at the largest batch its KV cache holds, at most 256 sequences, chunked prefill"
          : "the batch limit of 16 to 256 that gets the most through",
      start.start_s, start.load_gbps));
  if (job.interruptible)
    plan.assumptions.push_back(fmt::format(
        "interruptible: spot allowed; each reclaim costs its node the replacement's cold start and the minute of work it held, "
        "at {:.2g} reclaims per node-hour (assumed, as training assumes): {:.1f}% of spot node time",
        preemptions_per_node_hour, preemptions_per_node_hour * (start.start_s + 60) / 3600 * 100));
  else
    plan.assumptions.push_back("not interruptible (interruptible: false): on-demand or reserved capacity only");
  plan.assumptions.push_back(job.schedule.empty()
                                 ? fmt::format("{:.3g} runs a month (runs_per_month){}", job.runs_per_month,
                                               job.runs_per_month > 0 ? "" : ": a one-off job, priced per run")
                                 : fmt::format("{:.3g} runs a month from the schedule '{}' (its starts over 2027 / 12)",
                                               job.runs_per_month, job.schedule));
  if (verify)
    plan.assumptions.push_back("verified: the chosen replicas simulated at the rate the deadline needs (Poisson arrivals, each "
                               "item to the replica with the fewest tokens in hand), a node added where the queue grew");
  if (!left_out.empty()) plan.assumptions.push_back("not considered: " + join_list(left_out, "; "));
  return plan;
}

}  // namespace gw
