#include "plan/service_level.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "model/memory.h"
#include "perf/step_time.h"
#include "perf/throughput.h"
#include "plan/queueing.h"

namespace gw {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

ServiceLevel classic_level(const ModelSpec& model, const ServiceSpec& service, const Configuration& config,
                           int replicas, double rate, const PlannerOptions& options) {
  ServiceLevel level;
  const ModelArch& arch = model.arch;
  PerfSetup setup = screen_setup(config, model.precision, model.weight_format, options);
  double tokens = service.input_tokens.mean();
  if (!model.measured) {
    // Weights and the activations of a full batch must fit on the device.
    InferenceMemoryOptions memory;
    memory.weight_precision = model.precision;
    memory.weight_format = model.weight_format;
    memory.tensor_parallel = config.tensor_parallel;
    memory.batch = config.max_batch;
    memory.context = std::max(1.0, tokens);
    memory.overhead_gib = options.overhead_gib;
    if (estimate_inference(arch, memory).total_bytes_per_device >
        config.accelerator->memory_bytes() * options.usable_fraction) {
      level.binding = "memory: weights and a full batch do not fit";
      return level;
    }
  }
  auto service_time = [&](double b) {
    if (model.measured) return model.measured->at(std::max(1.0, b));
    return item_step(arch, setup, std::max(1.0, b), tokens).time_s;
  };
  double per_replica = rate / replicas;
  if (config.batching == Batching::none) {
    double s = service_time(1);
    level.batch = 1;
    level.capacity_rps = 1.0 / s;
    level.utilization = rate * s / replicas;
    double wait99 = mgc_wait_quantile(replicas, rate, s, 0.0, 0.99);
    double wait50 = mgc_wait_quantile(replicas, rate, s, 0.0, 0.50);
    level.latency_p99_s = s + wait99;
    level.latency_p50_s = s + wait50;
    level.feasible = std::isfinite(level.latency_p99_s);
    if (!level.feasible) level.binding = "overloaded";
    return level;
  }
  // Dynamic batching (zero queue delay): each pass takes what has queued, up to max_batch.
  // Capacity is max_batch / S(max_batch). Under load the server runs back to back and the batch
  // settles where it equals the arrivals during one pass: b = rate x S(b).
  double max_batch = config.max_batch;
  level.capacity_rps = max_batch / service_time(max_batch);
  level.utilization = per_replica / level.capacity_rps;
  if (per_replica >= level.capacity_rps) {
    level.binding = "overloaded";
    level.latency_p99_s = level.latency_p50_s = kInfinity;
    return level;
  }
  double light = per_replica * service_time(1);  // busy fraction if every pass held one request
  if (light < 1.0) {
    // Light load: a request finds the server idle, or waits for the pass in progress.
    double b = 1.0 + per_replica * service_time(1) / 2;
    double s = service_time(b);
    level.batch = b;
    level.latency_p99_s = s + service_time(1) * std::max(0.0, 1.0 - 0.01 / light);
    level.latency_p50_s = s + service_time(1) * std::max(0.0, 1.0 - 0.50 / light);
  } else {
    double b = 1;
    for (int i = 0; i < 200; ++i) b = std::clamp(per_replica * service_time(b), 1.0, max_batch);
    double s = service_time(b);
    level.batch = b;
    // Wait for the pass in progress (uniform residual), then one's own pass; when the mean batch
    // nears max_batch, Poisson bursts leave requests for later passes (Kingman at the batch
    // level, cv^2 of batch arrivals 1/max_batch, deterministic service, exponential tail).
    double rho = std::min(0.999, b / max_batch);
    double queue_mean = service_time(max_batch) * rho / (1.0 - rho) * (1.0 / max_batch) / 2.0;
    level.latency_p99_s = s + 0.99 * s + queue_mean * std::log(100.0);
    level.latency_p50_s = s + 0.50 * s + queue_mean * std::log(2.0);
  }
  level.feasible = true;
  return level;
}

// TPOT p99 (per request: its decode time over its output - 1 steps, as vLLM's benchmark reports
// it). A request's m steps take m d, d the decode step at the batch, plus the prefill of every
// prompt that arrives before they end, chunked into the steps between: the busy period that m d
// of work starts in an M/G/1 queue of prompts (Takacs), of mean m d / (1 - rho) and variance
// m d lambda E[S^2] / (1 - rho)^3, rho = lambda E[S], S a prompt's prefill time. Per token the
// mean is d / (1 - rho) (what the prompts leave of the time: the prefill chunks are counted whole,
// as they run) and the variance falls as 1/m, so short answers and long prompts make the tail.
// The router deals the requests out, so a replica's arrivals are at most as bursty as round
// robin leaves them (Erlang interarrivals: squared coefficient of variation 1 / replicas), and
// a pipeline's lanes each wait for every lane's prompt chunks (a micro-batch carrying one holds
// the others at every stage). step(n, prefill tokens): a step of n decodes and one chunk.
template <typename Step>
double decode_window_tpot_p99(const RequestLengths& lengths, int lanes_in_all, int lanes, double rate, double output,
                              double batch_cap, double chunk_budget, double computed, double input, Step step) {
  const double stalling_rate = rate * lanes;  // prompts per second into the lane's replica
  // The time per token tau solves tau = d(n) / (1 - rho(n)) at n = rate x output x tau sequences
  // (capped by the batch): by secant steps from the decode step alone, a few evaluations where a
  // damped iteration took dozens.
  const double chunk = std::max(1.0, std::min(chunk_budget, computed));
  double per_token = 0, rho = 0, decode = 0;
  auto per_token_time = [&](double tau) {
    const double n = std::min(batch_cap, rate * output * tau);
    decode = step(n, 0);
    per_token = std::max(0.0, step(n, chunk) - decode) / chunk;
    rho = stalling_rate * per_token * computed;
    return rho < 1 ? decode / (1 - rho) : kInfinity;
  };
  double x0 = step(1, 0), g0 = per_token_time(x0);
  if (!std::isfinite(g0)) return kInfinity;
  double x1 = g0, g1 = per_token_time(x1);
  for (int i = 0; i < 60 && std::isfinite(g1) && std::fabs(g1 - x1) > 1e-7 * x1; ++i) {
    const double f0 = g0 - x0, f1 = g1 - x1;
    double next = f1 != f0 ? x1 - f1 * (x1 - x0) / (f1 - f0) : g1;
    if (!(next > 0) || !std::isfinite(next)) next = 0.5 * (x1 + g1);  // a damped step where the secant strays
    x0 = x1, g0 = g1;
    x1 = next, g1 = per_token_time(x1);
  }
  if (!std::isfinite(g1)) return kInfinity;
  per_token_time(x1);  // the batch, decode step and rho at the solution
  // A prompt's prefill time: its first two moments, by what prefill computes of it.
  const double computed_share = input > 0 ? computed / input : 1;
  const double service_mean = per_token * computed;
  const double prompt_squared = lengths.prompt_tokens_squared > 0 ? lengths.prompt_tokens_squared : lengths.mean_input_squared;
  const double service_squared = per_token * per_token * prompt_squared * computed_share * computed_share;
  const double arrivals_cv2 = static_cast<double>(lanes) / std::max(1, lanes_in_all);
  // The work arriving in a window varies with the prompts' count (as bursty as the arrivals)
  // and with their sizes.
  const double work_variance = std::max(0.0, service_squared - (1 - arrivals_cv2) * service_mean * service_mean);
  const double unit_variance = decode * stalling_rate * work_variance / std::pow(1 - rho, 3);
  const std::vector<double> mean_answer = {std::max(1.0, output - 1)};
  return gamma_mixture_quantile(lengths.answer_gaps.empty() ? mean_answer : lengths.answer_gaps, decode / (1 - rho), unit_variance, 0.99);
}

// One lane's level (a replica's, without pipeline stages): `replicas` lanes in all, `free`
// bytes of KV cache each.
ServiceLevel llm_lane_level(const ModelArch& arch, const ServiceSpec& service, const ScreenEngine& engine, const RequestLengths& lengths,
                            int replicas, double rate, const PlannerOptions& options, const PerfSetup& setup, double free,
                            double kv_per_token, int max_batch, Batching batching, int lanes) {
  ServiceLevel level;
  const double input = service.input_tokens.mean(), output = std::max(1.0, service.output_tokens.mean());
  const double input99 = service.input_tokens.quantile(0.99), output99 = std::max(1.0, service.output_tokens.quantile(0.99));
  // What prefill computes: the prompt less what the prefix cache holds.
  const double computed = engine.computed_mean(replicas, true), computed99 = engine.computed_quantile(0.99, replicas, true);
  const double per_replica = rate / replicas;
  auto step = [&](double n, double context, double prefill, double prompts, double prompt_context) {
    return screen_step_s(engine, arch, setup, n, context, prefill, prompts, prompt_context);
  };

  if (batching == Batching::none) {
    // One request at a time per replica: M/G/c over the replicas.
    double prefill = step(0, 0, computed, 1, input);
    double decode = step(1, input + output / 2, 0, 0, 0);
    double s = prefill + output * decode;
    double kv_needed = kv_per_token * engine.kv_tokens(arch, *setup.accelerator, input99 + output99);
    if (kv_needed > free) {
      level.binding = "KV cache too small for one p99 request";
      return level;
    }
    level.batch = 1;
    level.capacity_rps = 1.0 / s;
    level.utilization = per_replica * s;
    double wait99 = mgc_wait_quantile(replicas, rate, s, 1.0, 0.99);
    level.ttft_p99_s = wait99 + step(0, 0, computed99, 1, input99);
    level.tpot_p99_s = step(1, input99 + output99, 0, 0, 0);
    level.latency_p99_s = level.ttft_p99_s + output99 * level.tpot_p99_s;
    level.latency_p50_s = prefill + output * decode + mgc_wait_quantile(replicas, rate, s, 1.0, 0.5);
    level.feasible = std::isfinite(level.latency_p99_s);
    if (!level.feasible) level.binding = "overloaded";
    return level;
  }

  // Continuous batching with chunked prefill: the batch is limited by the KV cache and by
  // max_batch. Capacity is the steady-state throughput at that batch.
  if (kv_per_token * engine.kv_tokens(arch, *setup.accelerator, input99 + output99) > free) {
    level.binding = "KV cache cannot hold one p99 request";
    return level;
  }
  const double slot_context = lengths.slot_context_tokens(), prompt_context = lengths.prefill_context_tokens();
  // Each slot reserves its request's tokens (a sliding window's layers only the window's), and
  // under speculative decoding its k lookahead slots.
  double kv_batch =
      std::floor(free / (kv_per_token * engine.kv_tokens(arch, *setup.accelerator, lengths.slot_reserved_tokens() + engine.lookahead_tokens())));
  double batch_cap = std::min<double>(kv_batch, max_batch);
  if (batch_cap < 1) {
    level.binding = "KV cache too small for one request";
    return level;
  }
  // At the largest batch the cache holds: each step decodes batch_cap sequences and prefills
  // the computed prompts of the requests that replace finished ones.
  level.capacity_rps =
      engine.speculative || computed < input
          ? batch_cap / output / std::max(1e-12, step(batch_cap, slot_context, batch_cap / output * computed, batch_cap / output, prompt_context))
          : continuous_max_throughput(arch, setup, kv_per_token, free, lengths, batch_cap).requests_per_s;
  level.utilization = per_replica / std::max(1e-12, level.capacity_rps);
  if (per_replica >= level.capacity_rps) {
    level.binding = "overloaded";
    level.ttft_p99_s = level.tpot_p99_s = level.latency_p99_s = kInfinity;
    return level;
  }
  // Steady state at this rate: the step time tau solves tau = step(n = rate x output x tau
  // sequences decoding, rate x input x tau prompt tokens).
  const double chunk = options.prefill_chunk_tokens;
  double tau = step(1, input, 0, 0, 0);
  for (int i = 0; i < 200; ++i) {
    double n = std::min(batch_cap, per_replica * output * tau);
    double admitted = per_replica * tau;
    double next = step(n, slot_context, admitted * computed, admitted, prompt_context);
    if (std::fabs(next - tau) < 1e-9) break;
    tau = 0.5 * tau + 0.5 * next;
  }
  double sequences = per_replica * output * tau;
  level.batch = sequences;
  // Steps with a burst of new prompts are slower: p99 arrivals per step, their prompts chunked.
  double arrivals99 = poisson_quantile(per_replica * tau, 0.99);
  double budget = std::max(1.0, chunk - sequences);
  double prefill99 = std::min(budget, arrivals99 * computed);
  double step99 = step(sequences, slot_context, prefill99, std::min(arrivals99, 1.0 + arrivals99), prompt_context);
  level.tpot_p99_s = decode_window_tpot_p99(lengths, replicas, lanes, per_replica, output, batch_cap, std::max(1.0, chunk - sequences),
                                            computed, input, [&](double n, double prefill) {
                                              return step(n, slot_context, prefill, prefill > 0 ? 1 : 0, prompt_context);
                                            });
  // A p99 prompt is prefilled in chunks of the free token budget, one chunk per step; it may
  // first wait for the step in progress and, near the KV limit, for a free slot.
  double chunks = std::ceil(computed99 / budget);
  double chunk_step = step(sequences, slot_context, std::min(budget, computed99), 1, input99);
  double slot_wait = mgc_wait_quantile(static_cast<int>(batch_cap), per_replica, output * tau, 1.0, 0.99);
  level.ttft_p99_s = tau + chunks * chunk_step + (std::isfinite(slot_wait) ? slot_wait : kInfinity);
  level.latency_p99_s = level.ttft_p99_s + output99 * step99;
  level.latency_p50_s = tau + std::ceil(engine.computed_quantile(0.5, replicas, true) / budget) * chunk_step +
                        service.output_tokens.quantile(0.5) * tau;
  level.feasible = std::isfinite(level.latency_p99_s);
  if (!level.feasible) level.binding = "overloaded";
  return level;
}

// lengths: service_lengths(service), worked out once per search. The service's prompts are
// what the replicas hold (screen_service widens them by traffic.prefix); engine says what of
// them prefill computes and how the engine decodes.
ServiceLevel llm_level(const ModelArch& arch, Precision precision, WeightFormat format, const ServiceSpec& service, const ScreenEngine& engine,
                       const RequestLengths& lengths, const Configuration& config, int replicas, double rate,
                       const PlannerOptions& options) {
  // A replica across nodes runs one micro-batch per stage at once, each through every stage in
  // turn (vLLM's virtual engines, as the simulator's lanes): each lane serves as a replica of
  // the whole model's step with its share of the KV cache.
  const int lanes = std::max(1, config.pipeline_parallel);
  double kv_per_token = 0;
  const double free = screen_kv_free_bytes(arch, precision, format, config, options, engine, kv_per_token) / lanes;
  if (free <= 0) {
    ServiceLevel level;
    level.binding = "weights do not fit";
    return level;
  }
  ServiceLevel level = llm_lane_level(arch, service, engine, lengths, replicas * lanes, rate, options,
                                      screen_setup(config, precision, format, options), free, kv_per_token, config.max_batch, config.batching, lanes);
  level.capacity_rps *= lanes;  // per replica: all its lanes
  return level;
}
}  // namespace

