#include "plan/screen_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/serving_defaults.h"
#include "model/kv_layer_groups.h"
#include "model/presets.h"
#include "trace/prefix_reuse.h"
#include "perf/layer_operators.h"

namespace gw {

namespace {

// A sample of at most this many prompt lengths per turn: the widened sample is turns times it.
constexpr size_t kPromptsPerTurn = 512;

TokenDistribution widened_prompts(const TokenDistribution& fresh, double output_mean, const PrefixShape& prefix) {
  std::vector<double> own;
  const size_t n = fresh.sample.size();
  const size_t step = std::max<size_t>(1, (n + kPromptsPerTurn - 1) / kPromptsPerTurn);
  for (size_t i = 0; i < n; i += step) own.push_back(fresh.sample[i]);
  // Turn j carries the j turns before it: their new tokens and their answers, on average.
  const double per_turn = fresh.mean() + output_mean;
  TokenDistribution out;
  for (int j = 0; j < std::max(1, prefix.turns); ++j)
    for (double x : own) out.sample.push_back(prefix.system_prompt_tokens + j * per_turn + x);
  std::sort(out.sample.begin(), out.sample.end());
  return out;
}

}  // namespace

double ScreenEngine::tokens_per_step() const {
  if (!speculative) return 1;
  const double a = std::clamp(speculative->acceptance, 0.0, 0.999999);
  return (1 - std::pow(a, speculative->tokens + 1)) / (1 - a);
}

double ScreenEngine::kv_tokens(const ModelArch& arch, const Accelerator& accelerator, double tokens) const {
  if (draft || !hybrid_kv_cache_manager(accelerator.vendor, false)) return tokens;
  return kv_layer_groups(arch, kKvBlockTokens).all_layer_tokens(tokens, kKvBlockTokens);
}

double ScreenEngine::computed_mean(int replicas, bool answers_cached) const {
  if (caching && !trace_reuse.empty()) return prompts.mean() * (1 - cached_share_at(trace_reuse, replicas));
  if (!prefix_widened || !caching) return prompts.mean();
  const double history = (turns - 1) / 2.0 * turn_tokens, elsewhere = 1 - 1.0 / std::max(1, replicas);
  return fresh.mean() + history * elsewhere + (answers_cached ? 0 : history * answer_share * (1 - elsewhere));
}

double ScreenEngine::computed_quantile(double q, int replicas, bool answers_cached) const {
  if (caching && !trace_reuse.empty()) return prompts.quantile(q) * (1 - cached_share_at(trace_reuse, replicas));
  if (!prefix_widened || !caching) return prompts.quantile(q);
  // Turns are spread evenly over a conversation: the history at quantile q is q of the longest.
  const double history = q * (turns - 1) * turn_tokens, elsewhere = 1 - 1.0 / std::max(1, replicas);
  return fresh.quantile(q) + history * elsewhere + (answers_cached ? 0 : history * answer_share * (1 - elsewhere));
}

Result<ScreenedService> screen_service(const ServiceSpec& service) {
  ScreenedService out;
  out.service = service;
  ScreenEngine& engine = out.engine;
  engine.prompts = engine.fresh = service.input_tokens;
  const Deployment* d = service.deployment ? &*service.deployment : nullptr;
  engine.caching = !d || d->prefix_cache != "off";
  const PrefixShape& prefix = service.traffic.prefix;
  if (prefix.given() && service.traffic.trace_path.empty() && !service.input_tokens.sample.empty()) {
    const double output = std::max(1.0, service.output_tokens.mean());
    out.service.input_tokens = engine.prompts = widened_prompts(service.input_tokens, output, prefix);
    engine.prefix_widened = true;
    engine.turns = std::max(1, prefix.turns);
    engine.turn_tokens = service.input_tokens.mean() + output;
    engine.answer_share = output / engine.turn_tokens;
    engine.notes.push_back(fmt::format(
        "prompts screened as traffic.prefix builds them: a {:.0f}-token system prompt and {} turn(s) of history, {:.0f} tokens "
        "on average (p99 {:.0f}) against {:.0f} new; {}",
        prefix.system_prompt_tokens, prefix.turns, engine.prompts.mean(), engine.prompts.quantile(0.99), engine.fresh.mean(),
        engine.caching ? "prefill computes the new tokens, and a turn's history where its conversation's last turn ran on another "
                         "replica (the router ignores the cache: 1 - 1/replicas of turns), answers too on a prefill pool (decoded "
                         "elsewhere); the KV cache holds every prompt whole; the simulation then measures the hits"
                       : "prefix caching off: every prompt token computed"));
  }
  if (engine.caching && service.traffic.trace && !service.traffic.trace->prefix_reuse.empty()) {
    engine.trace_reuse = service.traffic.trace->prefix_reuse;
    auto at = [&](int r) { return cached_share_at(engine.trace_reuse, r) * 100; };
    engine.notes.push_back(fmt::format(
        "prefill screened as the trace's prompt blocks leave it: replayed over replicas taking its requests in turn, each with "
        "an unlimited cache, {:.1f}% of prompt tokens cached on 1 replica, {:.1f}% on 4, {:.1f}% on 16 (the simulation then "
        "measures the hits its caches and router give)", at(1), at(4), at(16)));
  }
  if (d && d->speculative) {
    engine.speculative = d->speculative;
    const SpeculativeSpec& s = *d->speculative;
    if (s.method == "draft") {
      auto draft = load_preset(s.draft_model);
      if (!draft.ok()) return Error{"", s.line, "deployment.speculative.draft_model", draft.error().message};
      engine.draft = std::make_shared<const ModelArch>(std::move(draft.value()));
    }
    engine.notes.push_back(fmt::format(
        "speculative decoding ({}, {} tokens proposed, acceptance {:.2f}): {:.2f} tokens per sequence per step; a step verifies "
        "k + 1 tokens per sequence through the model{}, so the gain shrinks, and turns to a loss, as batches grow compute-bound",
        s.method, s.tokens, s.acceptance, engine.tokens_per_step(),
        s.method == "draft" ? " after k passes of " + s.draft_model + " (its weights and KV out of the cache)"
        : s.method == "ngram" ? " (n-gram proposals cost nothing)"
                              : " after k passes of one decoder layer's share"));
  }
  return out;
}

double screen_step_s(const ScreenEngine& engine, const ModelArch& arch, const PerfSetup& setup, double n, double context,
                     double prefill_tokens, double prefill_sequences, double prefill_context) {
  if (!engine.speculative || n <= 0)
    return llm_step(arch, setup, n, context, prefill_tokens, prefill_sequences, prefill_context).time_s;
  const double k = engine.speculative->tokens;
  // The k proposed tokens of each sequence go through the model as prompt tokens that attend to
  // the sequence's whole context (a prompt's tokens attend to half of theirs on average).
  const double extra = n * k;
  const double verify_context = (prefill_tokens * prefill_context + extra * 2 * context) / std::max(1e-9, prefill_tokens + extra);
  const double verify = llm_step(arch, setup, n, context, prefill_tokens + extra, prefill_sequences + extra, verify_context).time_s;
  double propose = 0;
  if (engine.draft) propose = k * llm_step(*engine.draft, setup, n, context, 0, 0, 0).time_s;
  else if (engine.speculative->method == "eagle" || engine.speculative->method == "mtp")  // one decoder layer's share per proposal
    propose = k / std::max(1, arch.num_layers) * llm_step(arch, setup, n, context, 0, 0, 0).time_s;
  const double prompts = prefill_tokens > 0 ? llm_step(arch, setup, 0, 0, prefill_tokens, prefill_sequences, prefill_context).time_s : 0;
  return prompts + std::max(0.0, verify + propose - prompts) / engine.tokens_per_step();
}

DraftMemory draft_memory(const ScreenEngine& engine, const InferenceMemoryOptions& memory) {
  DraftMemory out;
  if (!engine.draft) return out;
  MemoryEstimate e = estimate_inference(*engine.draft, memory);
  out.weights_bytes = e.weights_bytes;
  out.kv_bytes_per_token = e.kv_cache_bytes_per_token;
  return out;
}

PerfSetup screen_setup(const Configuration& config, Precision precision, WeightFormat format, const PlannerOptions& options) {
  PerfSetup setup;
  setup.accelerator = config.accelerator;
  setup.tensor_parallel = config.tensor_parallel;
  setup.weight_precision = precision;
  setup.weight_format = format;
  setup.kv_precision = precision == Precision::fp8 ? Precision::fp8 : Precision::bf16;
  setup.efficiency = efficiency_for(*config.accelerator, options.calibration);
  use_layer_operators(setup, options.calibration);
  return setup;
}

double screen_kv_free_bytes(const ModelArch& arch, Precision precision, WeightFormat format, const Configuration& config,
                            const PlannerOptions& options, const ScreenEngine& engine, double& kv_bytes_per_token,
                            double* model_kv_bytes_per_token) {
  InferenceMemoryOptions memory;
  memory.weight_precision = precision;
  memory.weight_format = format;
  memory.kv_precision = precision == Precision::fp8 ? Precision::fp8 : Precision::bf16;
  memory.tensor_parallel = config.tensor_parallel;
  memory.pipeline_parallel = config.pipeline_parallel;
  memory.batch = 1;
  memory.context = 1;
  memory.prefill_chunk_tokens = options.prefill_chunk_tokens;
  memory.overhead_gib = options.overhead_gib;
  MemoryEstimate e = estimate_inference(arch, memory);
  const DraftMemory draft = draft_memory(engine, memory);
  kv_bytes_per_token = e.kv_cache_bytes_per_token + draft.kv_bytes_per_token;
  if (model_kv_bytes_per_token) *model_kv_bytes_per_token = e.kv_cache_bytes_per_token;
  double usable = config.accelerator->memory_bytes() * options.usable_fraction;
  // Activations at the full chunk, not at one token.
  memory.batch = std::max(1, config.max_batch);
  memory.context = options.prefill_chunk_tokens;
  double activation = estimate_inference(arch, memory).activation_bytes;
  return usable - e.weights_bytes - draft.weights_bytes - activation - e.overhead_bytes;
}

}  // namespace gw
