// How a continuous-batching LLM replica builds each step, one class per engine scheduler (as
// Vidur's replica schedulers are). A scheduler decides the order in which the step is composed
// (decodes, prompt chunks, admissions, swap-ins) and how KV blocks are reserved and who is
// preempted; the simulator carries out those operations on the replica's queues and cache.
//
// vllm_v0: vLLM 0.4-0.6 `Scheduler._schedule_default`: waiting prompts first, whole, in a
//   prefill-only step (sum of prompt tokens within the token budget); otherwise a decode step
//   of every running sequence. Admission keeps a watermark of free blocks (1%).
// vllm_v1: vLLM >= 0.8 (V1 engine) `Scheduler.schedule`: running requests first (decodes and
//   chunks of unfinished prompts), then waiting ones, one token budget; KV blocks allocated as
//   tokens are scheduled; the last admitted is preempted first.
// sarathi: Sarathi-Serve (OSDI'24; Vidur's `sarathi` scheduler): decodes first, then prompt
//   chunks within the budget; a prompt's blocks reserved whole at admission, with the watermark.
// orca: Orca (OSDI'22; Vidur's `orca` scheduler): iteration-level batching of whole prompts and
//   decodes, KV reserved for the longest sequence at admission, so never preempted.
#pragma once

#include <optional>
#include <string_view>

namespace gw {

enum class LlmScheduler { vllm_v0, vllm_v1, sarathi, orca };
// What a preempted sequence loses: recompute drops its KV and prefills prompt + generated
// tokens again; swap moves its KV to host memory and back (vLLM v0's swap space).
enum class Preemption { recompute, swap };

std::string_view llm_scheduler_name(LlmScheduler scheduler);
// The engine and version a scheduler mirrors, for --explain.
std::string_view llm_scheduler_source(LlmScheduler scheduler);
std::optional<LlmScheduler> parse_llm_scheduler(std::string_view text);
std::string_view preemption_name(Preemption preemption);
std::optional<Preemption> parse_preemption(std::string_view text);

// The operations a step is built from, carried out on one replica by the simulator.
class LlmStepBuilder {
 public:
  virtual ~LlmStepBuilder() = default;
  virtual long long decoding() const = 0;         // sequences decoding now
  virtual bool has_swapped() const = 0;           // sequences swapped out to host memory
  virtual bool has_prompt_chunks() const = 0;     // the step holds prompt tokens already
  virtual bool preempted() const = 0;             // building this step preempted a request
  virtual int token_budget() const = 0;           // tokens per step (max_num_batched_tokens)
  // Preempts running requests in the scheduler's order until the decoding sequences' next
  // tokens fit in the cache; returns the blocks those tokens need.
  virtual long long make_room_for_decodes() = 0;
  // Swapped sequences come back, oldest first, while they fit; returns their new blocks.
  virtual long long swap_in() = 0;
  // Every decoding sequence runs in this step.
  virtual void decode_running() = 0;
  // Prompts admitted earlier go on, chunk by chunk, within budget.
  virtual void continue_prefills(double& budget, long long reserved_blocks) = 0;
  // Waiting prompts admitted whole, within the token budget (the first may exceed it).
  virtual void admit_whole() = 0;
  // Waiting prompts admitted in chunks cut to what is left of budget.
  virtual void admit_chunked(double& budget, long long& reserved_blocks) = 0;
};

class LlmStepScheduler {
 public:
  virtual ~LlmStepScheduler() = default;
  virtual LlmScheduler kind() const = 0;
  // One round of the scheduler: what runs in this step. Returns the KV blocks the step's
  // decode tokens need (allocated when the step starts).
  virtual long long build_step(LlmStepBuilder& step) const = 0;
  // Tokens whose KV a request needs to be admitted (the cache rounds them to its blocks):
  // prompt_tokens to compute, sequence_tokens its whole length, chunk the prompt tokens scheduled
  // now, the model's context for whole reservations.
  virtual double admission_tokens(double prompt_tokens, double sequence_tokens, double chunk_tokens,
                                  double context_tokens) const = 0;
  // Free blocks kept back when admitting.
  virtual long long watermark_blocks(double watermark_fraction, long long kv_blocks) const;
  // KV grows block by block as sequences decode (and so may preempt); false: reserved whole.
  virtual bool paged() const { return true; }
  // Whole-prompt admission stops at the token budget.
  virtual bool budgets_tokens() const { return true; }
  // The last admitted is preempted first; false: the latest arrival.
  virtual bool preempts_latest_admitted() const { return false; }
  // A chunked prompt's blocks are allocated as its chunks are scheduled, not at admission.
  virtual bool allocates_as_scheduled() const { return false; }
};

// The scheduler for a kind; stateless, shared by every replica.
const LlmStepScheduler& llm_step_scheduler(LlmScheduler kind);

long long blocks_for_tokens(double tokens, int block_tokens);

}  // namespace gw