RequestLengths service_lengths(const ServiceSpec& service) {
  std::vector<std::pair<double, double>> pairs = trace_request_pairs(service);
  RequestLengths lengths = pairs.empty() ? RequestLengths::fixed(service.input_tokens.mean(), std::max(1.0, service.output_tokens.mean()))
                                         : RequestLengths::from_pairs(pairs);
  std::vector<double> outputs;
  for (const auto& pair : pairs) outputs.push_back(pair.second);
  if (outputs.empty()) outputs = service.output_tokens.sample;
  if (!outputs.empty()) lengths.tpot_p99_excess_share = mean_gap_excess_share(outputs, 0.99);
  lengths.answer_gaps = answer_gap_sample(outputs, 32);
  lengths.prompt_tokens_squared = lengths.mean_input_squared;
  if (pairs.empty() && !service.input_tokens.sample.empty()) {
    lengths.prompt_tokens_squared = 0;
    for (double x : service.input_tokens.sample)
      lengths.prompt_tokens_squared += x * x / static_cast<double>(service.input_tokens.sample.size());
  }
  return lengths;
}

ServiceLevel evaluate_with(const ModelSpec& model, const ServiceSpec& service, const ScreenEngine& engine, const RequestLengths& lengths,
                           const Configuration& config, int replicas, double rate_rps, const PlannerOptions& options) {
  if (model.arch.kind == ModelKind::decoder)
    return llm_level(model.arch, model.precision, model.weight_format, service, engine, lengths, config, replicas, rate_rps, options);
  return classic_level(model, service, config, replicas, rate_rps, options);
}


