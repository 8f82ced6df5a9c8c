// Checks screened plans in the simulator: the cheapest candidates are simulated at peak traffic
// in cost order, candidates that miss the SLO in simulation are dropped, and the plan keeps the
// cheapest that meets it (adding replicas to the screened best when none does).
#pragma once

#include <limits>
#include <optional>
#include <string>

#include "core/serving_defaults.h"
#include "plan/inference.h"
#include "sim/deployment.h"
#include "sim/request_router.h"

namespace gw {

struct VerifyOptions {
  ReplicaBuildOptions build;
  long long requests = 20000;  // per simulated candidate (traces: the whole trace, up to this)
  uint64_t seed = 1;
  int prefill_chunk_tokens = kStepTokenBudget;
  int extra_replicas = 6;      // how far to grow the best when no candidate passes
  int jobs = 1;                // frontier options simulated at once (0: one per core)
  // Routing other than as deployed (routing_as_deployed): the contrast without batching, which
  // nothing deploys, is routed to the least busy replica (its best case).
  std::optional<Router> router;
};

// The same with at most 5,000 requests: the shorter runs that check options beside the plan's
// (its frontier, the disaggregated layouts it weighs).
VerifyOptions brief_options(const VerifyOptions& options);

// The first p99 target of the SLO a simulation misses ("ttft_p99_s", ...; "" when it meets
// them all), or the prompts rejected: one rule for plan verification and scaling policies.
std::string slo_miss(const Slo& slo, const SimResult& result);

// Runs one candidate through the simulator.
Result<SimulatedCheck> simulate_option(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service,
                                       const PlanOption& option, const VerifyOptions& options);

// Simulates an option once (the result is kept in option.simulated); true when it meets the SLO.
bool verify_option(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service, PlanOption& option,
                   const VerifyOptions& options);

// Adds replicas to a screened option until the simulation agrees: one at a time up to
// extra_replicas, then doubling (to 16 times the screen's count) and bisecting to the fewest.
// Gives up on counts that cost below_usd_per_hour or more.
std::optional<PlanOption> grow_until_verified(const Catalog& catalog, const ModelSpec& model, const ServiceSpec& service,
                                              const PlanOption& screened, const VerifyOptions& options,
                                              double below_usd_per_hour = std::numeric_limits<double>::infinity());

void verify_plan(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, ServicePlan& plan,
                 const VerifyOptions& options);

// The deployment a plan option stands for, run by the engine the spec's deployment describes
// (its prefix cache, speculative decoding, scheduler), when given.
Deployment deployment_of(const PlanOption& option, bool llm, int prefill_chunk_tokens, const Deployment* engine = nullptr);

// How requests reach the replicas as plan --emit-k8s deploys the option, so that the simulation
// routes as the cluster will: LLM replicas (of replicas across nodes, their leaders), and both
// halves of a disaggregated plan, behind the vLLM Router (round_robin). Other models behind
// HAProxy: a shared queue (one request at a time) or round robin, as the screen assumed. A pool
// scaled to zero keeps its router (the KEDA HTTP add-on's interceptor forwards to it once it is
// ready, which it is while a replica is). A router the spec's deployment names
// (deployment.router) is how the user routes, and wins.
Router routing_as_deployed(const PlanOption& option, bool llm, const Deployment* engine);
// Seconds, on average, from a replica's pod turning ready to the router deployed for this routing
// sending it requests: behind HAProxy, CoreDNS's cache (5 s), HAProxy's re-resolution (every
// 5 s) and its first health check (every 5 s, one to pass), half of each on average; the vLLM
// Router watches the pods and adds one as it turns ready. from_zero adds the router pod's own
// readiness probe (every 5 s) where the pool woke from zero and the interceptor waits for it.
double router_join_s(Router router, bool llm, bool from_zero);
// In words, for --explain.
std::string routing_words(Router router, bool llm);
// The vLLM Router's --policy that routes so (power_of_two, round_robin, random); empty where it
// has none (least outstanding tokens, a shared queue, prefix affinity).
std::string vllm_router_policy(Router router);
// HAProxy's balance and per-replica limit that route so, where the vLLM Router does not (a model
// other than an LLM, or a policy it lacks): round robin (roundrobin), the fewest requests in
// flight (leastconn), the lesser of two drawn (random(2)), a queue the replicas share (leastconn,
// one request per replica at a time, the rest queued in the proxy). Empty balance: neither
// proxy routes so (random is a plain Service's).
struct HaproxyRouting {
  std::string balance;
  int maxconn_per_replica = 0;
};
HaproxyRouting haproxy_routing(Router router, bool llm);
// What --emit-k8s puts in front of one pool's replicas for a routing: the vLLM Router with its
// policy (an LLM routed by a policy it has, random aside), else HAProxy with its balance, else
// nothing (a plain Service: kube-proxy's random pick, or a routing neither proxy has).
struct FrontRouter {
  std::string vllm_router_policy;  // set: the vLLM Router
  HaproxyRouting haproxy;          // balance set: HAProxy
  bool vllm_router() const { return !vllm_router_policy.empty(); }
  bool proxy() const { return !haproxy.balance.empty(); }
};
FrontRouter front_router(Router router, bool llm);
// The copies of the router --emit-k8s runs that deal requests by this routing, each keeping its
// own round-robin position: the spec's deployment.router_replicas where given, else one vLLM
// Router, two HAProxy pods in front of replicas batching on their own; 1 for other routings
// (modelled as one router: HAProxy holding a shared queue is one pod, and other policies' counts
// are modelled as shared).
int router_instances_as_deployed(Router router, bool llm, const Deployment* engine = nullptr);
// How a plan's decode replicas are chosen: by the router's own policy where the vLLM Router
// draws both halves so, else the fewest tokens held.
Router decode_routing_as_deployed(Router router);

}  // namespace gw
