#include "sim/llm_step_execution.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gw::sim_detail {
namespace {

// Sequences a replica runs at once (prompts in progress and decodes).
long long sequence_slots(const ReplicaConfig& c) { return c.batching == SimBatching::none ? 1 : std::max(1, c.max_batch); }

}  // namespace

// The scheduler's operations on one replica while it builds a step.
class LlmStepExecution::StepBuilder final : public LlmStepBuilder {
 public:
  StepBuilder(LlmStepExecution& steps, ReplicaState& r, double t) : steps_(steps), r_(r), t_(t) {}
  long long decoding() const override { return r_.decoding_count; }
  bool has_swapped() const override { return !r_.swapped.empty(); }
  bool has_prompt_chunks() const override { return !r_.step_chunks.empty(); }
  bool preempted() const override { return steps_.preempted_now_; }
  int token_budget() const override { return r_.config->token_budget; }
  long long make_room_for_decodes() override { return steps_.make_room_for_decodes(r_); }
  long long swap_in() override { return steps_.swap_in(r_); }
  void decode_running() override { r_.step_decodes = r_.decoding_count > 0; }
  void continue_prefills(double& budget, long long reserved) override { steps_.continue_prefills(r_, budget, reserved); }
  void admit_whole() override {
    double budget = 0;
    long long reserved = 0;
    steps_.admit(r_, t_, false, budget, reserved);
  }
  void admit_chunked(double& budget, long long& reserved) override { steps_.admit(r_, t_, true, budget, reserved); }

 private:
  LlmStepExecution& steps_;
  ReplicaState& r_;
  double t_;
};

std::optional<StepStart> LlmStepExecution::start_step(ReplicaState& r, double t) {
  const ReplicaConfig& c = *r.config;
  swap_tokens_now_ = 0;
  long long new_blocks = 0;
  // A round that preempted or rejected every running request builds the step again: the
  // queues it changed may run now (each round empties the running set or stops).
  for (int round = 0; round < 4; ++round) {
    const long long rejected_before = rejections_;
    new_blocks = build_step(r, t);
    if (r.step_decodes || !r.step_chunks.empty() || (!preempted_now_ && rejections_ == rejected_before)) break;
  }
  if (!r.step_decodes && r.step_chunks.empty()) return std::nullopt;  // nothing to do: idle
  double prefill_tokens = 0, attended = 0, completing = 0;
  for (auto [id, chunk] : r.step_chunks) {
    const Request& q = pool_[id];
    double done = q.prompt - q.prefill_left;
    attended += chunk * done + chunk * chunk / 2;
    prefill_tokens += chunk;
    if (chunk >= q.prefill_left) ++completing;
  }
  double decode_n = r.step_decodes ? static_cast<double>(r.decoding_count) : 0;
  // Each decoding sequence attends to its KV and the token it writes now.
  double context = r.step_decodes ? r.context_sum + decode_n : 0;
  double duration = c.speculative.tokens > 0 && decode_n > 0
                        ? speculative_step_s(c, decode_n, context, prefill_tokens, attended, completing)
                        : c.llm->step_time_s(decode_n, context, prefill_tokens, attended, decode_n + completing);
  if (step_sample_every_ > 0 && steps_++ % step_sample_every_ == 0)
    step_samples_.push_back({static_cast<int>(r.index), decode_n, context, prefill_tokens, attended, decode_n + completing});
  if (swap_tokens_now_ > 0 && c.swap_bytes_per_s > 0)
    duration += swap_tokens_now_ * c.llm->kv_bytes_per_token() / c.swap_bytes_per_s;
  if (r.step_decodes) {
    // The blocks this step's tokens go into are allocated now, as the engine does before it runs.
    if (r.scheduler->paged()) r.kv.allocate(new_blocks);
    r.context_sum += decode_n;
    r.decode_step++;
    tokens_emitted_ += decode_n;
  }
  // Unused cached prefix blocks live in the KV cache's free blocks: evicted as those run out.
  // Lanes sharing a pool each keep cached blocks in their share of its free blocks.
  if (r.prefix.in_kv())
    r.prefix.evict_to(r.kv.cached_tokens_within(r.kv.free_blocks() / r.kv.pool_sharers()));
  r.kv.accrue(duration);
  return StepStart{duration, static_cast<size_t>(decode_n) + r.step_chunks.size()};
}

