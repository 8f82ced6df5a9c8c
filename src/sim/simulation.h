// One simulated run, composed of the parts in src/sim (README.md draws them): the event queue,
// the replicas with their KV caches and step execution, the scaling driver, the recorder and the
// tallies the report is made from. Its members read as the life of a request: it arrives, is
// routed (or held, or queued where any replica takes it), waits, is batched or admitted into a
// step, produces its tokens, and completes, is rejected or times out. How the pool changes
// under it (replicas started and drained by the autoscaler, nodes lost to outages) is in
// pool_changes.cc. Internal to src/sim.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/llm_step_execution.h"
#include "sim/recorder.h"
#include "sim/replica_state.h"
#include "sim/scaling_driver.h"
#include "sim/sim_event.h"
#include "sim/sim_request.h"
#include "sim/sim_tallies.h"
#include "sim/simulator.h"

namespace gw::sim_detail {

class Simulation final : private RequestExits {
 public:
  Simulation(ArrivalProcess& arrivals, const std::vector<ReplicaConfig>& configs, const SimOptions& options);
  Result<SimResult> run();

 private:
  // The life of a request.
  void on_arrival(double t);
  int place(int id);
  // The replica for request `id`: the router's choice over the replicas' loads (and, for a
  // prefix-aware router, what each has cached of the request's prompt).
  int route(int id);
  void fill_prefix_matches(int id, std::vector<ReplicaLoad>& loads);
  void assign(int id, int replica);
  void unassign(int id, ReplicaState& r);
  void try_start(int index, double t);
  void start_batch(int index, double t);
  void start_llm_step(int index, double t);
  void begin_step(ReplicaState& r, double t, double duration_s, size_t batch);
  void on_step_done(int index, double t);
  // RequestExits: where requests leave.
  bool expired(const Request& q, double t) const override {
    return options_.client_timeout_s > 0 && q.scheduled < 0 && t - q.arrival >= options_.client_timeout_s;
  }
  void give_up(int id, ReplicaState& r) override { give_up(id, &r); }
  void give_up(int id, ReplicaState* r);
  void reject(int id, ReplicaState& r) override;
  void complete(int id, double t) override;
  // Disaggregated: a prefill replica's finished prompt sends its KV over the link (one transfer
  // at a time per prefill replica, streamed layer by layer behind the prefill), then the request
  // goes to the decode replica with the fewest outstanding tokens.
  void hand_off(int id, ReplicaState& r, double t) override;
  void on_kv_arrived(int id, unsigned version, double t);
  void send_kv_to_decode(int id, double t);
  void kv_pulled(int id, double t) override;
  // KV pulled between steps (ReplicaConfig::kv_pulled_between_steps, kv_pull.cc): before a decode
  // replica's step, it pulls the KV waiting for it; true while it does (its step comes after).
  bool pull_waiting_kv(ReplicaState& r, double t);
  void on_kv_pull_done(int index, double t);
  void release_held_kv(Request& q, double t);
  bool decode_replica_ready() const;
  int choose_decode_replica();
  std::deque<int> decode_held_;  // prompts computed whose KV waits for a decode replica to be ready
  bool disaggregated_ = false;
  std::vector<double> link_free_at_;  // by replica: when its link is free for the next transfer
  std::vector<ReplicaLoad> prefill_loads_;  // route()'s view of a disaggregated pool: decode replicas hidden
  std::vector<ReplicaLoad> decode_loads_;   // the decode router's: only ready decode replicas
  // Pipeline stages: a replica of pp stages is pp lanes in consecutive slots, each a micro-batch.
  // A lane's step crosses the stages in turn and a stage runs one micro-batch at a time, so a
  // lane waits at a stage another lane holds: the pipeline runs at its largest micro-batch.
  double through_stages(const ReplicaState& r, double t, double duration_s);
  std::vector<size_t> pipeline_head_;                // by replica: its first lane's slot
  std::vector<std::vector<double>> stage_free_at_;   // by first lane: when each stage is free
  // Client timeouts: given up at the front of the queues, every eighth of the timeout.
  double expire_every() const { return options_.client_timeout_s / 8; }
  bool give_up_front(std::deque<int>& queue, ReplicaState* r, double t);
  void give_up_expired(double t);

  // The pool changing under the requests (pool_changes.cc).
  void set_life(ReplicaState& r, Life life) {
    r.life = life;
    loads_[r.index].ready = life == Life::ready;
  }
  void serve_again(ReplicaState& r, double t);
  void on_scale_tick(double t);
  void on_pools_scale_tick(double t);
  void apply_scale_actions(int desired, const ScaleActions& actions, int first_slot, ScalingDriver& driver, int pool, double t);
  void replay_window(double t, const Replay& replay);
  void on_replica_ready(int index, unsigned version, double t);
  void dispatch_held(double t);
  void maybe_stop(ReplicaState& r);
  void stop(ReplicaState& r);
  void on_outage(int index, double t);
  void on_outage_over(int index, double t);

  // The clock, and what accrues with it.
  void advance(double t);
  // Replicas paid for (their nodes, and the warm pool's), in replicas.
  int billed_nodes() const;
  // ScalingOptions::pools: each pool's slots (consecutive, from `first`), its own options (counts
  // and scaler), driver and billing. Sized once: each driver refers to its pool's options.
  struct PoolSlots {
    int first = 0, count = 0, nodes = 0;
    ScalingOptions options;
    std::optional<ScalingDriver> driver;
    double billed_s = 0, billed_s_at_completion = 0;
    int billed() const { return nodes + driver->warm_nodes(); }
  };
  std::vector<PoolSlots> pools_;
  PoolSlots* pool_of(size_t slot);
  // The slots of the replica whose slot is `index` (lanes_ of them, from a multiple of lanes_).
  int group_start(int index) const { return index - index % lanes_; }
  void mark(double t) { recorder_.mark({t + skip_, tallies_.in_flight, tallies_.admitted, tallies_.timed_out}); }
  void sample(double t);
  void push(Event e) { events_.push(e); }

  void check_invariants();
  void violated(std::string what);
  std::string stuck() const;
  Result<SimResult> finish();

  ArrivalProcess& arrivals_;
  SimOptions options_;
  Rng rng_;
  std::vector<ReplicaState> replicas_;
  std::vector<ReplicaLoad> loads_;  // what the router sees, replica by replica
  std::unique_ptr<RequestRouter> router_;
  std::unique_ptr<RequestRouter> decode_router_;
  RequestPool pool_;
  EventQueue events_;
  SimResult result_;
  SimTallies tallies_;
  Recorder recorder_;
  LlmStepExecution steps_;
  std::optional<ScalingDriver> scaling_;
  std::optional<Arrival> pending_;
  std::deque<int> shared_;  // the shared queue (Router::shared_queue)
  std::deque<int> held_;    // arrived while no replica was ready
  bool arrivals_open_ = true;
  int ready_ = 0, nodes_ = 0;  // slots serving; slots billed (a replica is lanes_ slots)
  int lanes_ = 1;              // ScalingOptions::lanes_per_replica
  double now_ = 0;
  double skip_ = 0;  // seconds fast-forwarded: the traffic's clock is the simulation's plus this
  double account_until_ = 1e18;
  std::string invariant_error_;
};

}  // namespace gw::sim_detail
