// A discrete-event simulator of serving: arrivals routed to replicas (a RequestRouter), each
// batching requests its own way (a ClassicBatcher: none, static, dynamic with Triton's
// semantics; or continuous batching of LLMs with a paged KV cache under an LlmStepScheduler:
// vLLM v0, vLLM v1, Sarathi-Serve, Orca), with step times from the step-time model or from
// measurements. Seeded; memory bounded by replicas plus requests in flight.
//
// Invariants of the LLM replicas (checked after every event when SimOptions::check_invariants):
// KV blocks used lie in [0, capacity] and equal the blocks the requests hold; a request's
// generated tokens are never lost across any number of preemptions; every admitted request
// completes or is rejected exactly once.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/serving_defaults.h"
#include "catalog/accelerator.h"
#include "model/kv_layer_groups.h"
#include "perf/step_model.h"
#include "sim/arrivals.h"
#include "sim/batching.h"
#include "sim/llm_step_scheduler.h"
#include "sim/request_router.h"
#include "core/histogram.h"
#include "spec/spec.h"

namespace gw {

enum class PrefixCaching { off, in_kv, own_room };

// Disaggregated serving: prefill replicas take the arrivals and compute prompts; their KV goes
// over a link to a decode replica, which computes the rest. `both` serves whole requests.
enum class ReplicaRole { both, prefill, decode };

// Speculative decoding: each decode step proposes `tokens` tokens per sequence (a draft model
// run that many times, an EAGLE/MTP head, or n-gram lookup at no GPU cost) and the target
// verifies them with the next one in one pass (tokens + 1 per sequence); each proposed token is
// accepted with probability `acceptance` until the first rejection, so a step yields
// (1 - a^(k+1)) / (1 - a) tokens per sequence on average (Leviathan et al., 2023).
struct SpeculativeDecoding {
  int tokens = 0;             // k; 0: off
  double acceptance = 0;      // a, per proposed token
  std::shared_ptr<const LlmStepTimer> draft;  // a draft model's steps (same accelerator and layout)
  std::shared_ptr<const ModelArch> draft_arch;  // what `draft` times (it points into it)
  double head_share = 0;      // EAGLE/MTP: one proposal costs this share of a target decode step
  double tokens_per_step() const;
};

struct ReplicaConfig {
  std::string name;                   // accelerator and layout, for reports
  SimBatching batching = SimBatching::dynamic;
  int max_batch = 32;
  double max_queue_delay_s = 0;       // dynamic: dispatch when the oldest request waited this long
  double batch_timeout_s = 0.05;      // static: dispatch a partial batch after this long
  // Classic models: the time of one pass over a batch (may draw from the RNG).
  std::function<double(int batch, Rng& rng)> batch_time;
  // LLMs (continuous, or none = one sequence at a time).
  std::shared_ptr<const LlmStepTimer> llm;
  long long kv_blocks = 0;            // paged KV cache capacity
  // A replica of pipeline stages runs as this many micro-batch lanes, each a ReplicaConfig of
  // its own holding its share of kv_blocks (sim/deployment.cc).
  int pipeline_lanes = 1;
  // The lanes draw on one pool of pipeline_lanes x kv_blocks (vLLM V1, SGLang, DistServe),
  // not each on its own kv_blocks (vLLM V0's virtual engines).
  bool lanes_share_kv = false;
  int block_tokens = 16;
  // Blocks per layer group where some layers slide (kv_blocks counts group blocks then).
  KvLayerGroups kv_groups;
  int token_budget = kStepTokenBudget;  // tokens per step (vLLM's max_num_batched_tokens)
  LlmScheduler scheduler = LlmScheduler::vllm_v1;
  Preemption preemption = Preemption::recompute;
  double watermark_fraction = 0.01;   // free blocks kept back when admitting a prompt
  double max_sequence_tokens = 4096;  // orca: KV reserved per sequence (the model's context)
  double swap_bytes_per_s = 0;        // swap: host link per device (PCIe, one direction)
  // Prefix caching (where requests carry their prompt blocks' chain hashes): off; in the KV
  // cache's free blocks (vLLM V1's default); or in a room of its own of prefix_room_tokens
  // (an offload tier; infinity: unlimited).
  PrefixCaching prefix_caching = PrefixCaching::in_kv;
  double prefix_room_tokens = 0;
  SpeculativeDecoding speculative;
  // Disaggregation: the replica's role; a prefill replica's link to the decode replicas (bytes/s,
  // one transfer at a time), the KV bytes a token takes on the whole replica, and its layers
  // (the transfer streams layer by layer behind the prefill).
  ReplicaRole role = ReplicaRole::both;
  double kv_link_bytes_per_s = 0;
  double kv_bytes_per_token_replica = 0;
  int layers = 1;
  // KV pulled between steps (DistServe's decoding engine): the decode replica fetches each
  // request's KV itself after a step ends, one request at a time, each costing the transfer and
  // one call to its workers (kv_pull_call_s), and starts no step meanwhile; a replica of pipeline
  // stages first waits for the micro-batch in flight, its workers taking calls in order. Off:
  // the transfer streams behind the prefill, the decode replica's steps never wait for it.
  bool kv_pulled_between_steps = false;
  double kv_pull_call_s = 0;
};

// What an autoscaler sees at each scrape: the pool and its load over the last interval.
struct ScaleObservation {
  double time_s = 0;
  double traffic_time_s = 0;    // on the traffic's clock: time_s plus the stretches fast-forwarded
  double interval_s = 0;
  int ready = 0;                // serving
  int starting = 0;             // requested, not yet serving (node, container, model load)
  long long waiting = 0;        // requests queued, not yet in service (all replicas and held)
  long long in_service = 0;     // requests a replica has taken (batched or decoding)
  double busy_fraction = 0;     // mean over ready replicas: the GPU duty cycle
  double arrival_rps = 0;       // over the interval
  double completion_rps = 0;    // over the interval
};

// Autoscaling: replica slots start and stop as the scaler asks. Every replica is a copy of the
// first config (of the configs, one per lane, across nodes). A started replica serves after start_s (warm_start_s on a warm node); a stopped
// one takes no new work, finishes what it holds, then stops being billed.
struct ScalingOptions {
  double interval_s = 15;
  int max_replicas = 1;
  int initial_replicas = 1;
  // A replica of pipeline stages across nodes is this many micro-batch lanes (the configs given,
  // in order), one node each: they start, serve, drain and stop together (a LeaderWorkerSet
  // group), and the counts above, the scaler's observations and the warm pool are in replicas.
  int lanes_per_replica = 1;
  double start_s = 0;           // node provisioning + container start + model load
  double warm_start_s = 0;      // container start + model load on an idle provisioned node
  int warm_pool = 0;            // idle provisioned nodes kept (billed) to skip provisioning
  double node_provisioning_s = 0;
  // Billing and serving time are counted up to here (the traffic's span), so a backlog a policy
  // leaves behind shows in latency, not as extra hours.
  double account_until_s = 1e18;
  // Returns the replica count wanted now (clamped to [0, max_replicas]). The observation's time
  // is the simulation's clock, which leaves out fast-forwarded stretches.
  std::function<int(const ScaleObservation&)> decide;
  // The traffic time until which what the scaler decides on besides the pool holds (a schedule),
  // from a traffic time: no steady stretch is replayed past it. Absent: for ever.
  std::function<double(double)> scaler_steady_until;
  // Steady stretches fast-forwarded. A window of at least fast_forward_window_s and
  // fast_forward_requests completions in which the pool kept its size (nothing starting or
  // draining), the scaler stayed settled, the arrival rate held and the requests in the system
  // neither grew nor shrank beyond noise is replayed as many whole times as the rate still
  // holds: its completions, latencies, billing, busy time and scrapes are counted again, and the
  // clock and the arrivals move on by as much. Off: every request is simulated.
  bool fast_forward = false;
  double fast_forward_window_s = 600;
  long long fast_forward_requests = 20000;
  // Whether the scaler, fed these observations after those it has seen, would keep each one's
  // count (asked of a copy, of the window's observations again); and how many changes of count
  // to expect over so many more scrapes like the window's (a pool whose metric wanders near its
  // tolerance changes size at some scrape nobody can foresee: such a window is not replayed
  // unless the odds over the replays are below fast_forward_change_odds). Absent: nothing is
  // fast-forwarded.
  std::function<bool(const std::vector<ScaleObservation>& again)> would_hold;
  std::function<double(const std::vector<ScaleObservation>& window, double scrapes_ahead)> expected_changes;
  double fast_forward_change_odds = 0.05;
  // Disaggregated serving: the prefill and the decode replicas as pools of their own, pools[i]
  // of configs[i]'s replicas (one lane each), each with its own counts and scaler fed its own
  // replicas' observations (a prefill pool's queue is the prompts waiting for it; a decode
  // pool's, the requests whose KV waits for it). Their warm pools and start delays are the
  // fields above; nothing is fast-forwarded. Empty: one pool, as above.
  struct Pool {
    int max_replicas = 1;
    int initial_replicas = 1;
    std::function<int(const ScaleObservation&)> decide;
  };
  std::vector<Pool> pools;
};

// One point of the pool over time, at each scrape.
struct ScaleSample {
  double time_s = 0;
  int ready = 0, starting = 0, desired = 0, billed = 0;  // replicas; billed: paid for (serving, starting, draining + warm)
  double arrival_rps = 0;
  long long waiting = 0;
  double busy_fraction = 0;
  // With ScalingOptions::pools, each pool's replicas ready (ready above is their sum); empty otherwise.
  std::vector<int> pool_ready;
};

// A node lost for a while (a spot reclaim): from at_s its replicas take no new work (what they
// had queued goes to the others) and finish what they hold; the slots serve again once the
// replacement node is ready, replacement_s after at_s.
struct ReplicaOutage {
  double at_s = 0;
  std::vector<int> replicas;  // indices into the replica list
  double replacement_s = 0;
};

// What an outage did: how long the lost replicas took to empty and how much work moved.
struct OutageResult {
  double at_s = 0;
  double drained_s = -1;       // from at_s until the last lost replica held no work; -1: not before the replacement
  double replaced_s = 0;       // from at_s until the replacement served
  long long rerouted = 0;      // queued requests handed to the other replicas
};

struct SimOptions {
  uint64_t seed = 1;
  long long max_requests = 100000;    // stop admitting arrivals after this many (SimResult says so)
  double max_duration_s = 1e18;       // or after this time
  Router router = Router::round_robin;
  // Copies of the router dealing the requests (make_request_router's instances): the vLLM Router's
  // two replicas, each keeping its own round-robin position.
  int router_instances = 1;
  // Disaggregated serving: which decode replica takes a prompt's KV (router picks the prefill
  // replica). The default weighs the tokens each decode replica holds.
  Router decode_router = Router::least_tokens;
  Slo slo;
  int timeseries_points = 200;        // samples of queue depth and KV use over the run
  std::function<void(long long admitted)> on_progress;  // called every 65,536 admissions
  std::optional<ScalingOptions> scaling;                // absent: every replica serves throughout
  int step_sample_every = 0;  // > 0: every Nth LLM step's counts kept in SimResult::step_samples
  std::vector<ReplicaOutage> outages;                   // runs without autoscaling only
  // > 0: a request that has not started service this long after it arrived is given up (its
  // client disconnects, and the server drops it from the queue, as Triton's queue policy and
  // vLLM's abort on disconnect do). Counted in SimResult::timed_out, never served, and an SLO
  // miss. Checked at the front of each queue when service starts and every eighth of the
  // timeout, so queues hold at most about the arrivals of one timeout. 0: clients wait for ever.
  double client_timeout_s = 0;
  // Check the invariants above after every event; a violation ends the run with an error.
#ifdef NDEBUG
  bool check_invariants = false;
#else
  bool check_invariants = true;
#endif
};

struct ReplicaStats {
  std::string name;
  long long requests = 0;
  long long steps = 0;
  double busy_s = 0;
  double busy_fraction = 0;
  long long preemptions = 0;
  long long recomputed_tokens = 0;     // KV tokens dropped by recompute preemptions, prefilled again
  long long swapped_tokens = 0;        // KV tokens moved to host by swap preemptions
  long long kv_blocks = 0;             // LLM replicas: KV capacity in blocks of block_tokens
  int block_tokens = 0;
  int kv_groups = 1;                   // layer groups a block is one of (sliding windows)
  double mean_kv_used_fraction = 0;    // time-weighted over the run
  double mean_batch = 0;               // sequences per step (decodes + prompt chunks)
  int pipeline_lanes = 1;              // lanes of its replica (pipeline stages)
  double stage_wait_s = 0;             // pipeline lanes: step time spent waiting for a stage another lane held
  double stage_wait_fraction = 0;      // of busy_s
  std::vector<long long> batch_sizes;  // count of steps by batch size
  // Prefix caching: admissions that looked their prompt up, those that hit, and their tokens
  // (prompt tokens looked up, tokens found cached and not computed).
  long long prefix_lookups = 0, prefix_hits = 0, prefix_chained = 0;  // chained: the request carried its blocks' hashes
  double prefix_lookup_tokens = 0, prefix_hit_tokens = 0;
  long long prefix_evictions = 0;
};

// Prefix caching over a run, all replicas together.
struct PrefixCacheResult {
  bool on = false;                 // some replica cached prefixes and some request carried them
  double hit_ratio_tokens = 0;     // prompt tokens found cached / prompt tokens looked up
  double hit_ratio_requests = 0;   // admissions with a hit / admissions
  double saved_prefill_tokens = 0;
  long long lookups = 0;
  long long evictions = 0;
};

struct TimeSample {
  double time_s = 0;
  long long queue_depth = 0;   // waiting, all replicas
  long long in_flight = 0;
  double kv_used_fraction = 0; // mean over continuous replicas
};

// What one LLM step ran, as LlmStepTimer::step_time_s takes it.
struct StepCounts {
  int replica = 0;
  double decode_sequences = 0, context_sum = 0, prefill_tokens = 0, prefill_attended = 0, sampled_sequences = 0;
};

struct SimResult {
  long long requests = 0;           // completed
  double duration_s = 0;            // first arrival to last completion
  double throughput_rps = 0;
  double goodput_rps = 0;           // requests meeting every SLO target
  double slo_attainment = 1;        // requests meeting every SLO target among those completed or timed out
  double mean_in_system = 0;        // time-average requests in the system (Little's L)
  double arrival_rate_rps = 0;      // admitted arrivals / arrival span
  LogHistogram latency, wait, ttft, tpot;
  std::vector<ReplicaStats> replicas;
  std::vector<TimeSample> timeseries;
  long long preemptions = 0;
  long long peak_in_flight = 0;
  std::vector<StepCounts> step_samples;  // SimOptions::step_sample_every
  long long rejected = 0;           // prompts longer than a replica's whole KV cache
  long long timed_out = 0;          // given up before service started (SimOptions::client_timeout_s)
  long long admitted = 0;           // arrivals taken into the simulation
  bool stopped_at_request_limit = false;  // arrivals remained past max_requests
  // Stable or overloaded: requests in the system grew over the last quarter of the arrivals by
  // this share of what arrived then (> 5%: overloaded, a queue that grows without bound), or
  // clients gave up on more than 1% of them (a queue held at the timeout's length).
  double backlog_growth = 0;
  double timed_out_share = 0;             // of the last quarter's arrivals
  long long backlog_at_last_arrival = 0;  // requests in the system when the last one arrived
  double drain_s = 0;                     // last arrival to last completion
  bool overloaded = false;                // growing over the last quarter, or far behind at the end
  // The last quarter begins before three times the mean time in service: a run this short still
  // fills its batches, so its growth is not judged (the other criteria are).
  bool too_short = false;
  long long recomputed_tokens = 0;
  long long swapped_tokens = 0;
  double waited_fraction = 0;       // requests that waited before service started
  // Autoscaled runs.
  std::vector<ScaleSample> scale_series;
  double billed_node_s = 0;         // node-seconds paid for, replicas and warm pool
  std::vector<double> pool_billed_node_s;  // with ScalingOptions::pools: each pool's share of it
  double serving_replica_s = 0;     // replica-seconds ready to serve
  long long cold_starts = 0;        // times the pool went from no replica to one starting
  long long held_requests = 0;      // requests that arrived with no replica ready
  long long scale_ups = 0, scale_downs = 0;
  std::vector<OutageResult> outages;  // SimOptions::outages, in order
  // ScalingOptions::fast_forward: the traffic's seconds replayed from steady windows rather
  // than simulated, and how many windows' replays that took.
  double fast_forwarded_s = 0;
  long long fast_forward_replays = 0;
  PrefixCacheResult prefix_cache;
  // Disaggregated runs: prompts' KV moved from prefill to decode replicas.
  long long kv_transfers = 0;
  double kv_transfer_bytes = 0;
  LogHistogram kv_transfer_wait;    // prefill end to the KV at the decode replica (link queue and the last layers)
  double kv_pull_stall_s = 0;       // KV pulled between steps: decode replicas' time with no step, pulling or waiting to
};

// The q-quantile of a latency over every request that arrived, a timed-out one counted as
// longer than any served: +infinity when more than 1 - q of them timed out.
double quantile_with_timeouts(const LogHistogram& served, long long timed_out, double q);

// Runs arrivals through the replicas until the arrivals end or a limit is reached, then drains.
Result<SimResult> simulate(ArrivalProcess& arrivals, const std::vector<ReplicaConfig>& replicas,
                           const SimOptions& options);

}  // namespace gw