void LlmStepExecution::finish_step(ReplicaState& r, double t) {
  const bool paged = r.scheduler->paged();
  if (r.step_decodes) {
    // Every decoding sequence produced a token; those with all their tokens are done.
    while (!r.decoding.empty() && r.decoding.top().finish_step <= r.decode_step) {
      DecodeEntry entry = r.decoding.top();
      r.decoding.pop();
      Request& q = pool_[entry.id];
      if (!q.live || q.version != entry.version || q.stage != Stage::decoding) continue;  // preempted since
      double tokens = kv_tokens(r, q);
      if (paged) r.kv.leave(q.kv_growth);
      r.decoding_count--;
      r.context_sum -= tokens;
      r.kv.release(paged ? r.kv.blocks_for(tokens) : q.blocks);
      cache_blocks_within(r, entry.id, q.input + q.output);
      release_prefix(r, entry.id);
      q.generated = q.output;
      exits_.complete(entry.id, t);
    }
  }
  // Prompt chunks done; finished prompts emit their first token and start decoding.
  for (auto [id, chunk] : r.step_chunks) {
    Request& q = pool_[id];
    q.prefill_left -= chunk;
    if (q.prefill_left > 1e-9) continue;
    r.prefilling.erase(std::find(r.prefilling.begin(), r.prefilling.end(), id));
    cache_blocks_within(r, id, q.input);
    if (q.first_token < 0) q.first_token = t;
    q.generated += 1;  // the first token, or the next one after a recompute
    tokens_emitted_ += 1;
    if (q.generated >= q.output) {
      r.kv.release(q.blocks);
      cache_blocks_within(r, id, q.input + q.output);
      release_prefix(r, id);
      q.stage = Stage::queued;
      exits_.complete(id, t);
      continue;
    }
    if (r.config->role == ReplicaRole::prefill) {
      // Its KV leaves for a decode replica, which computes only the token after the first. The
      // blocks here stay held until a decode replica admits it (a decode pool without room
      // fills the prefill replicas' memory, and they stall: back-pressure); its prefix blocks
      // stay cached.
      q.held_on = static_cast<int>(r.index);
      q.held_blocks = q.blocks;
      q.blocks = 0;
      release_prefix(r, id);
      q.prompt = q.input + q.generated;
      q.prefill_left = 0;
      q.kv_arrived = q.prompt - 1;
      q.stage = Stage::queued;
      q.version++;
      exits_.hand_off(id, r, t);
      continue;
    }
    join_decoding(r, id, q.prompt);
  }
  r.step_chunks.clear();
}

// A step under speculative decoding, as the simulator counts steps (one token per decoding
// sequence): the engine's step proposes k tokens per sequence (the draft's k passes, or the
// head's), verifies k + 1 per sequence with the target beside the prompt chunks, and yields
// tokens_per_step() per sequence on average. The prompt chunks' own time is kept whole; the rest
// of the step (verification and proposals) is spread over the tokens it yields. At small
// batches verifying k + 1 tokens costs little more than decoding one (the weights are read once)
// and the step gains; at large ones the step is compute-bound, k + 1 tokens cost nearly k + 1
// times one and the rejected ones are lost: the gain turns to a loss by the step model itself.
double LlmStepExecution::speculative_step_s(const ReplicaConfig& c, double decode_n, double context, double prefill_tokens,
                                            double attended, double completing) const {
  const SpeculativeDecoding& s = c.speculative;
  const double k = s.tokens;
  // Each of the k extra query tokens of a sequence attends to its KV as a prompt token would.
  const double verify = c.llm->step_time_s(decode_n, context, prefill_tokens + decode_n * k, attended + k * context,
                                           decode_n * (k + 1) + completing);
  double propose = 0;
  if (s.draft) propose = k * s.draft->step_time_s(decode_n, context, 0, 0, decode_n);
  else if (s.head_share > 0) propose = k * s.head_share * c.llm->step_time_s(decode_n, context, 0, 0, decode_n);
  const double prompts = prefill_tokens > 0 ? c.llm->step_time_s(0, 0, prefill_tokens, attended, completing) : 0;
  return prompts + std::max(0.0, verify + propose - prompts) / s.tokens_per_step();
}

