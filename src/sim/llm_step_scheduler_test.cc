// Each scheduler's composition of a step, recorded on a builder that only logs what is asked
// (the simulator's llm_scheduling_test runs them against a real KV cache), and each one's
// block reservation: vLLM v1 per scheduled chunk, v0 and Sarathi per prompt, Orca per context.
#include "sim/llm_step_scheduler.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

namespace gw {
namespace {

class LoggingBuilder final : public LlmStepBuilder {
 public:
  long long running = 3;
  bool swapped = false, chunks = false, preempts = false;
  std::string log;
  long long decoding() const override { return running; }
  bool has_swapped() const override { return swapped; }
  bool has_prompt_chunks() const override { return chunks; }
  bool preempted() const override { return preempts; }
  int token_budget() const override { return 512; }
  long long make_room_for_decodes() override {
    log += "room ";
    return 2;
  }
  long long swap_in() override {
    log += "swap-in ";
    return 1;
  }
  void decode_running() override { log += "decode "; }
  void continue_prefills(double& budget, long long reserved) override {
    log += fmt::format("continue({},{}) ", budget, reserved);
    budget -= 100;
  }
  void admit_whole() override { log += "admit-whole "; }
  void admit_chunked(double& budget, long long& reserved) override {
    log += fmt::format("admit-chunked({},{}) ", budget, reserved);
  }
};

std::string steps(LlmScheduler kind, LoggingBuilder b, long long* blocks = nullptr) {
  long long got = llm_step_scheduler(kind).build_step(b);
  if (blocks) *blocks = got;
  return b.log;
}

TEST(LlmStepScheduler, VllmV0RunsPromptsAloneAndAdmitsNothingWhileSequencesAreSwappedOut) {
  LoggingBuilder prompts;
  prompts.chunks = true;  // the admission found prompts: a prefill-only step
  EXPECT_EQ(steps(LlmScheduler::vllm_v0, prompts), "admit-whole ");
  LoggingBuilder swapped;
  swapped.swapped = true;
  long long blocks = 0;
  EXPECT_EQ(steps(LlmScheduler::vllm_v0, swapped, &blocks), "room swap-in decode ");
  EXPECT_EQ(blocks, 3);
  LoggingBuilder preempting;
  preempting.preempts = true;  // a step that preempted brings nothing back
  EXPECT_EQ(steps(LlmScheduler::vllm_v0, preempting, &blocks), "admit-whole room decode ");
  EXPECT_EQ(blocks, 2);
}

TEST(LlmStepScheduler, VllmV1AndSarathiDecodeFirstThenChunkWithinOneBudget) {
  // 512 tokens less 3 decodes; the continuing prompts used 100; the decodes' 2 blocks reserved.
  EXPECT_EQ(steps(LlmScheduler::vllm_v1, LoggingBuilder{}), "room decode continue(509,2) admit-chunked(409,2) ");
  long long blocks = 0;
  EXPECT_EQ(steps(LlmScheduler::sarathi, LoggingBuilder{}, &blocks), "room swap-in decode continue(509,3) admit-chunked(409,3) ");
  EXPECT_EQ(blocks, 3);
}

TEST(LlmStepScheduler, OrcaBatchesDecodesAndWholePromptsWithoutPreempting) {
  long long blocks = -1;
  EXPECT_EQ(steps(LlmScheduler::orca, LoggingBuilder{}, &blocks), "decode admit-whole ");
  EXPECT_EQ(blocks, 0);
  const auto& orca = llm_step_scheduler(LlmScheduler::orca);
  EXPECT_FALSE(orca.paged());
  EXPECT_FALSE(orca.budgets_tokens());
  EXPECT_EQ(orca.watermark_blocks(0.01, 1000), 0);
}

TEST(LlmStepScheduler, TokensReservedAtAdmission) {
  // A 100-token prompt of a 300-token sequence, 40 tokens scheduled now, a 4,096 context.
  auto tokens = [](LlmScheduler kind) { return llm_step_scheduler(kind).admission_tokens(100, 300, 40, 4096); };
  EXPECT_EQ(tokens(LlmScheduler::vllm_v1), 40);
  EXPECT_EQ(tokens(LlmScheduler::vllm_v0), 100);
  EXPECT_EQ(tokens(LlmScheduler::sarathi), 100);
  EXPECT_EQ(tokens(LlmScheduler::orca), 4096);
  EXPECT_EQ(llm_step_scheduler(LlmScheduler::orca).admission_tokens(100, 5000, 40, 4096), 5000);
  EXPECT_EQ(llm_step_scheduler(LlmScheduler::sarathi).watermark_blocks(0.01, 1000), 10);
  EXPECT_TRUE(llm_step_scheduler(LlmScheduler::vllm_v1).preempts_latest_admitted());
  EXPECT_FALSE(llm_step_scheduler(LlmScheduler::vllm_v0).preempts_latest_admitted());
}

TEST(LlmStepScheduler, EachKindHasItsOwnSchedulerAndNamesRoundTrip) {
  for (LlmScheduler kind : {LlmScheduler::vllm_v0, LlmScheduler::vllm_v1, LlmScheduler::sarathi, LlmScheduler::orca}) {
    EXPECT_EQ(llm_step_scheduler(kind).kind(), kind);
    EXPECT_EQ(parse_llm_scheduler(llm_scheduler_name(kind)), kind);
    EXPECT_FALSE(llm_scheduler_source(kind).empty());
  }
  EXPECT_EQ(parse_preemption(preemption_name(Preemption::swap)), Preemption::swap);
  EXPECT_FALSE(parse_llm_scheduler("fcfs"));
}

}  // namespace
}  // namespace gw
