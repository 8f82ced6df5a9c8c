// What the planner's screen takes from a service's serving engine beyond the model, so that
// screened candidates are sized as the simulation that verifies them runs: prompts carrying a
// shared prefix (traffic.prefix: the system prompt and the conversation so far) and the share of
// them prefix caching spares from prefill, and speculative decoding (deployment.speculative):
// a step's time per token it yields, the draft's weights and KV.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/memory.h"
#include "perf/step_time.h"
#include "plan/inference.h"
#include "spec/spec.h"

namespace gw {

struct ScreenEngine {
  TokenDistribution prompts;  // as the replicas hold them (traffic.prefix's system prompt and history included)
  TokenDistribution fresh;    // each turn's own new tokens
  bool prefix_widened = false;  // the service's prompts carry traffic.prefix's system prompt and history
  bool caching = true;          // prefix caching on
  int turns = 1;
  double turn_tokens = 0;       // one earlier turn in the history: its new tokens and its answer, on average
  double answer_share = 0;      // of turn_tokens, the answer's
  // A trace that names its prompt blocks: the share of prompt tokens cached by replicas sharing
  // its traffic (TraceSummary::prefix_reuse).
  std::vector<std::pair<int, double>> trace_reuse;
  std::optional<SpeculativeSpec> speculative;
  std::shared_ptr<const ModelArch> draft;  // method draft: its architecture
  std::vector<std::string> notes;          // what the screen assumed, for the plan's assumptions

  // Tokens a decoding sequence yields per step, (1 - a^(k+1)) / (1 - a); 1 without speculation.
  double tokens_per_step() const;
  // KV slots each decoding sequence holds for its proposals (k; 0 without speculation).
  double lookahead_tokens() const { return speculative ? speculative->tokens : 0; }
  // Every layer's tokens holding as many KV bytes as a sequence of `tokens` tokens of `arch`
  // holds on `accelerator`: fewer where sliding-window layers keep only their window's blocks
  // (vLLM V1's hybrid allocator on GPUs, as the simulator's cache counts them); every token beside
  // a draft model, whose KV is in every block. (Disaggregated pools move their KV through a
  // connector, which turns the allocator off: they count every token.)
  double kv_tokens(const ModelArch& arch, const Accelerator& accelerator, double tokens) const;
  // The prompt tokens prefill computes per request, on average or at quantile q, over `replicas`
  // replicas that route without regard to the cache: the system prompt is cached everywhere, a
  // turn's history only where its conversation's last turn ran (one in `replicas`), and the
  // answers only where they were decoded (answers_cached false: a prefill pool's replicas never
  // hold them); for a trace that names its blocks, its prompts less the share its replay leaves
  // cached at that many replicas. Without either, or with caching off: the whole prompt.
  double computed_mean(int replicas, bool answers_cached) const;
  double computed_quantile(double q, int replicas, bool answers_cached) const;
};

// The engine for a service as the screen sees it, and the service with its prompts widened by
// traffic.prefix (each turn's prompt is the system prompt, the earlier turns and its own tokens).
// An Error when the draft model is not a preset.
struct ScreenedService {
  ServiceSpec service;  // prompts as the replicas hold them
  ScreenEngine engine;
};
Result<ScreenedService> screen_service(const ServiceSpec& service);

// One engine step's time per token it yields to each decoding sequence: n sequences decoding at
// `context`, prefill_tokens of prompts (prefill_sequences of them, prefill_context long). Under
// speculative decoding the step verifies k + 1 tokens per sequence beside the prompt chunks and
// proposes k with the draft (or the head); its prompt chunks' time is kept whole and the rest
// spread over the tokens it yields, as the simulator counts it.
double screen_step_s(const ScreenEngine& engine, const ModelArch& arch, const PerfSetup& setup, double n, double context,
                     double prefill_tokens, double prefill_sequences, double prefill_context);

// What the draft model takes on each device of a replica laid out as `memory` says.
struct DraftMemory {
  double weights_bytes = 0;
  double kv_bytes_per_token = 0;
};
DraftMemory draft_memory(const ScreenEngine& engine, const InferenceMemoryOptions& memory);

// The step-time setup of a replica laid out as config says.
PerfSetup screen_setup(const Configuration& config, Precision precision, WeightFormat format, const PlannerOptions& options);
// Free device memory for the KV cache at this layout, in bytes; negative when weights do not
// fit. A speculative draft's weights come out of it and its KV adds to every token's
// (kv_bytes_per_token: per device, the draft's included; model_kv_bytes_per_token, when asked:
// the model's alone, what a prefill pool hands over).
double screen_kv_free_bytes(const ModelArch& arch, Precision precision, WeightFormat format, const Configuration& config,
                            const PlannerOptions& options, const ScreenEngine& engine, double& kv_bytes_per_token,
                            double* model_kv_bytes_per_token = nullptr);

}  // namespace gw