// One round of the replica's scheduler: what runs in this step (decodes, prompt chunks),
// preempting and admitting as the engine does. Returns the KV blocks the step's decode tokens need.
long long LlmStepExecution::build_step(ReplicaState& r, double t) {
  r.step_chunks.clear();
  r.step_decodes = false;
  preempted_now_ = false;
  join_arrived_kv(r, t);
  StepBuilder step(*this, r, t);
  return r.scheduler->build_step(step);
}

// Requests whose KV a prefill replica sent join the running decodes before the scheduler
// builds the step, oldest first while slots and blocks (above the watermark) last: the
// token after the first is their next decode token, computed in the decode step with the
// others, as DistServe's decoding instance, vLLM's KV connectors and SGLang's decode servers
// run them. A prompt step of their own would stop every decode once per request under a
// prompts-first scheduler. This is their only way in: admit() leaves them waiting (sequences
// swapped out come back first, as vLLM's scheduler takes no new request while any are out).
void LlmStepExecution::join_arrived_kv(ReplicaState& r, double t) {
  const ReplicaConfig& c = *r.config;
  if (c.role != ReplicaRole::decode || !r.swapped.empty()) return;
  const long long watermark = watermark_blocks(r);
  while (!r.waiting.empty() && r.decoding_count + static_cast<long long>(r.prefilling.size()) < sequence_slots(c)) {
    const int id = r.waiting.front();
    Request& q = pool_[id];
    if (q.kv_arrived <= 0) return;  // a sequence preempted here: admit() computes it again
    if (exits_.expired(q, t)) {
      r.waiting.pop_front();
      exits_.give_up(id, r);
      continue;
    }
    // The prompt's KV; the first token's is written by the step (paged: blocks as it grows;
    // otherwise reserved as admission reserves them).
    const double held = q.kv_arrived;
    const long long need = r.scheduler->paged() ? r.kv.blocks_for(held) : blocks_to_admit(r, q, held);
    if (need > r.kv.capacity_blocks() - watermark) {
      // Never fits, even alone: a server rejects it; counted, never silently dropped.
      r.waiting.pop_front();
      reject(id, r);
      continue;
    }
    if (q.kv_to_pull) return;  // its KV is still on the prefill replica (kv_pull.cc)
    if (r.kv.free_blocks() - need < watermark) return;
    r.waiting.pop_front();
    r.kv.allocate(need);
    q.blocks = need;
    q.prefill_left = 0;
    q.kv_arrived = 0;  // a later preemption here recomputes it all
    if (q.prefill_started < 0) q.prefill_started = t;
    if (q.scheduled < 0) q.scheduled = t;
    exits_.kv_pulled(id, t);
    add_victim(r, id);
    join_decoding(r, id, held);
  }
}

// Free blocks a scheduler keeps back when admitting.
long long LlmStepExecution::watermark_blocks(const ReplicaState& r) const {
  return r.scheduler->watermark_blocks(r.config->watermark_fraction, r.kv.capacity_blocks());
}

