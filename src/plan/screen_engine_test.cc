#include "plan/screen_engine.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace gw {
namespace {

ServiceSpec chat_service(double system_prompt, int turns) {
  ServiceSpec service;
  service.input_tokens.sample = {200, 300, 400};
  service.output_tokens.sample = {200};
  service.traffic.prefix.system_prompt_tokens = system_prompt;
  service.traffic.prefix.turns = turns;
  return service;
}

// Turn j of a conversation carries the system prompt and j earlier turns (their new tokens and
// answers): 2,000 + 2.5 x 500 + 300 = 3,550 tokens on average over six turns.
TEST(ScreenEngine, PromptsCarryTheSystemPromptAndTheHistory) {
  auto screened = screen_service(chat_service(2000, 6));
  ASSERT_TRUE(screened.ok());
  const ScreenEngine& e = screened.value().engine;
  EXPECT_TRUE(e.prefix_widened);
  EXPECT_NEAR(screened.value().service.input_tokens.mean(), 3550, 1e-9);
  EXPECT_NEAR(screened.value().service.input_tokens.sample.back(), 2000 + 5 * 500 + 400, 1e-9);
  EXPECT_EQ(screened.value().service.input_tokens.sample.size(), 18u);
  EXPECT_FALSE(e.notes.empty());
}

// One replica finds every turn's history cached and computes only the new tokens; over four
// replicas that ignore the cache three turns in four recompute their history; a prefill pool
// never holds the answers, decoded elsewhere, so its one replica recomputes them.
TEST(ScreenEngine, ComputedTokensFollowWhereTurnsLand) {
  const ScreenEngine e = screen_service(chat_service(2000, 6)).value().engine;
  const double history = 2.5 * 500;
  EXPECT_NEAR(e.computed_mean(1, true), 300, 1e-9);
  EXPECT_NEAR(e.computed_mean(4, true), 300 + 0.75 * history, 1e-9);
  EXPECT_NEAR(e.computed_mean(1, false), 300 + history * 0.4, 1e-9);
  EXPECT_NEAR(e.computed_quantile(1.0, 1, true), 400, 1e-9);
  EXPECT_NEAR(e.computed_quantile(1.0, 2, true), 400 + 0.5 * 5 * 500, 1e-9);
  // Caching off: every token of every prompt.
  ServiceSpec off = chat_service(2000, 6);
  off.deployment = Deployment{};
  off.deployment->prefix_cache = "off";
  const ScreenEngine e_off = screen_service(off).value().engine;
  EXPECT_NEAR(e_off.computed_mean(1, true), 3550, 1e-9);
  // No traffic.prefix: the prompts as given.
  const ScreenEngine plain = screen_service(chat_service(0, 1)).value().engine;
  EXPECT_FALSE(plain.prefix_widened);
  EXPECT_NEAR(plain.computed_mean(8, false), 300, 1e-9);
}

ServiceSpec speculative_service(const std::string& method, int tokens, double acceptance) {
  ServiceSpec service = chat_service(0, 1);
  Deployment d;
  SpeculativeSpec s;
  s.method = method;
  s.tokens = tokens;
  s.acceptance = acceptance;
  if (method == "draft") s.draft_model = "llama-3.2-1b";
  d.speculative = s;
  service.deployment = d;
  return service;
}

TEST(ScreenEngine, SpeculativeTokensPerStep) {
  EXPECT_NEAR(screen_service(speculative_service("ngram", 4, 0.5)).value().engine.tokens_per_step(), (1 - 0.03125) / 0.5, 1e-12);
  EXPECT_NEAR(screen_service(chat_service(0, 1)).value().engine.tokens_per_step(), 1, 1e-12);
  auto unknown = speculative_service("draft", 4, 0.5);
  unknown.deployment->speculative->draft_model = "no-such-model";
  EXPECT_FALSE(screen_service(unknown).ok());
}

// The sign flip comes out of the step model: a 70B on 4 x H100 with a 1B draft gains per token
// at batch 1 (verification reads the weights once for five tokens) and loses at batch 256
// (compute-bound: rejected tokens cost as much as accepted ones).
TEST(ScreenEngine, SpeculationGainsAtSmallBatchesAndLosesAtLargeOnes) {
  Catalog catalog = Catalog::embedded().value();
  const ModelArch arch = load_preset("llama-3.1-70b").value();
  Configuration config{catalog.find_accelerator("H100"), 4, Batching::continuous, 256};
  PlannerOptions options;
  const PerfSetup setup = screen_setup(config, Precision::bf16, WeightFormat::plain, options);
  const ScreenEngine plain = screen_service(chat_service(0, 1)).value().engine;
  const ScreenEngine draft = screen_service(speculative_service("draft", 4, 0.535)).value().engine;
  EXPECT_LT(screen_step_s(draft, arch, setup, 1, 1000, 0, 0, 0), 0.8 * screen_step_s(plain, arch, setup, 1, 1000, 0, 0, 0));
  EXPECT_GT(screen_step_s(draft, arch, setup, 256, 1000, 0, 0, 0), 1.1 * screen_step_s(plain, arch, setup, 256, 1000, 0, 0, 0));
  // The draft's weights and KV come out of the cache.
  double kv_plain = 0, kv_draft = 0;
  const double free_plain = screen_kv_free_bytes(arch, Precision::bf16, WeightFormat::plain, config, options, plain, kv_plain);
  const double free_draft = screen_kv_free_bytes(arch, Precision::bf16, WeightFormat::plain, config, options, draft, kv_draft);
  EXPECT_LT(free_draft, free_plain - 0.4e9);  // 1.2B parameters in bf16 over 4 devices
  EXPECT_GT(kv_draft, kv_plain);
}

}  // namespace
}  // namespace gw
