// An LLM replica's steps: what runs in the next one under the replica's scheduler (decodes,
// prompt chunks, swap-ins, admissions, preemptions when the KV cache is full), how long it takes
// by the step model, and what it produced when it ends (a token per decoding sequence, finished
// prompts joining the decode batch, finished requests handed back). Requests that leave go
// through RequestExits: the simulation counts them. Internal to src/sim.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/replica_state.h"
#include "sim/sim_request.h"

namespace gw::sim_detail {

// Where requests leave a replica; the simulation keeps the counts and the router's view.
class RequestExits {
 public:
  virtual ~RequestExits() = default;
  // Its client gave up waiting for service to start (SimOptions::client_timeout_s).
  virtual bool expired(const Request& q, double t) const = 0;
  virtual void give_up(int id, ReplicaState& r) = 0;
  // It can never fit the replica's KV cache, even alone: a server fails it.
  virtual void reject(int id, ReplicaState& r) = 0;
  virtual void complete(int id, double t) = 0;
  // Disaggregated: its prompt is computed on a prefill replica; its KV goes to a decode replica.
  virtual void hand_off(int id, ReplicaState& r, double t) = 0;
  // Disaggregated: a decode replica admitted it; the prefill replica may free its copy of the KV.
  virtual void kv_pulled(int id, double t) = 0;
};

// A step started: how long it runs and how many sequences it holds.
struct StepStart {
  double duration_s = 0;
  size_t batch = 0;
};

class LlmStepExecution {
 public:
  // step_samples: every step_sample_every-th step's counts are appended there (0: none).
  LlmStepExecution(RequestPool& pool, RequestExits& exits, int step_sample_every, std::vector<StepCounts>& step_samples)
      : pool_(pool), exits_(exits), step_sample_every_(step_sample_every), step_samples_(step_samples) {}

  // Builds the replica's next step and times it; nothing when it has nothing to run.
  std::optional<StepStart> start_step(ReplicaState& r, double t);
  // The step in progress ends at t.
  void finish_step(ReplicaState& r, double t);
  // Puts a request that arrived or was handed on into the replica's decode batch (after its prompt).
  void join_decoding(ReplicaState& r, int id, double length);

  // Tokens the steps produced (a replay adds its own).
  double tokens_emitted() const { return tokens_emitted_; }
  void add_tokens_emitted(double tokens) { tokens_emitted_ += tokens; }

  // Every LLM replica's counters against what its requests hold, request by request, and the
  // tokens the steps emitted against those requests have or took with them when they left
  // (tokens_finished): empty, or the first thing wrong.
  std::string check(const std::vector<ReplicaState>& replicas, double tokens_finished) const;

 private:
  class StepBuilder;

  long long build_step(ReplicaState& r, double t);
  void join_arrived_kv(ReplicaState& r, double t);
  long long watermark_blocks(const ReplicaState& r) const;
  bool allocates_as_scheduled(const ReplicaState& r) const;
  long long blocks_to_admit(const ReplicaState& r, const Request& q, double chunk) const;
  void admit(ReplicaState& r, double t, bool chunked, double& budget, long long& reserved);
  void continue_prefills(ReplicaState& r, double& budget, long long reserved);
  long long make_room_for_decodes(ReplicaState& r);
  long long swap_in(ReplicaState& r);
  void add_victim(ReplicaState& r, int id);
  bool is_running(const VictimEntry& e) const;
  int next_victim(ReplicaState& r);
  void preempt(ReplicaState& r, int id);
  void reject(int id, ReplicaState& r);
  double speculative_step_s(const ReplicaConfig& c, double decode_n, double context, double prefill_tokens,
                            double attended, double completing) const;
  size_t prefix_hit_blocks(const ReplicaState& r, int id) const;
  void cache_blocks_within(ReplicaState& r, int id, double tokens);
  void release_prefix(ReplicaState& r, int id);
  // Tokens a decoding request holds in the KV cache now (its steps so far, the one in progress too).
  static double kv_tokens(const ReplicaState& r, const Request& q) {
    return q.length + static_cast<double>(r.decode_step - q.join_step);
  }

  RequestPool& pool_;
  RequestExits& exits_;
  int step_sample_every_;
  std::vector<StepCounts>& step_samples_;
  long long steps_ = 0;
  long long rejections_ = 0;
  bool preempted_now_ = false;  // the step being built preempted a request
  double swap_tokens_now_ = 0;  // KV tokens the step being built moves to or from host
  double tokens_emitted_ = 0;
};

}  // namespace gw::sim_detail