// Lanes on one pool of blocks take a prompt's blocks whole at admission, even under a scheduler
// that allocates as it schedules: one engine's scheduler preempts across its micro-batches when
// a prompt's next chunk finds no block; lanes cannot, and prompts half-computed in every lane
// would hold the pool between them.
bool LlmStepExecution::allocates_as_scheduled(const ReplicaState& r) const {
  return r.scheduler->allocates_as_scheduled() && r.kv.pool_sharers() == 1;
}

long long LlmStepExecution::blocks_to_admit(const ReplicaState& r, const Request& q, double chunk) const {
  if (r.kv.pool_sharers() > 1 && r.scheduler->allocates_as_scheduled()) return r.kv.blocks_for(q.prompt);
  return r.kv.blocks_for(r.scheduler->admission_tokens(q.prompt, q.input + q.output, chunk, r.config->max_sequence_tokens));
}

// Admits waiting requests, oldest first, while sequence slots, tokens and blocks remain.
// chunked: prompts may be cut to the budget; otherwise whole (the first of a step may exceed
// the budget, as on a server whose budget covers its longest prompt).
void LlmStepExecution::admit(ReplicaState& r, double t, bool chunked, double& budget, long long& reserved) {
  const ReplicaConfig& c = *r.config;
  const long long watermark = watermark_blocks(r);
  const long long capacity = r.kv.capacity_blocks();
  const bool budgeted = r.scheduler->budgets_tokens();
  if (!chunked) budget = c.token_budget;
  while (!r.waiting.empty() && r.decoding_count + static_cast<long long>(r.prefilling.size()) < sequence_slots(c)) {
    int id = r.waiting.front();
    Request& q = pool_[id];
    if (q.kv_arrived > 0) break;  // KV sent by a prefill replica: it joins the decodes at a step's start
    if (exits_.expired(q, t)) {
      r.waiting.pop_front();
      exits_.give_up(id, r);
      continue;
    }
    if (blocks_to_admit(r, q, q.prompt) > capacity - watermark) {
      // Never fits, even alone: a server rejects it; counted, never silently dropped.
      r.waiting.pop_front();
      reject(id, r);
      continue;
    }
    // Prompt tokens found in the prefix cache are not computed again.
    const size_t hit_blocks = prefix_hit_blocks(r, id);
    const double hit = hit_blocks > 0 ? pool_.chain(id).tokens_of(hit_blocks) : 0;
    double chunk = q.prompt - hit;
    if (chunked) {
      if (budget < 1) break;
      chunk = std::min(chunk, std::floor(budget));
    } else if (budgeted && !r.step_chunks.empty() && chunk > budget) {
      break;
    }
    long long need = blocks_to_admit(r, q, hit + chunk);
    if (r.kv.free_blocks() - reserved - need < watermark) break;
    r.waiting.pop_front();
    r.kv.allocate(need);
    q.blocks = need;
    q.prefill_left = q.prompt - hit;
    if (q.prefill_started < 0) q.prefill_started = t;
    if (c.prefix_caching != PrefixCaching::off) {
      r.stats.prefix_lookups++;
      r.stats.prefix_lookup_tokens += q.prompt;
      r.stats.prefix_chained += !pool_.chain(id).empty();
      if (hit_blocks > 0) {
        r.stats.prefix_hits++;
        r.stats.prefix_hit_tokens += hit;
        r.prefix.acquire(pool_.chain(id), 0, hit_blocks);
        q.prefix_pinned = static_cast<int>(hit_blocks);
      }
    }
    q.stage = Stage::prefilling;
    if (q.scheduled < 0) q.scheduled = t;
    r.prefilling.push_back(id);
    add_victim(r, id);
    budget -= chunk;
    r.step_chunks.emplace_back(id, chunk);
  }
}

