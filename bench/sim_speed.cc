// Simulator speed and memory: LLM requests with continuous batching (vLLM v1, chunked prefill)
// over 8 replicas, on one core, with ample KV cache and with a cache cut to 1/6 so that
// requests are preempted all run long, and with prefix caching on prompts that share prefixes (a
// 500-token system prompt, conversations of 3 turns, each carrying the ones before). Prints
// requests simulated per second, preemptions and the peak resident set size, for 1M and 10M
// requests (argv[1] overrides the list; argv[2], 0-2, runs one of the three: ample, preempted,
// prefix-cached).
// Target: 1,000,000 requests in at most 2 seconds, under preemption and with prefix caching too.
#include <chrono>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <sys/resource.h>
#include <vector>

#include "catalog/catalog.h"
#include "model/memory.h"
#include "model/presets.h"
#include "perf/layer_operators.h"
#include "sim/simulator.h"

namespace {

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long long> counts = {1000000, 10000000};
  if (argc > 1) counts = {std::stoll(argv[1])};
  auto catalog = gw::Catalog::embedded().value();
  gw::ModelArch arch = gw::load_preset("llama-3.1-8b").value();
  gw::PerfSetup setup;
  setup.accelerator = catalog.find_accelerator("H100");
  setup.efficiency = gw::default_efficiency(*setup.accelerator);
  gw::use_layer_operators(setup, nullptr);  // as plans and simulate time their steps
  auto model = std::make_shared<gw::LlmStepModel>(arch, setup);
  gw::InferenceMemoryOptions memory;
  gw::MemoryEstimate e = gw::estimate_inference(arch, memory);
  double free = setup.accelerator->memory_bytes() * gw::kUsableMemoryFraction - e.weights_bytes - e.activation_bytes - e.overhead_bytes;
  std::vector<gw::ReplicaConfig> replicas(8);
  for (auto& c : replicas) {
    c.name = "H100";
    c.batching = gw::SimBatching::continuous;
    c.max_batch = 256;
    c.llm = model;
    c.kv_blocks = static_cast<long long>(free / (model->kv_bytes_per_token() * 16));
  }
  gw::ServiceSpec service;
  // The Azure conversation trace's shape: ~1,150 prompt and ~210 output tokens on average.
  service.input_tokens.sample = {200, 500, 800, 1000, 1200, 1500, 2000, 3000};
  service.output_tokens.sample = {40, 100, 150, 200, 250, 300, 350, 400};
  for (long long n : counts)
  for (int pressure : {0, 1, 2}) {
    if (argc > 2 && pressure != std::stoi(argv[2])) continue;
    for (auto& c : replicas)
      c.kv_blocks = static_cast<long long>(free / (model->kv_bytes_per_token() * 16)) / (pressure == 1 ? 8 : 1);
    gw::Rng rng(1);
    gw::ArrivalOptions arrivals;
    arrivals.rate_rps = 8 * 12.0;  // ~70% of 8 H100s' capacity for this mix
    service.traffic.prefix = {};
    if (pressure == 2) {
      service.traffic.prefix.system_prompt_tokens = 500;
      service.traffic.prefix.turns = 3;
      service.traffic.prefix.think_time_s = 20;
      arrivals.rate_rps = 8 * 6.0;  // prompts of ~2,900 tokens: stable, TTFT p99 0.56 s
    }
    auto process = gw::make_arrivals(arrivals, service, rng);
    gw::SimOptions options;
    options.max_requests = n;
    // Conversations follow their cached turns (SGLang's cache-aware policy) under prefix caching.
    options.router = pressure == 2 ? gw::Router::prefix_affinity : gw::Router::least_tokens;
    auto start = std::chrono::steady_clock::now();
    auto result = gw::simulate(*process, replicas, options);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!result.ok()) {
      fmt::print(stderr, "{}\n", result.error().to_string());
      return 1;
    }
    long long steps = 0;
    for (const auto& r : result.value().replicas) steps += r.steps;
    fmt::print("{:>10} LLM requests{}, 8 replicas, {} KV blocks each: {:.2f} s wall ({:.2f} M requests/s, {} steps, {} preemptions), "
               "peak in flight {}, peak RSS {:.1f} MiB; ttft p99 {:.3f} s, tpot p99 {:.1f} ms\n",
               result.value().requests,
               pressure == 2 ? fmt::format(" (prefix cache hit {:.1f}% of prompt tokens)", result.value().prefix_cache.hit_ratio_tokens * 100) : "",
               replicas[0].kv_blocks, seconds, result.value().requests / seconds / 1e6, steps,
               result.value().preemptions,
               result.value().peak_in_flight, peak_rss_kib() / 1024.0, result.value().ttft.quantile(0.99),
               result.value().tpot.quantile(0.99) * 1e3);
  }
  return 0;
}
