#include "fleet/colocated_pool.h"

#include <algorithm>
#include <deque>
#include <queue>

#include "core/histogram.h"

namespace gw {

namespace {

struct Request {
  int model = 0;
  double arrival_s = 0, first_token_s = -1;
  double input_tokens = 0, output_tokens = 1, generated = 0;
};

struct ModelOnGpu {
  std::deque<size_t> queue;       // requests waiting
  std::vector<size_t> running;    // LLM: sequences in the batch
  bool has_work() const { return !queue.empty() || !running.empty(); }
};

struct Gpu {
  std::vector<ModelOnGpu> models;
  size_t next_turn = 0;  // round robin among the models with work
  bool busy = false;
  double busy_s = 0;
  long long outstanding = 0;
  std::vector<size_t> in_step;  // classic: the batch being served
  int step_model = -1;
};

struct Event {
  double time_s;
  int kind;  // 0: a GPU's step ends, 1: an arrival
  size_t index;  // GPU or request
  bool operator>(const Event& o) const {
    return time_s != o.time_s ? time_s > o.time_s : kind != o.kind ? kind > o.kind : index > o.index;
  }
};

}  // namespace

bool ColocatedResult::all_met() const {
  return std::all_of(models.begin(), models.end(), [](const ColocatedModelResult& m) { return m.slo_met; });
}

Result<ColocatedResult> simulate_colocated(const std::vector<ColocatedModel>& models, int gpus, long long requests,
                                           uint64_t seed) {
  if (gpus < 1) return Error{"", 0, "gpus", "a pool needs at least one GPU"};
  double total_rate = 0;
  for (const auto& m : models) {
    if (!m.replica.batch_time && !m.replica.llm)
      return Error{"", 0, m.service, "no step time for this model on the pool's accelerator"};
    total_rate += m.rate_rps;
  }
  ColocatedResult result;
  result.gpus = gpus;
  if (total_rate <= 0 || requests <= 0) return result;
  const double duration_s = static_cast<double>(requests) / total_rate;
  result.duration_s = duration_s;

  // Every model's arrivals over the same span, drawn from its own seeded stream.
  std::vector<Request> all;
  for (size_t m = 0; m < models.size(); ++m) {
    if (models[m].rate_rps <= 0) continue;
    Rng rng(seed + 7919 * (m + 1));
    ArrivalOptions options;
    options.process = "poisson";
    options.rate_rps = models[m].rate_rps;
    auto process = make_arrivals(options, *models[m].spec, rng);
    while (auto a = process->next()) {
      if (a->time_s > duration_s) break;
      Request r;
      r.model = static_cast<int>(m);
      r.arrival_s = a->time_s;
      r.input_tokens = std::max(1.0, a->input_tokens);
      r.output_tokens = std::max(1.0, a->output_tokens);
      all.push_back(r);
    }
  }
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  for (size_t i = 0; i < all.size(); ++i) events.push({all[i].arrival_s, 1, i});

  std::vector<Gpu> pool(static_cast<size_t>(gpus));
  for (auto& g : pool) g.models.resize(models.size());
  std::vector<LogHistogram> latency(models.size()), ttft(models.size()), tpot(models.size());
  std::vector<long long> served(models.size(), 0);
  Rng service_rng(seed);

  auto finish = [&](size_t id, double now) {
    Request& r = all[id];
    latency[static_cast<size_t>(r.model)].add(now - r.arrival_s);
    if (models[static_cast<size_t>(r.model)].replica.llm && r.output_tokens > 1)
      tpot[static_cast<size_t>(r.model)].add((now - r.first_token_s) / (r.output_tokens - 1));
    ++served[static_cast<size_t>(r.model)];
  };
  // Starts the GPU's next step: the next model in turn that has work.
  auto start_step = [&](size_t gi, double now) {
    Gpu& g = pool[gi];
    for (size_t k = 0; k < models.size(); ++k) {
      size_t m = (g.next_turn + k) % models.size();
      ModelOnGpu& s = g.models[m];
      if (!s.has_work()) continue;
      g.next_turn = (m + 1) % models.size();
      const ReplicaConfig& rc = models[m].replica;
      double step_s = 0;
      g.in_step.clear();
      if (rc.llm) {
        // Admit waiting prompts into the batch within the step's token budget, then one step:
        // the running sequences decode a token, the admitted prompts prefill whole.
        double prefill_tokens = 0, attended = 0, context_sum = 0;
        for (size_t id : s.running) context_sum += all[id].input_tokens + all[id].generated;
        const double decoding = static_cast<double>(s.running.size());
        while (!s.queue.empty() && static_cast<int>(s.running.size() + g.in_step.size()) < rc.max_batch) {
          const Request& r = all[s.queue.front()];
          if (prefill_tokens > 0 && prefill_tokens + r.input_tokens > rc.token_budget) break;
          prefill_tokens += r.input_tokens;
          attended += r.input_tokens * r.input_tokens / 2;
          g.in_step.push_back(s.queue.front());
          s.queue.pop_front();
        }
        step_s = rc.llm->step_time_s(decoding, context_sum, prefill_tokens, attended,
                                     decoding + static_cast<double>(g.in_step.size()));
      } else {
        int batch = std::min<int>(static_cast<int>(s.queue.size()), std::max(1, rc.max_batch));
        for (int b = 0; b < batch; ++b) {
          g.in_step.push_back(s.queue.front());
          s.queue.pop_front();
        }
        step_s = rc.batch_time(batch, service_rng);
      }
      g.busy = true;
      g.step_model = static_cast<int>(m);
      g.busy_s += step_s;
      events.push({now + step_s, 0, gi});
      return;
    }
    g.busy = false;
  };

  while (!events.empty()) {
    Event e = events.top();
    events.pop();
    const double now = e.time_s;
    if (e.kind == 1) {
      Request& r = all[e.index];
      size_t best = 0;
      for (size_t gi = 1; gi < pool.size(); ++gi)
        if (pool[gi].outstanding < pool[best].outstanding) best = gi;
      pool[best].models[static_cast<size_t>(r.model)].queue.push_back(e.index);
      ++pool[best].outstanding;
      if (!pool[best].busy) start_step(best, now);
      continue;
    }
    Gpu& g = pool[e.index];
    const size_t m = static_cast<size_t>(g.step_model);
    ModelOnGpu& s = g.models[m];
    if (models[m].replica.llm) {
      // Running sequences produced a token; the admitted prompts their first.
      std::vector<size_t> still;
      for (size_t id : s.running) {
        Request& r = all[id];
        r.generated += 1;
        if (r.generated >= r.output_tokens) {
          finish(id, now);
          --g.outstanding;
        } else {
          still.push_back(id);
        }
      }
      for (size_t id : g.in_step) {
        Request& r = all[id];
        r.first_token_s = now;
        r.generated = 1;
        ttft[m].add(now - r.arrival_s);
        if (r.generated >= r.output_tokens) {
          finish(id, now);
          --g.outstanding;
        } else {
          still.push_back(id);
        }
      }
      s.running = std::move(still);
    } else {
      for (size_t id : g.in_step) {
        finish(id, now);
        --g.outstanding;
      }
    }
    g.in_step.clear();
    start_step(e.index, now);
  }

  const double span = std::max(duration_s, 1e-9);
  for (const auto& g : pool) result.gpu_busy_fraction.push_back(std::min(1.0, g.busy_s / span));
  for (size_t m = 0; m < models.size(); ++m) {
    ColocatedModelResult r;
    r.service = models[m].service;
    r.requests = served[m];
    r.latency_p99_s = latency[m].quantile(0.99);
    r.ttft_p99_s = ttft[m].quantile(0.99);
    r.tpot_p99_s = tpot[m].quantile(0.99);
    const Slo& slo = models[m].spec->slo;
    double worst_ratio = -1;
    auto check = [&](const std::optional<double>& target, double simulated, const char* metric) {
      if (!target || *target <= 0) return;
      if (simulated > *target) r.slo_met = false;
      double ratio = simulated / *target;
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        r.binding_metric = metric;
        r.binding_target_s = *target;
        r.binding_simulated_s = simulated;
      }
    };
    const bool llm = static_cast<bool>(models[m].replica.llm);
    if (llm) {
      check(slo.ttft_p99_s, r.ttft_p99_s, "ttft_p99");
      check(slo.tpot_p99_s, r.tpot_p99_s, "tpot_p99");
      check(slo.e2e_p99_s, r.latency_p99_s, "e2e_p99");
      check(slo.latency_p99_s, r.latency_p99_s, "latency_p99");
    } else {
      check(slo.latency_p99_s, r.latency_p99_s, "latency_p99");
    }
    result.models.push_back(r);
  }
  return result;
}

}  // namespace gw