// Prompts admitted earlier go on, chunk by chunk, in admission order.
void LlmStepExecution::continue_prefills(ReplicaState& r, double& budget, long long reserved) {
  for (int id : r.prefilling) {
    if (budget < 1) break;
    Request& q = pool_[id];
    double chunk = std::min(q.prefill_left, std::floor(budget));
    if (allocates_as_scheduled(r)) {
      // Blocks for the tokens scheduled now, as far as free blocks go.
      double done = q.prompt - q.prefill_left;
      long long free = r.kv.free_blocks() - reserved;
      chunk = std::min(chunk, r.kv.tokens_within(q.blocks + free) - done);
      if (chunk < 1) break;
      long long need = r.kv.blocks_for(done + chunk) - q.blocks;
      r.kv.allocate(need);
      q.blocks += need;
    }
    budget -= chunk;
    r.step_chunks.emplace_back(id, chunk);
  }
}

// Blocks the decoding sequences need for this step's tokens; preempts running requests in
// the scheduler's order until they fit. Returns the blocks to allocate.
long long LlmStepExecution::make_room_for_decodes(ReplicaState& r) {
  if (!r.scheduler->paged() || r.decoding_count == 0) return 0;
  long long new_blocks = r.kv.growing_at(r.decode_step);
  while (r.decoding_count > 0 && new_blocks > r.kv.free_blocks()) {
    int victim = next_victim(r);
    if (victim < 0) break;
    const Request& v = pool_[victim];
    if (v.stage == Stage::decoding) new_blocks -= r.kv.growth_at(r.decode_step, v.kv_growth);  // counted above
    preempt(r, victim);
  }
  return new_blocks;
}

// Swapped-out sequences come back, oldest first, while their blocks (and this step's token)
// fit above the watermark; they decode in this step. Returns their new blocks for the step.
long long LlmStepExecution::swap_in(ReplicaState& r) {
  const ReplicaConfig& c = *r.config;
  const long long max_sequences = std::max(1, c.max_batch);
  const long long watermark = watermark_blocks(r);
  const long long limit = r.kv.capacity_blocks() - watermark;
  long long pending = r.decoding_count > 0 ? r.kv.growing_at(r.decode_step) : 0;
  long long added = 0;
  while (!r.swapped.empty() && r.decoding_count + static_cast<long long>(r.prefilling.size()) < max_sequences) {
    int id = r.swapped.front();
    Request& q = pool_[id];
    long long held = r.kv.blocks_for(q.length);
    long long grow = r.kv.growth_of(q.length);
    if (held + grow > limit) {
      // Grew past what the cache can hold even alone: a server fails it; counted.
      r.swapped.pop_front();
      reject(id, r);
      continue;
    }
    if (pending + added + held + grow > r.kv.free_blocks() - watermark) break;
    r.swapped.pop_front();
    r.kv.allocate(held);
    swap_tokens_now_ += q.length;
    join_decoding(r, id, q.length);
    add_victim(r, id);
    added += grow;
  }
  return added;
}

// Blocks of the request's prompt its replica has cached from the first, leaving at least its
// last token to compute (vLLM recomputes a block rather than skip the whole prompt).
size_t LlmStepExecution::prefix_hit_blocks(const ReplicaState& r, int id) const {
  if (r.config->prefix_caching == PrefixCaching::off) return 0;
  const ChainView chain = pool_.chain(id);
  if (chain.empty()) return 0;
  return r.prefix.longest_hit(chain.data(), chain.size(), chain.blocks_within(pool_[id].prompt - 1));
}

// The request's chain blocks that end within its first `tokens` tokens join the replica's prefix
// cache, pinned while it runs: its prompt's when the prompt is computed, then, when it finishes,
// those its answer filled (a conversation's next turn carries this answer), as vLLM caches the
// blocks decoding fills.
void LlmStepExecution::cache_blocks_within(ReplicaState& r, int id, double tokens) {
  if (r.config->prefix_caching == PrefixCaching::off) return;
  const ChainView chain = pool_.chain(id);
  if (chain.empty()) return;
  Request& q = pool_[id];
  const size_t full = chain.blocks_within(tokens);
  const auto pinned = static_cast<size_t>(q.prefix_pinned);
  if (full <= pinned) return;
  r.prefix.acquire(chain, pinned, full);
  q.prefix_pinned = static_cast<int>(full);
}

