#include "sim/llm_step_scheduler.h"

#include <algorithm>
#include <cmath>

#include "core/text.h"

namespace gw {

std::string_view llm_scheduler_name(LlmScheduler scheduler) {
  switch (scheduler) {
    case LlmScheduler::vllm_v0: return "vllm-v0";
    case LlmScheduler::vllm_v1: return "vllm-v1";
    case LlmScheduler::sarathi: return "sarathi";
    case LlmScheduler::orca: return "orca";
  }
  return "vllm-v1";
}

std::string_view llm_scheduler_source(LlmScheduler scheduler) {
  switch (scheduler) {
    case LlmScheduler::vllm_v0:
      return "vLLM 0.4-0.6 (V0 Scheduler._schedule_default): waiting prompts first, whole, in prefill-only steps within "
             "max_num_batched_tokens; else decode every running sequence; admission keeps a 1% free-block watermark; "
             "preemption (recompute, or swap) of the latest arrival first";
    case LlmScheduler::vllm_v1:
      return "vLLM >= 0.8 (V1 Scheduler.schedule): running requests first (decodes, prompt chunks), then waiting ones, "
             "one token budget; KV blocks allocated as tokens are scheduled; the last admitted is preempted (recompute)";
    case LlmScheduler::sarathi:
      return "Sarathi-Serve (OSDI'24, as Vidur's sarathi scheduler): decodes first, then prompt chunks within the token "
             "budget; a prompt's blocks reserved whole at admission with a 1% watermark; latest arrival preempted first";
    case LlmScheduler::orca:
      return "Orca (OSDI'22, as Vidur's orca scheduler): whole prompts and decodes in one iteration; KV for the model's "
             "whole context reserved per sequence at admission, so never preempted";
  }
  return "";
}

std::optional<LlmScheduler> parse_llm_scheduler(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "vllm-v0") return LlmScheduler::vllm_v0;
  if (name == "vllm-v1") return LlmScheduler::vllm_v1;
  if (name == "sarathi") return LlmScheduler::sarathi;
  if (name == "orca") return LlmScheduler::orca;
  return std::nullopt;
}

std::string_view preemption_name(Preemption preemption) {
  return preemption == Preemption::swap ? "swap" : "recompute";
}

std::optional<Preemption> parse_preemption(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "recompute") return Preemption::recompute;
  if (name == "swap") return Preemption::swap;
  return std::nullopt;
}

long long blocks_for_tokens(double tokens, int block_tokens) {
  return static_cast<long long>(std::ceil(tokens / block_tokens));
}

long long LlmStepScheduler::watermark_blocks(double watermark_fraction, long long kv_blocks) const {
  return static_cast<long long>(watermark_fraction * static_cast<double>(kv_blocks));
}

namespace {

// Prompts first and whole, in a prefill-only step; else every running sequence decodes. No
// admission while sequences wait in host memory: they come back first.
class VllmV0Scheduler final : public LlmStepScheduler {
 public:
  LlmScheduler kind() const override { return LlmScheduler::vllm_v0; }
  long long build_step(LlmStepBuilder& step) const override {
    if (!step.has_swapped()) step.admit_whole();
    if (step.has_prompt_chunks()) return 0;
    long long new_blocks = step.make_room_for_decodes();
    if (!step.preempted()) new_blocks += step.swap_in();
    step.decode_running();
    return new_blocks;
  }
  double admission_tokens(double prompt, double, double, double) const override { return prompt; }
};

// Decodes first (with swap_in, the swapped sequences back unless this step preempted), then
// unfinished prompts' chunks, then waiting prompts, all in one token budget.
long long decodes_then_chunks(LlmStepBuilder& step, bool swap_in) {
  long long new_blocks = step.make_room_for_decodes();
  if (swap_in && !step.preempted()) new_blocks += step.swap_in();
  step.decode_running();
  double budget = step.token_budget() - static_cast<double>(step.decoding());
  step.continue_prefills(budget, new_blocks);
  step.admit_chunked(budget, new_blocks);
  return new_blocks;
}

// Running requests first, then waiting ones, in one token budget; blocks allocated for the
// tokens scheduled.
class VllmV1Scheduler final : public LlmStepScheduler {
 public:
  LlmScheduler kind() const override { return LlmScheduler::vllm_v1; }
  long long build_step(LlmStepBuilder& step) const override { return decodes_then_chunks(step, false); }
  double admission_tokens(double, double, double chunk, double) const override { return chunk; }
  bool preempts_latest_admitted() const override { return true; }
  bool allocates_as_scheduled() const override { return true; }
};

// As vLLM v1's order, with swapped sequences brought back; a prompt's blocks reserved whole at
// admission.
class SarathiScheduler final : public LlmStepScheduler {
 public:
  LlmScheduler kind() const override { return LlmScheduler::sarathi; }
  long long build_step(LlmStepBuilder& step) const override { return decodes_then_chunks(step, true); }
  double admission_tokens(double prompt, double, double, double) const override { return prompt; }
};

// Whole prompts and decodes in one iteration; each sequence's KV reserved for the model's
// context (or its own length, if longer) at admission, so nothing grows and nothing is preempted.
class OrcaScheduler final : public LlmStepScheduler {
 public:
  LlmScheduler kind() const override { return LlmScheduler::orca; }
  long long build_step(LlmStepBuilder& step) const override {
    step.decode_running();
    step.admit_whole();
    return 0;
  }
  double admission_tokens(double, double sequence, double, double context) const override {
    return std::max(context, sequence);
  }
  long long watermark_blocks(double, long long) const override { return 0; }
  bool paged() const override { return false; }
  bool budgets_tokens() const override { return false; }
};

}  // namespace

const LlmStepScheduler& llm_step_scheduler(LlmScheduler kind) {
  static const VllmV0Scheduler vllm_v0;
  static const VllmV1Scheduler vllm_v1;
  static const SarathiScheduler sarathi;
  static const OrcaScheduler orca;
  switch (kind) {
    case LlmScheduler::vllm_v0: return vllm_v0;
    case LlmScheduler::vllm_v1: return vllm_v1;
    case LlmScheduler::sarathi: return sarathi;
    case LlmScheduler::orca: return orca;
  }
  return vllm_v1;
}

}  // namespace gw