std::vector<std::pair<double, double>> trace_request_pairs(const ServiceSpec& service) {
  std::vector<std::pair<double, double>> pairs;
  const auto& trace = service.traffic.trace;
  if (!trace || trace->input_sample.size() != trace->output_sample.size()) return pairs;
  pairs.reserve(trace->input_sample.size());
  for (size_t i = 0; i < trace->input_sample.size(); ++i) pairs.emplace_back(trace->input_sample[i], trace->output_sample[i]);
  return pairs;
}

ServiceLevel evaluate_service(const ModelSpec& model, const ServiceSpec& service, const Configuration& config,
                              int replicas, double rate_rps, const PlannerOptions& options) {
  auto screened = screen_service(service);
  if (!screened.ok()) {
    ServiceLevel level;
    level.binding = screened.error().message;
    return level;
  }
  const ScreenedService& s = screened.value();
  return evaluate_with(model, s.service, s.engine, service_lengths(s.service), config, replicas, rate_rps, options);
}

bool meets_slo(const ServiceLevel& level, const Slo& slo, double max_utilization, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (!level.feasible) return fail(level.binding.empty() ? "infeasible" : level.binding);
  if (level.utilization > max_utilization + 1e-12)
    return fail(fmt::format("utilization {:.0f}% above the {:.0f}% limit", level.utilization * 100, max_utilization * 100));
  if (slo.ttft_p99_s && level.ttft_p99_s > *slo.ttft_p99_s) return fail("ttft_p99_s");
  if (slo.tpot_p99_s && level.tpot_p99_s > *slo.tpot_p99_s) return fail("tpot_p99_s");
  if (slo.e2e_p99_s && level.latency_p99_s > *slo.e2e_p99_s) return fail("e2e_p99_s");
  if (slo.latency_p99_s && level.latency_p99_s > *slo.latency_p99_s) return fail("latency_p99_s");
  if (slo.latency_p50_s && level.latency_p50_s > *slo.latency_p50_s) return fail("latency_p50_s");
  return true;
}

}  // namespace gw