// The request leaves the replica or its KV: its prefix blocks stay cached, unpinned.
void LlmStepExecution::release_prefix(ReplicaState& r, int id) {
  Request& q = pool_[id];
  if (q.prefix_pinned == 0) return;
  r.prefix.release(pool_.chain(id).data(), static_cast<size_t>(q.prefix_pinned));
  q.prefix_pinned = 0;
  if (!r.prefix.in_kv()) r.prefix.evict_to_own_room();
}

void LlmStepExecution::add_victim(ReplicaState& r, int id) {
  const Request& q = pool_[id];
  long long key = r.scheduler->preempts_latest_admitted() ? ++r.admissions : q.arrival_order;
  r.victims.push({key, id, q.version});
  const size_t running = static_cast<size_t>(r.decoding_count) + r.prefilling.size();
  if (r.victims.size() > 2 * running + 64) {
    // Drop entries of requests that finished or were preempted since.
    std::vector<VictimEntry> live;
    while (!r.victims.empty()) {
      VictimEntry e = r.victims.top();
      r.victims.pop();
      if (is_running(e)) live.push_back(e);
    }
    r.victims = std::priority_queue<VictimEntry>(std::less<VictimEntry>(), std::move(live));
  }
}

bool LlmStepExecution::is_running(const VictimEntry& e) const {
  const Request& q = pool_[e.id];
  return q.live && q.version == e.version && (q.stage == Stage::prefilling || q.stage == Stage::decoding);
}

int LlmStepExecution::next_victim(ReplicaState& r) {
  while (!r.victims.empty()) {
    VictimEntry e = r.victims.top();
    r.victims.pop();
    if (is_running(e) && pool_[e.id].replica == static_cast<int>(r.index)) return e.id;
  }
  return -1;
}

void LlmStepExecution::join_decoding(ReplicaState& r, int id, double length) {
  Request& q = pool_[id];
  q.stage = Stage::decoding;
  q.length = length;
  q.join_step = r.decode_step;
  q.generated_at_join = q.generated;
  if (r.scheduler->paged()) q.kv_growth = r.kv.join(q.join_step, length);
  r.decoding_count++;
  r.context_sum += length;
  r.decoding.push({r.decode_step + static_cast<long long>(q.output - q.generated), id, q.version});
}

// Takes a running request off the replica: its KV is dropped (recompute: prompt and generated
// tokens are prefilled again when it is readmitted, first in line) or moved to host (swap).
void LlmStepExecution::preempt(ReplicaState& r, int id) {
  Request& q = pool_[id];
  double tokens = 0;
  if (q.stage == Stage::decoding) {
    tokens = kv_tokens(r, q);
    q.generated = q.generated_at_join + static_cast<double>(r.decode_step - q.join_step);
    r.kv.leave(q.kv_growth);
    r.decoding_count--;
    r.context_sum -= tokens;
    r.kv.release(r.kv.blocks_for(tokens));
  } else {
    tokens = q.prompt - q.prefill_left;
    r.prefilling.erase(std::find(r.prefilling.begin(), r.prefilling.end(), id));
    r.kv.release(q.blocks);
  }
  release_prefix(r, id);
  q.version++;  // its heap entries are stale now
  q.blocks = 0;
  r.stats.preemptions++;
  preempted_now_ = true;
  if (r.config->preemption == Preemption::swap && q.stage == Stage::decoding) {
    q.length = tokens;
    q.stage = Stage::swapped;
    r.swapped.push_back(id);
    swap_tokens_now_ += tokens;
    r.stats.swapped_tokens += static_cast<long long>(tokens);
    return;
  }
  r.stats.recomputed_tokens += static_cast<long long>(tokens);
  q.prompt = q.input + q.generated;
  q.prefill_left = 0;
  q.length = 0;
  q.stage = Stage::queued;
  r.waiting.push_front(id);
}

