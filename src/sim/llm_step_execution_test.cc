// The LLM step execution alone: one replica driven step by step by hand, with the requests that
// leave it recorded instead of counted by a simulation.
#include "sim/llm_step_execution.h"

#include <gtest/gtest.h>

#include "sim/linear_step_timer_test.h"

#include <memory>

namespace gw::sim_detail {
namespace {

using testing_support::LinearStepTimer;

class RecordedExits final : public RequestExits {
 public:
  explicit RecordedExits(RequestPool& pool) : pool_(pool) {}
  bool expired(const Request&, double) const override { return false; }
  void give_up(int id, ReplicaState&) override { pool_.release(id); }
  void reject(int id, ReplicaState&) override {
    rejected.push_back(id);
    tokens_finished += pool_[id].generated;
    pool_.release(id);
  }
  void complete(int id, double t) override {
    completed.push_back(id);
    completed_at.push_back(t);
    tokens_finished += pool_[id].output;
    pool_.release(id);
  }
  void hand_off(int id, ReplicaState&, double) override { handed_off.push_back(id); }
  void kv_pulled(int, double) override {}
  std::vector<int> completed, rejected, handed_off;
  std::vector<double> completed_at;
  double tokens_finished = 0;

 private:
  RequestPool& pool_;
};

struct OneReplica {
  explicit OneReplica(LlmScheduler scheduler, long long kv_blocks, int block_tokens, int max_batch)
      : exits(pool), steps(pool, exits, 1, samples), replicas(1) {
    config.batching = SimBatching::continuous;
    config.scheduler = scheduler;
    config.llm = std::make_shared<LinearStepTimer>();
    config.kv_blocks = kv_blocks;
    config.block_tokens = block_tokens;
    config.max_batch = max_batch;
    config.watermark_fraction = 0;
    ReplicaState& r = replicas[0];
    r.config = &config;
    r.scheduler = &llm_step_scheduler(scheduler);
    r.kv = KvCache(kv_blocks, block_tokens);
  }
  int arrive(double input, double output) {
    Request q;
    q.input = q.prompt = input;
    q.output = output;
    q.arrival_order = arrivals++;
    q.replica = 0;
    const int id = pool.add(q);
    replicas[0].waiting.push_back(id);
    return id;
  }
  // Steps until the replica is idle, checking its counters after each; returns the steps run.
  int run(double& t) {
    int n = 0;
    while (auto step = steps.start_step(replicas[0], t)) {
      t += step->duration_s;
      steps.finish_step(replicas[0], t);
      EXPECT_EQ(steps.check(replicas, exits.tokens_finished), "") << "after step " << n;
      if (++n > 1000) break;
    }
    return n;
  }

  RequestPool pool;
  RecordedExits exits;
  std::vector<StepCounts> samples;
  LlmStepExecution steps;
  ReplicaConfig config;
  std::vector<ReplicaState> replicas;
  long long arrivals = 0;
};

// The hand trace of LlmScheduling.VllmV0PreemptsTheLatestArrivalAndKeepsItsTokens, on the part alone.
TEST(LlmStepExecution, PreemptsTheLatestArrivalWhenTheCacheIsFullAndKeepsItsTokens) {
  OneReplica one(LlmScheduler::vllm_v0, 10, 1, 2);
  const int a = one.arrive(4, 4), b = one.arrive(4, 4);
  double t = 0;
  const int steps = one.run(t);
  ASSERT_EQ(one.exits.completed.size(), 2u);
  EXPECT_EQ(one.exits.completed[0], a);
  EXPECT_EQ(one.exits.completed[1], b);
  const ReplicaState& r = one.replicas[0];
  EXPECT_EQ(r.stats.preemptions, 1);
  EXPECT_EQ(r.stats.recomputed_tokens, 5);  // B's 4 prompt tokens and its first generated one
  EXPECT_EQ(r.kv.used_blocks(), 0);
  EXPECT_EQ(r.decoding_count, 0);
  EXPECT_DOUBLE_EQ(one.steps.tokens_emitted(), 8);  // 4 + 4 tokens, none lost to the preemption
  EXPECT_EQ(static_cast<int>(one.samples.size()), steps);  // every step sampled (step_sample_every = 1)
  EXPECT_GT(one.replicas[0].kv.block_s(), 0);
}

TEST(LlmStepExecution, APromptThatNeverFitsIsRejectedNotLeftWaiting) {
  OneReplica one(LlmScheduler::vllm_v1, 8, 4, 4);  // 32 tokens of KV
  const int too_long = one.arrive(100, 4);
  const int fits = one.arrive(10, 3);
  double t = 0;
  one.run(t);
  ASSERT_EQ(one.exits.rejected.size(), 1u);
  EXPECT_EQ(one.exits.rejected[0], too_long);
  ASSERT_EQ(one.exits.completed.size(), 1u);
  EXPECT_EQ(one.exits.completed[0], fits);
  EXPECT_TRUE(one.replicas[0].waiting.empty());
}

TEST(LlmStepExecution, ChunkedPrefillOverlapsDecodesAndEveryTokenIsCounted) {
  OneReplica one(LlmScheduler::sarathi, 1000, 16, 8);
  one.config.token_budget = 64;
  for (int i = 0; i < 6; ++i) one.arrive(100 + 30 * i, 20 + i);
  double t = 0;
  one.run(t);
  EXPECT_EQ(one.exits.completed.size(), 6u);
  double outputs = 0;
  for (int i = 0; i < 6; ++i) outputs += 20 + i;
  EXPECT_DOUBLE_EQ(one.steps.tokens_emitted(), outputs);
  // Prompts of 100-250 tokens under a 64-token budget: every one took several steps.
  bool mixed = false;
  for (const StepCounts& s : one.samples) {
    EXPECT_LE(s.prefill_tokens, 64);
    if (s.decode_sequences > 0 && s.prefill_tokens > 0) mixed = true;
  }
  EXPECT_TRUE(mixed) << "no step ran decodes beside a prompt chunk";
}

}  // namespace
}  // namespace gw::sim_detail
