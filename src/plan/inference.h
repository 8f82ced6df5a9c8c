// Capacity planning for real-time inference services: for every accelerator, tensor-parallel
// degree, batching policy and batch limit, the fewest replicas that meet the SLO at peak traffic
// (screened with a queueing model of batched service), then every offering and pricing that can
// host them; the cheapest wins, with a cost-latency Pareto set and the no-batching contrast.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/serving_defaults.h"
#include "core/money.h"
#include "catalog/catalog.h"
#include "perf/efficiency.h"
#include "spec/spec.h"

namespace gw {

// How one configuration behaves at a request rate (per the planner's model).
struct ServiceLevel {
  bool feasible = false;
  std::string binding;         // why not, when not
  double latency_p50_s = 0;    // classic: end to end; LLM: end to end
  double latency_p99_s = 0;
  double ttft_p99_s = 0;       // LLM only
  double tpot_p99_s = 0;       // LLM only
  double utilization = 0;      // fraction of the replicas' capacity used at this rate
  double batch = 0;            // operating batch (sequences or items per step)
  double capacity_rps = 0;     // per replica, at the utilization limit 1
};

struct Configuration {
  const Accelerator* accelerator = nullptr;
  int tensor_parallel = 1;
  Batching batching = Batching::none;
  int max_batch = 1;
  // Pipeline stages, a whole node of tensor_parallel devices each: a model no one node holds
  // is served across nodes as vLLM lays it out (tensor parallel within a node, pipeline
  // parallel across nodes), running that many micro-batches at once. 1: a node holds a replica.
  int pipeline_parallel = 1;
  int devices() const { return tensor_parallel * pipeline_parallel; }
  bool operator==(const Configuration&) const = default;  // the same replica layout
};

// The most nodes one replica spans (pipeline stages of a whole node each).
constexpr int kMaxPipelineNodes = 4;

// "tp4", or "tp8 pp2" for a replica across nodes.
std::string parallel_layout(const Configuration& config);

// What the simulator saw for a candidate at peak traffic.
struct SimulatedCheck {
  bool meets = false;
  std::string miss;  // the SLO key it missed
  long long requests = 0;
  bool overloaded = false;  // a queue that grew over the run's last quarter (or far behind at its end)
  double latency_p50_s = 0, latency_p99_s = 0, ttft_p99_s = 0, tpot_p99_s = 0, slo_attainment = 0;
  double latency_mean_s = 0, ttft_mean_s = 0, wait_mean_s = 0;  // what a request spends where, at peak
  double duty_cycle = 0;      // mean share of time the replicas spent in steps (what `simulate` calls busy)
  double prefill_duty_cycle = 0;  // disaggregated: the prefill pool's replicas' mean share
  // Spot plans: one spot node reclaimed during the run, its replicas back after the cold start.
  bool reclaimed = false;
  int reclaim_replicas = 0;
  double reclaim_at_s = 0, replacement_s = 0;
  double drained_s = -1;      // the lost replicas finished what they held this long after the notice began
  double notice_s = 0;        // the cloud's warning before it takes the node
  long long rerouted = 0;     // queued requests handed to the other replicas
};

// A disaggregated layout's decode pool and the link between the pools (the option's own
// configuration and replicas are its prefill pool's).
struct DecodePool {
  Configuration config;   // the same accelerator as the prefill pool
  int replicas = 0;
  int needed_replicas = 0; // what the load needs (replicas adds the availability rule's)
  std::string link;       // what carries the KV: infiniband, efa, roce, tcp
  double link_gbps_per_gpu = 0;
  ServiceLevel prefill_level, decode_level;  // each pool at peak
  std::string prefill_binding, decode_binding;  // what one replica fewer would miss, per pool
  double kv_transfer_s = 0;    // a mean prompt's KV over the link
  double link_utilization = 0; // the share of time a prefill replica's link is sending
  bool kv_pulled_between_steps = false;
  // Pulled between steps: the share of a decode replica's time spent pulling at peak, with the
  // replicas the load needs (as the screen sized them), and with those deployed.
  double pull_share_needed = 0;
  double pull_share() const { return replicas > needed_replicas && replicas > 0 ? pull_share_needed * needed_replicas / replicas : pull_share_needed; }
};

// An offering and pricing a configuration can be rented on (spot: with its on-demand floor).
struct Placement {
  const Offering* offering = nullptr;
  Pricing pricing = Pricing::on_demand;
  const Offering* floor_offering = nullptr;
};

// Nodes of one offering at one pricing.
struct NodeGroup {
  const Offering* offering = nullptr;
  Pricing pricing = Pricing::on_demand;
  int instances = 0;
  std::string zone;  // when not the offering's own ("a second zone")
};

struct PlanOption {
  Configuration config;
  std::optional<SimulatedCheck> simulated;
  int replicas = 0;                    // deployed
  int needed_replicas = 0;             // what the load needs (replicas adds the availability rule's)
  const Offering* offering = nullptr;  // the nodes' offering (spot plans: the first spot zone)
  Pricing pricing = Pricing::on_demand;
  int instances = 0;                   // nodes in all
  double usd_per_hour = 0;
  ServiceLevel level;  // at peak traffic
  // Availability: the replicas lie on at least this many nodes.
  int min_nodes = 1;
  // Spot plans (interruptible services): N+1 nodes in one region, one of them an on-demand
  // floor, the spot nodes (of `offering`) over two zones; one reclaimed node leaves N serving.
  const Offering* floor_offering = nullptr;
  int reclaim_replicas = 0;            // replicas one reclaimed spot node takes down
  std::vector<NodeGroup> nodes;        // what is rented (spot plans: the floor first; disaggregated: prefill, then decode nodes)
  std::optional<DecodePool> decode;    // disaggregated prefill and decode: the decode pool
  // Every offering and pricing the search priced this configuration on (shared by its options):
  // the cheapest for one count need not be the cheapest for another (5 replicas of 2 GPUs fill
  // five 2-GPU nodes, but three 4-GPU ones).
  std::shared_ptr<const std::vector<Placement>> placements;
  bool spot_with_floor() const { return floor_offering != nullptr; }
  bool disaggregated() const { return decode.has_value(); }
  int gpus() const { return config.devices() * replicas + (decode ? decode->config.devices() * decode->replicas : 0); }
  // "aggregated" or the GPU ratio of a disaggregated layout, "prefill:decode" ("2:6").
  std::string layout() const;
  int replicas_per_node() const { return config.pipeline_parallel > 1 ? 1 : replicas_per_node_of(config.tensor_parallel); }
  // Replicas of `tensor_parallel` devices one of the offering's nodes holds (at least one).
  int replicas_per_node_of(int tensor_parallel) const { return std::max(1, offering->accelerator_count / tensor_parallel); }
  // Whole nodes for `replicas` replicas of `tensor_parallel` devices (times `pipeline_parallel`
  // nodes each when a replica spans nodes).
  int nodes_for(int replicas, int tensor_parallel, int pipeline_parallel = 1) const {
    if (pipeline_parallel > 1) return std::max(1, replicas) * pipeline_parallel;
    const int per_node = replicas_per_node_of(tensor_parallel);
    return (std::max(1, replicas) + per_node - 1) / per_node;
  }
  // The instances and the price per hour of the node groups.
  void price_nodes();
  // Derived money figures.
  double usd_per_month() const { return usd_per_hour * kHoursPerMonth; }
};

// The same replicas of the same layout (pools included), whatever the offering: they serve alike.
bool same_layout(const PlanOption& a, const PlanOption& b);

// Sets the replicas an option deploys for `needed` serving replicas, and the nodes and price
// that follow from its offering, pricing and availability rule.
void place_replicas(PlanOption& option, int needed);
// The same on the cheapest of the option's placements at that count (its own where none are
// known, and on a tie).
void place_replicas_cheapest(PlanOption& option, int needed);
// "2 x aws us-east-1 p5.48xlarge (on-demand)", or the floor and spot zones of a spot plan.
std::string describe_nodes(const PlanOption& option);

struct ServicePlan {
  std::string service;
  bool feasible = false;
  std::string binding;                  // the constraint that cannot be met, when infeasible
  std::optional<PlanOption> best;
  std::vector<PlanOption> pareto;       // cost-latency frontier, cheapest first
  std::vector<PlanOption> ranked;       // cheapest distinct configurations, for verification
  std::vector<std::string> dropped;     // cheaper candidates the simulation rejected, and why
  std::string quota_choice;             // the cheapest option was over the account's quota: what was chosen, what more quota saves
  std::optional<PlanOption> no_batching;
  long long candidates_evaluated = 0;
  double average_rps = 0, peak_rps = 0;
  double mean_input_tokens = 0, mean_output_tokens = 0;
  std::vector<std::string> assumptions;
  // Disaggregated prefill and decode against one pool: the cheapest disaggregated layout, and
  // why it wins or loses (empty when none was considered).
  std::optional<PlanOption> disaggregated;
  std::vector<PlanOption> disaggregated_ranked;  // the cheapest distinct disaggregated layouts (a few), cheapest first
  std::string disaggregation_verdict;
};

struct PlannerOptions {
  const Calibration* calibration = nullptr;
  double usable_fraction = kUsableMemoryFraction;
  double overhead_gib = kRuntimeOverheadGib;
  int prefill_chunk_tokens = kStepTokenBudget;  // token budget per step under chunked prefill
  int max_replicas = 100000;
  int pareto_size = 8;
  // Also lay LLM services out as disaggregated prefill and decode pools (`plan`; autoscaling
  // and the manifests take one pool).
  bool consider_disaggregated = false;
};

// A trace-driven service's own (input, output) token pairs (the trace's sample, one pair per
// request); empty when the service has no trace.
std::vector<std::pair<double, double>> trace_request_pairs(const ServiceSpec& service);

// The model of one configuration at a rate: used by the search and by tests that brute-force it.
ServiceLevel evaluate_service(const ModelSpec& model, const ServiceSpec& service, const Configuration& config,
                              int replicas, double rate_rps, const PlannerOptions& options);

// Whether a level meets the service's SLO (and the utilization limit).
bool meets_slo(const ServiceLevel& level, const Slo& slo, double max_utilization, std::string* why);

ServicePlan plan_service(const Catalog& catalog, const Spec& spec, const ServiceSpec& service,
                         const PlannerOptions& options);

// Offerings a spec allows for an accelerator (clouds, regions), at least min_count devices each.
std::vector<const Offering*> allowed_offerings(const Catalog& catalog, const Constraints& constraints,
                                               const Accelerator& accelerator, int min_count);
// Accelerators a spec allows.
std::vector<const Accelerator*> allowed_accelerators(const Catalog& catalog, const Constraints& constraints);
// Whether a model is planned on an accelerator at all: measured service times hold on the
// accelerator they were measured on only (left out without a word), and weights the device has
// no kernels for are never planned there (`why` says so, for the plan to name).
struct ServesOn {
  bool ok = true;
  std::string why;
};
ServesOn model_serves_on(const Catalog& catalog, const ModelSpec& model, const Accelerator& accelerator);

}  // namespace gw