void LlmStepExecution::reject(int id, ReplicaState& r) {
  ++rejections_;
  exits_.reject(id, r);
}

std::string LlmStepExecution::check(const std::vector<ReplicaState>& replicas, double tokens_finished) const {
  struct Held {
    long long blocks = 0, decoding = 0, prefilling = 0, prefix_pins = 0;
    double context = 0;
  };
  std::vector<Held> held(replicas.size());
  double generated = 0;
  for (size_t i = 0; i < pool_.size(); ++i) {
    const Request& q = pool_[static_cast<int>(i)];
    if (!q.live) continue;
    if (q.replica < 0) {
      generated += q.generated;  // a prompt's KV on its way to a decode replica (its first token emitted)
      if (q.held_on >= 0) held[static_cast<size_t>(q.held_on)].blocks += q.held_blocks;
      continue;
    }
    if (!is_llm(*replicas[static_cast<size_t>(q.replica)].config)) continue;
    if (q.held_on >= 0) held[static_cast<size_t>(q.held_on)].blocks += q.held_blocks;
    const auto& r = replicas[static_cast<size_t>(q.replica)];
    Held& h = held[static_cast<size_t>(q.replica)];
    double now = q.generated;
    h.prefix_pins += q.prefix_pinned;
    if (q.prefix_pinned > 0 && q.stage != Stage::prefilling && q.stage != Stage::decoding)
      return fmt::format("request {}: pins {} prefix blocks while not running", i, q.prefix_pinned);
    if (q.stage == Stage::prefilling) {
      ++h.prefilling;
      h.blocks += q.blocks;
      if (q.prompt != q.input + q.generated)
        return fmt::format("request {}: prompt {} is not input {} + generated {}", i, q.prompt, q.input, q.generated);
    } else if (q.stage == Stage::decoding) {
      ++h.decoding;
      double tokens = kv_tokens(r, q);
      h.blocks += r.scheduler->paged() ? r.kv.blocks_for(tokens) : q.blocks;
      h.context += tokens;
      now = q.generated_at_join + static_cast<double>(r.decode_step - q.join_step);
      if (tokens + 1 != q.input + now)
        return fmt::format("request {}: {} tokens in KV with {} input and {} generated", i, tokens, q.input, now);
    }
    if (now < 0 || now > q.output) return fmt::format("request {}: {} of {} tokens generated", i, now, q.output);
    generated += now;
  }
  for (size_t i = 0; i < replicas.size(); ++i) {
    const auto& r = replicas[i];
    const Held& h = held[i];
    if (!is_llm(*r.config)) continue;
    if (std::string wrong = r.prefix.check(); !wrong.empty()) return fmt::format("replica {}: {}", i, wrong);
    if (h.prefix_pins != r.prefix.pins())
      return fmt::format("replica {}: {} prefix pins in the cache, requests hold {}", i, r.prefix.pins(), h.prefix_pins);
    if (std::string wrong = r.kv.check(h.blocks); !wrong.empty()) return fmt::format("replica {}: {}", i, wrong);
    if (h.decoding != r.decoding_count || h.prefilling != static_cast<long long>(r.prefilling.size()))
      return fmt::format("replica {}: {} decoding and {} prefilling counted, {} and {} found", i, r.decoding_count,
                         r.prefilling.size(), h.decoding, h.prefilling);
    if (std::abs(h.context - r.context_sum) > 1e-6 * std::max(1.0, h.context))
      return fmt::format("replica {}: context {} counted, {} held", i, r.context_sum, h.context);
  }
  // Tokens are conserved across preemptions: what steps emitted is what requests have.
  if (std::abs(tokens_emitted_ - generated - tokens_finished) > 0.5)
    return fmt::format("steps emitted {} tokens; requests hold {} and finished ones took {}", tokens_emitted_, generated,
                       tokens_finished);
  return {};
}

}  // namespace gw::sim_detail
