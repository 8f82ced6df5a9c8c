#include "plan/inference.h"

#include <cmath>
#include <fmt/format.h>
#include <algorithm>
#include <gtest/gtest.h>
#include <random>
#include <set>

#include "core/text.h"
#include "model/presets.h"
#include "plan/verify.h"

namespace gw {
namespace {

// A random small catalog: a few accelerators with random memory, bandwidth and peak, each with
// a few offerings of random size and price in random clouds and regions.
Catalog random_catalog(std::mt19937_64& random) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::string accelerators = "name,vendor,memory_gib,memory_gb_per_s,bf16_tflops,fp8_tflops,int8_tops,interconnect_gb_per_s,pcie_gen,class,source,as_of\n";
  std::string offerings = "cloud,region,zone,instance_type,accelerator,accelerator_count,on_demand_usd_per_hour,spot_usd_per_hour,source,as_of\n";
  int count = 2 + static_cast<int>(unit(random) * 3);
  for (int a = 0; a < count; ++a) {
    double memory = std::vector<double>{16, 24, 48, 80, 141}[static_cast<size_t>(unit(random) * 5)];
    double bandwidth = 300 + unit(random) * 4000;
    double bf16 = 50 + unit(random) * 1000;
    accelerators += fmt::format("X{},nvidia,{},{:.0f},{:.0f},{:.0f},{:.0f},{},{},both,test,2026-11-30\n", a, memory,
                                bandwidth, bf16, bf16 * 2, bf16 * 2, unit(random) < 0.5 ? 0 : 900, 4);
    int n = 1 + static_cast<int>(unit(random) * 3);
    for (int o = 0; o < n; ++o) {
      int gpus = std::vector<int>{1, 2, 4, 8}[static_cast<size_t>(unit(random) * 4)];
      double price = gpus * (0.2 + unit(random) * 4);
      offerings += fmt::format("{},{},,t{}-{},X{},{},{:.3f},{:.3f},test,2026-11-30\n", unit(random) < 0.5 ? "aws" : "gcp",
                               unit(random) < 0.5 ? "us-east-1" : "europe-west4", a, o, a, gpus, price, price * 0.4);
    }
  }
  Catalog catalog;
  EXPECT_FALSE(catalog.add_accelerators_csv(accelerators, "acc.csv").has_value());
  EXPECT_FALSE(catalog.add_offerings_csv(offerings, "off.csv").has_value());
  return catalog;
}

Spec random_spec(std::mt19937_64& random, bool llm) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::string text;
  if (llm) {
    text = fmt::format(R"(
constraints: {{pricing: [on-demand, spot], headroom: {:.2f}}}
models:
  m: {{preset: {}, precision: bf16}}
services:
  - name: s
    model: m
    traffic: {{rps: {{average: 1, peak: {:.2f}}}}}
    tokens: {{input: {{mean: {:.0f}, p99: {:.0f}}}, output: {:.0f}}}
    slo: {{ttft_p99_s: {:.3f}, tpot_p99_s: {:.3f}}}
)", 0.1 + unit(random) * 0.3, unit(random) < 0.5 ? "llama-3.2-1b" : "gpt2", 1 + unit(random) * 20,
                       200 + unit(random) * 400, 1000 + unit(random) * 800, 50 + unit(random) * 200,
                       std::pow(10.0, unit(random) * 2 - 2), std::pow(10.0, unit(random) * 1.5 - 2.5));
  } else {
    text = fmt::format(R"(
constraints: {{pricing: [on-demand], headroom: {:.2f}}}
models:
  m: {{params: {:.3g}, flops_per_item: {:.3g}, bytes_per_item: 1e6, precision: fp16}}
services:
  - name: s
    model: m
    traffic: {{rps: {:.1f}}}
    slo: {{latency_p99_s: {:.4f}}}
)", 0.1 + unit(random) * 0.3, 1e7 + unit(random) * 5e8, 1e9 + unit(random) * 2e11, 5 + unit(random) * 3000,
                       std::pow(10.0, unit(random) * 3 - 3.5));
  }
  auto spec = parse_spec(text, "random.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().to_string() << "\n" << text;
  return spec.value();
}

// Brute force: every configuration, every replica count up to a bound, every offering and pricing.
std::optional<double> brute_force_cost(const Catalog& catalog, const Spec& spec, const PlannerOptions& options,
                                       int max_replicas) {
  const ServiceSpec& service = spec.services[0];
  const ModelSpec& model = spec.models.at(service.model_key);
  bool llm = model.arch.kind == ModelKind::decoder;
  std::optional<double> best;
  for (const Accelerator* accelerator : allowed_accelerators(catalog, spec.constraints)) {
    for (int tp : {1, 2, 4, 8}) {
      if (model.arch.kind != ModelKind::generic && model.arch.num_heads % tp != 0) continue;
      if (model.arch.kind == ModelKind::generic && tp > 1) continue;
      for (Batching batching : {Batching::none, llm ? Batching::continuous : Batching::dynamic}) {
        std::vector<int> limits = batching == Batching::none ? std::vector<int>{1}
                                  : llm ? std::vector<int>{256}
                                        : std::vector<int>{2, 4, 8, 16, 32, 64, 128, 256};
        for (int limit : limits) {
          Configuration config{accelerator, tp, batching, limit};
          for (int replicas = 1; replicas <= max_replicas; ++replicas) {
            ServiceLevel level = evaluate_service(model, service, config, replicas, service.traffic.peak_rps, options);
            if (!meets_slo(level, service.slo, spec.constraints.max_utilization, nullptr)) continue;
            for (const Offering* offering : allowed_offerings(catalog, spec.constraints, *accelerator, tp)) {
              int per_instance = offering->accelerator_count / tp;
              // Availability: at least min_replicas nodes, each holding a replica.
              int instances = std::max((replicas + per_instance - 1) / per_instance, service.min_replicas);
              for (Pricing pricing : spec.constraints.pricing) {
                if (pricing == Pricing::spot && !service.interruptible) continue;  // real-time: on demand
                auto price = offering->usd_per_hour(pricing);
                if (price && (!best || *price * instances < *best)) best = *price * instances;
              }
            }
            break;  // more replicas of the same configuration only cost more
          }
        }
      }
    }
  }
  return best;
}

TEST(InferencePlanner, IsTheTrueCostMinimumOnRandomCatalogs) {
  std::mt19937_64 random(20261130);
  PlannerOptions options;
  options.max_replicas = 1500;
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < 60; ++trial) {
    bool llm = trial % 2 == 1;
    Catalog catalog = random_catalog(random);
    Spec spec = random_spec(random, llm);
    ServicePlan plan = plan_service(catalog, spec, spec.services[0], options);
    auto brute = brute_force_cost(catalog, spec, options, options.max_replicas);
    ASSERT_EQ(plan.best.has_value(), brute.has_value()) << "trial " << trial << ": " << plan.binding;
    if (brute) {
      EXPECT_NEAR(plan.best->usd_per_hour, *brute, 1e-9) << "trial " << trial;
      ++feasible;
    } else {
      EXPECT_FALSE(plan.binding.empty());
      ++infeasible;
    }
  }
  // The random cases exercise both outcomes.
  EXPECT_GT(feasible, 20);
  EXPECT_GT(infeasible, 0);
}

TEST(InferencePlanner, BatchingBeatsOneRequestPerPassAtHighRates) {
  auto spec = parse_spec(R"(
constraints: {clouds: [aws], pricing: [on-demand], headroom: 0.2}
models:
  m: {params: 110e6, service_time: {accelerator: T4, batch_ms: {1: 50, 16: 70, 64: 140, 256: 480}}}
services:
  - {name: spam, model: m, traffic: {rps: 3000}, slo: {latency_p99_s: 0.5}}
)", "spam.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  ServicePlan plan = plan_service(catalog, spec.value(), spec.value().services[0], PlannerOptions{});
  ASSERT_TRUE(plan.best && plan.no_batching);
  // Little's law: 3,000/s x 50 ms = 150 busy GPUs; at most 80% busy: 188.
  EXPECT_EQ(plan.no_batching->replicas, 188);
  EXPECT_LT(plan.best->replicas, 20);
  EXPECT_EQ(plan.best->config.batching, Batching::dynamic);
}

TEST(InferencePlanner, SeventyBillionNeedsTensorParallelism) {
  auto spec = parse_spec(R"(
constraints: {pricing: [on-demand], accelerators: [H100, H200, A100-80GB, L40S]}
models: {big: {preset: llama-3.1-70b, precision: bf16}}
services:
  - name: a
    model: big
    traffic: {rps: 2}
    tokens: {input: 1500, output: 300}
    slo: {ttft_p99_s: 3, tpot_p99_s: 0.1}
)", "big.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  ServicePlan plan = plan_service(catalog, spec.value(), spec.value().services[0], PlannerOptions{});
  ASSERT_TRUE(plan.best.has_value()) << plan.binding;
  EXPECT_GE(plan.best->config.tensor_parallel, 2);  // 141 GB of weights fit none of these alone
}

// A trace's requests vary in length: its own (input, output) pairs, not one mean-length request,
// size the continuous batch. Half short and half long answers hold the slots mostly with long
// ones, so each slot reserves more KV cache and fewer sequences fit than at the means.
TEST(InferencePlanner, ContinuousBatchingTakesATracesOwnLengths) {
  auto spec = parse_spec(R"(
constraints: {pricing: [on-demand], accelerators: [A100-80GB]}
models: {m: {preset: llama-3.1-8b, precision: bf16}}
services:
  - name: chat
    model: m
    traffic: {rps: 5}
    tokens: {input: 2000, output: 1000}
    slo: {ttft_p99_s: 5, tpot_p99_s: 0.2}
)", "chat.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  const ModelSpec& model = spec.value().models.at("m");
  ServiceSpec fixed = spec.value().services[0];
  ServiceSpec traced = fixed;
  TraceSummary trace;
  for (int i = 0; i < 50; ++i) {
    trace.input_sample.insert(trace.input_sample.end(), {2000, 2000});
    trace.output_sample.insert(trace.output_sample.end(), {100, 1900});
  }
  traced.traffic.trace = trace;
  Catalog catalog = Catalog::embedded().value();
  Configuration config{catalog.find_accelerator("A100-80GB"), 1, Batching::continuous, 4096};
  ServiceLevel at_means = evaluate_service(model, fixed, config, 1, 0.5, PlannerOptions{});
  ServiceLevel mixed = evaluate_service(model, traced, config, 1, 0.5, PlannerOptions{});
  ASSERT_GT(at_means.capacity_rps, 0);
  ASSERT_GT(mixed.capacity_rps, 0);
  // (100 x 2,100 + 1,900 x 3,900) / 2,000 = 3,810 KV tokens a slot against 3,000: fewer sequences.
  EXPECT_LT(mixed.capacity_rps, 0.95 * at_means.capacity_rps);
  // A trace whose requests all have the means plans as the means do.
  ServiceSpec even = fixed;
  TraceSummary same;
  same.input_sample.assign(10, 2000);
  same.output_sample.assign(10, 1000);
  even.traffic.trace = same;
  EXPECT_NEAR(evaluate_service(model, even, config, 1, 0.5, PlannerOptions{}).capacity_rps, at_means.capacity_rps,
              1e-9 * at_means.capacity_rps);
}

// gpt-oss's sliding layers keep only their 128-token window's blocks (vLLM V1's hybrid
// allocator), as the simulator's cache counts them: the screen fits about twice the long
// sequences it would if every layer kept every token.
TEST(InferencePlanner, SlidingWindowLayersScreenOnlyTheirWindowsKv) {
  auto spec = parse_spec(R"(
constraints: {pricing: [on-demand], accelerators: [H100]}
models: {m: {preset: gpt-oss-120b}}
services:
  - name: long
    model: m
    traffic: {rps: 1}
    tokens: {input: 16000, output: 400}
    slo: {ttft_p99_s: 30, tpot_p99_s: 0.2}
)", "long.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  const ModelSpec& windowed = spec.value().models.at("m");
  ModelSpec every_token = windowed;
  every_token.arch.sliding_window.reset();
  Catalog catalog = Catalog::embedded().value();
  Configuration config{catalog.find_accelerator("H100"), 1, Batching::continuous, 4096};
  const ServiceSpec& service = spec.value().services[0];
  ServiceLevel a = evaluate_service(windowed, service, config, 1, 0.1, PlannerOptions{});
  ServiceLevel b = evaluate_service(every_token, service, config, 1, 0.1, PlannerOptions{});
  // A 16,400-token slot holds 18 layers' every token and 18 layers' 144: 0.504 of the bytes, so
  // about twice the batch (throughput.cc's test checks the batch itself).
  ASSERT_GT(b.capacity_rps, 0) << b.binding;
  EXPECT_GT(a.capacity_rps, 1.5 * b.capacity_rps) << a.capacity_rps << " against " << b.capacity_rps;
}

// Llama 3.1 8B on A100-80GBs with continuous batching, its tokens given (YAML), screened at
// `replicas` replicas and `rate_rps` in all.
ServiceLevel screen_llama_8b_tokens(const std::string& tokens, int replicas, double rate_rps) {
  auto spec = parse_spec(fmt::format(R"(
constraints: {{pricing: [on-demand], accelerators: [A100-80GB]}}
models: {{m: {{preset: llama-3.1-8b, precision: bf16}}}}
services:
  - name: chat
    model: m
    traffic: {{rps: {}}}
    tokens: {}
    slo: {{ttft_p99_s: 5, tpot_p99_s: 0.2}}
)",
                                     rate_rps, tokens),
                         "tokens.yaml");
  if (!spec.ok()) {
    ADD_FAILURE() << spec.error().to_string();
    return {};
  }
  Catalog catalog = Catalog::embedded().value();
  Configuration config{catalog.find_accelerator("A100-80GB"), 1, Batching::continuous, 256};
  ServiceLevel level = evaluate_service(spec.value().models.at("m"), spec.value().services[0], config, replicas, rate_rps, PlannerOptions{});
  EXPECT_TRUE(level.feasible) << tokens << ": " << level.binding;
  return level;
}

// TPOT p99 is over requests, each averaging its own answer's steps: answers spread about the
// same mean (a p99 four times it) put short ones in the p99, whose few steps average out less
// of a slow step. Capacity, which the means set, does not move.
TEST(InferencePlanner, SpreadAnswersRaiseTheScreenedTpotP99) {
  ServiceLevel fixed = screen_llama_8b_tokens("{input: 2000, output: 300}", 2, 5);
  ServiceLevel spread = screen_llama_8b_tokens("{input: 2000, output: {mean: 300, p99: 1200}}", 2, 5);
  EXPECT_NEAR(spread.capacity_rps, fixed.capacity_rps, 0.01 * fixed.capacity_rps);  // the sample's mean, 300 within 1%
  EXPECT_GT(spread.tpot_p99_s, 1.02 * fixed.tpot_p99_s);
}

// A request's decode steps wait for the prompts that arrive meanwhile (their chunks run
// between the steps): prompts of the same mean but spread (a p99 four times it) leave a longer
// TPOT tail, and so does a replica that takes every request (Poisson) against one of eight that
// a router deals every eighth to, at the same load each.
TEST(InferencePlanner, PromptsArrivingDuringAnAnswerStretchItsTpot) {
  ServiceLevel one = screen_llama_8b_tokens("{input: 1500, output: 200}", 1, 4);
  ServiceLevel spread = screen_llama_8b_tokens("{input: {mean: 1500, p99: 6000}, output: 200}", 1, 4);
  ServiceLevel dealt = screen_llama_8b_tokens("{input: 1500, output: 200}", 8, 32);
  EXPECT_GT(spread.tpot_p99_s, 1.05 * one.tpot_p99_s);
  EXPECT_LT(dealt.tpot_p99_s, 0.97 * one.tpot_p99_s);
}

// Availability: a real-time service is never planned on one node, and spot only where the
// service may lose a node, then as N+1 with an on-demand floor over two zones.
TEST(InferencePlanner, ProductionServingHasNoSingleNodeAndNoSpotUnlessInterruptible) {
  auto spec_text = [](const std::string& extra) {
    return R"(
constraints: {clouds: [aws], pricing: [on-demand, spot]}
models: {m: {preset: llama-3.1-8b, precision: bf16}}
services:
  - name: a
    model: m
    traffic: {rps: 0.5}
    tokens: {input: 500, output: 100}
    slo: {ttft_p99_s: 2, tpot_p99_s: 0.1}
)" + extra;
  };
  Catalog catalog = Catalog::embedded().value();
  auto plain = parse_spec(spec_text(""), "a.yaml");
  ASSERT_TRUE(plain.ok()) << plain.error().to_string();
  ServicePlan plan = plan_service(catalog, plain.value(), plain.value().services[0], PlannerOptions{});
  ASSERT_TRUE(plan.best) << plan.binding;
  // One GPU carries 0.5 requests/s; two nodes are kept, each with a replica, on demand.
  EXPECT_EQ(plan.best->needed_replicas, 1);
  EXPECT_EQ(plan.best->instances, 2);
  EXPECT_EQ(plan.best->replicas, 2);
  EXPECT_EQ(plan.best->pricing, Pricing::on_demand);
  for (const auto& o : plan.pareto) EXPECT_NE(o.pricing, Pricing::spot);
  EXPECT_TRUE(std::any_of(plan.assumptions.begin(), plan.assumptions.end(),
                          [](const std::string& a) { return a.find("spot not considered") != std::string::npos; }));

  auto single = parse_spec(spec_text("    min_replicas: 1\n"), "a.yaml");
  ASSERT_TRUE(single.ok());
  ServicePlan one = plan_service(catalog, single.value(), single.value().services[0], PlannerOptions{});
  ASSERT_TRUE(one.best);
  EXPECT_EQ(one.best->instances, 1);
  EXPECT_NEAR(one.best->usd_per_hour * 2, plan.best->usd_per_hour, 1e-9);

  auto spot = parse_spec(spec_text("    interruptible: true\n"), "a.yaml");
  ASSERT_TRUE(spot.ok());
  ServicePlan s = plan_service(catalog, spot.value(), spot.value().services[0], PlannerOptions{});
  ASSERT_TRUE(s.best);
  bool any_spot = false;
  for (const auto& o : s.pareto) {
    if (o.pricing != Pricing::spot) continue;
    any_spot = true;
    ASSERT_TRUE(o.spot_with_floor());
    // N+1 nodes: the load's nodes plus one, the first on demand, the rest spot over two zones.
    const int per_node = o.replicas_per_node();
    const int needed_nodes = (o.needed_replicas + per_node - 1) / per_node;
    EXPECT_EQ(o.instances, std::max(2, needed_nodes + 1));
    ASSERT_GE(o.nodes.size(), 2u);
    EXPECT_EQ(o.nodes[0].pricing, Pricing::on_demand);
    EXPECT_EQ(o.nodes[0].instances, 1);
    double usd = 0;
    for (const auto& g : o.nodes) usd += *g.offering->usd_per_hour(g.pricing) * g.instances;
    EXPECT_NEAR(o.usd_per_hour, usd, 1e-9);
    EXPECT_EQ(o.replicas - o.reclaim_replicas >= o.needed_replicas, true);
  }
  EXPECT_TRUE(any_spot);
}

// ResNet-50 on T4s in us-west-2, spot allowed: the cheapest spot T4 node is an x86 g4dn.xlarge
// and the cheapest on-demand one an arm64 g5g.xlarge. One Deployment runs one image: a floor of
// the other host CPU than its spot nodes was planned (a g5g floor under g4dn spot nodes), so
// every spot plan's floor now shares its spot nodes' architecture.
TEST(InferencePlanner, ASpotPlansFloorRunsTheSameHostCpuAsItsSpotNodes) {
  auto spec = parse_spec(R"(
constraints: {clouds: [aws], regions: [us-west-2], pricing: [on-demand, spot], accelerators: [T4]}
models: {det: {preset: resnet-50, precision: fp16}}
services:
  - {name: detect, model: det, traffic: {rps: 1200}, slo: {latency_p99_s: 0.08}, interruptible: true}
)", "vision.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  Catalog catalog = Catalog::embedded().value();
  ServicePlan plan = plan_service(catalog, spec.value(), spec.value().services[0], PlannerOptions{});
  ASSERT_TRUE(plan.best) << plan.binding;
  std::set<std::string> spot_architectures;
  for (const auto* options : {&plan.pareto, &plan.ranked})
    for (const PlanOption& o : *options) {
      if (!o.spot_with_floor()) continue;
      spot_architectures.insert(std::string(cpu_architecture(*o.offering)));
      for (const NodeGroup& g : o.nodes) {
        EXPECT_EQ(cpu_architecture(*g.offering), cpu_architecture(*o.offering)) << g.offering->instance_type << " beside "
                                                                               << o.offering->instance_type;
      }
    }
  // Both kinds of host were planned on spot, each with a floor of its own kind.
  EXPECT_EQ(spot_architectures, (std::set<std::string>{"arm64", "x86_64"}));
}

TEST(InferencePlanner, ImpossibleSloSaysWhichConstraintBinds) {
  auto spec = parse_spec(R"(
models: {m: {preset: llama-3.1-8b}}
services:
  - name: a
    model: m
    traffic: {rps: 1}
    tokens: {input: 4000, output: 100}
    slo: {ttft_p99_s: 0.001, tpot_p99_s: 0.1}
)", "fast.yaml");
  ASSERT_TRUE(spec.ok());
  Catalog catalog = Catalog::embedded().value();
  ServicePlan plan = plan_service(catalog, spec.value(), spec.value().services[0], PlannerOptions{});
  EXPECT_FALSE(plan.feasible);
  EXPECT_NE(plan.binding.find("ttft_p99_s"), std::string::npos) << plan.binding;
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

std::string chat_with(const std::string& traffic_extra, const std::string& deployment) {
  return R"(
constraints: {clouds: [aws, gcp, lambda, runpod], pricing: [on-demand]}
models: {m: {preset: llama-3.1-8b, precision: bf16}}
services:
  - name: chat
    model: m
    traffic: {rps: 20)" + traffic_extra + R"(}
    tokens: {input: 300, output: 200}
    slo: {ttft_p99_s: 1.0, tpot_p99_s: 0.05}
)" + deployment;
}

// A 2,000-token system prompt and six turns of history: the replicas hold 3,550-token prompts,
// not 300, and the screen sizes them so (more KV per request: dearer or as dear), while prefill
// computes what the cache does not hold; the plan says what it assumed.
TEST(InferencePlanner, SharedPrefixesAreScreenedAsTheReplicasHoldThem) {
  Catalog catalog = Catalog::embedded().value();
  auto plain = parse_spec(chat_with("", ""), "chat.yaml");
  auto prefixed = parse_spec(chat_with(", prefix: {system_prompt_tokens: 2000, turns: 6, think_time_s: 30}", ""), "chat.yaml");
  ASSERT_TRUE(plain.ok() && prefixed.ok());
  ServicePlan a = plan_service(catalog, plain.value(), plain.value().services[0], PlannerOptions{});
  ServicePlan b = plan_service(catalog, prefixed.value(), prefixed.value().services[0], PlannerOptions{});
  ASSERT_TRUE(a.best && b.best);
  EXPECT_GE(b.best->usd_per_hour, a.best->usd_per_hour);
  EXPECT_TRUE(std::any_of(b.assumptions.begin(), b.assumptions.end(),
                          [](const std::string& s) { return s.find("3550 tokens on average") != std::string::npos; }));
}

// An engine-only deployment (no replicas) carries into the plan: its screen decodes
// speculatively and says so, and the deployment it verifies runs the same engine.
TEST(InferencePlanner, ThePlanRunsTheSpecsEngine) {
  Catalog catalog = Catalog::embedded().value();
  auto spec = parse_spec(chat_with("", "    deployment: {prefix_cache: off, speculative: {method: ngram, tokens: 3, acceptance: 0.6}}\n"),
                         "chat.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  const ServiceSpec& service = spec.value().services[0];
  ServicePlan plan = plan_service(catalog, spec.value(), service, PlannerOptions{});
  ASSERT_TRUE(plan.best);
  EXPECT_TRUE(std::any_of(plan.assumptions.begin(), plan.assumptions.end(),
                          [](const std::string& s) { return s.find("speculative decoding (ngram, 3 tokens") != std::string::npos; }));
  Deployment d = deployment_of(*plan.best, true, 2048, &*service.deployment);
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_EQ(d.groups[0].count, plan.best->replicas);
  ASSERT_TRUE(d.speculative);
  EXPECT_EQ(d.speculative->tokens, 3);
  EXPECT_EQ(d.prefix_cache, "off");
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// Llama-3.1-405B in bf16 (810 GB of weights) fits on no one node of 8 x 80 GB: replicas span
// whole nodes, tensor parallel within each and one pipeline stage per node, priced as all
// their nodes, never on spot; where one node holds the model, no replica spans nodes.
TEST(InferencePlanner, AModelNoNodeHoldsIsServedAcrossWholeNodes) {
  auto spec_text = [](const std::string& accelerators, const std::string& extra) {
    return "constraints: {pricing: [on-demand, spot], accelerators: [" + accelerators + R"(]}
models: {big: {preset: llama-3.1-405b, precision: bf16}}
services:
  - name: a
    model: big
    traffic: {rps: 2}
    tokens: {input: 1500, output: 300}
    slo: {ttft_p99_s: 5, tpot_p99_s: 0.1}
)" + extra;
  };
  Catalog catalog = Catalog::embedded().value();
  auto spec = parse_spec(spec_text("H100, A100-80GB", "    interruptible: true\n"), "big.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  ServicePlan plan = plan_service(catalog, spec.value(), spec.value().services[0], PlannerOptions{});
  ASSERT_TRUE(plan.best.has_value()) << plan.binding;
  const PlanOption& best = *plan.best;
  EXPECT_EQ(best.config.tensor_parallel, 8);
  EXPECT_GE(best.config.pipeline_parallel, 2);
  EXPECT_LE(best.config.pipeline_parallel, kMaxPipelineNodes);
  EXPECT_EQ(parallel_layout(best.config), fmt::format("tp8 pp{}", best.config.pipeline_parallel));
  EXPECT_EQ(best.offering->accelerator_count, 8);  // whole nodes, one stage each
  EXPECT_GE(best.replicas, 2);                      // min_replicas: replicas, not nodes
  EXPECT_EQ(best.instances, best.replicas * best.config.pipeline_parallel);
  EXPECT_EQ(best.gpus(), best.replicas * 8 * best.config.pipeline_parallel);
  EXPECT_NEAR(best.usd_per_hour, *best.offering->usd_per_hour(best.pricing) * best.instances, 1e-9);
  for (const auto& o : plan.pareto) EXPECT_NE(o.pricing, Pricing::spot);
  auto said = [&](const std::string& what) {
    return std::any_of(plan.assumptions.begin(), plan.assumptions.end(), [&](const std::string& a) { return a.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(said("fits on no one node of A100-80GB, H100")) << join_list(plan.assumptions, "\n");
  EXPECT_TRUE(said("not planned on spot"));

  // A replica's capacity counts each of its lanes: two stages serve more than one lane alone,
  // and the screen sizes at least as many replicas as the load over that capacity.
  ServiceLevel level = evaluate_service(spec.value().models.at("big"), spec.value().services[0], best.config, best.needed_replicas,
                                        2.0, PlannerOptions{});
  ASSERT_TRUE(level.feasible) << level.binding;
  EXPECT_GT(level.capacity_rps * best.needed_replicas, 2.0);

  // B200 (180 GB) holds it on one node: no replica spans nodes there, and none is chosen.
  auto one_node = parse_spec(spec_text("H100, B200", ""), "big.yaml");
  ASSERT_TRUE(one_node.ok());
  ServicePlan b200 = plan_service(catalog, one_node.value(), one_node.value().services[0], PlannerOptions{});
  ASSERT_TRUE(b200.best.has_value()) << b200.binding;
  for (const auto& o : b200.ranked) {
    if (o.config.accelerator->name == "B200") {
      EXPECT_EQ(o.config.pipeline_parallel, 1);
    }
  }

  // Too big for four nodes of 24 GB: the binding says how far the search went.
  auto none = parse_spec(spec_text("L4", ""), "big.yaml");
  ASSERT_TRUE(none.ok());
  ServicePlan l4 = plan_service(catalog, none.value(), none.value().services[0], PlannerOptions{});
  EXPECT_FALSE(l4.best.has_value());
  EXPECT_NE(l4.binding.find("4 nodes of 8"), std::string::npos) << l4.binding;
}

// Four replicas of 2 GPUs cost the same on four 2-GPU nodes as on two 4-GPU ones; five do not
// (five nodes against three): a count is placed on the offering cheapest for it, and a tie keeps
// the option's own.
TEST(InferencePlanner, ACountIsPlacedOnTheOfferingCheapestForIt) {
  Catalog catalog;
  ASSERT_FALSE(catalog.add_accelerators_csv("name,vendor,memory_gib,memory_gb_per_s,bf16_tflops,fp8_tflops,int8_tops,interconnect_gb_per_s,"
                                            "pcie_gen,class,source,as_of\nX,nvidia,80,3350,989,1979,1979,900,5,both,test,2026-12-07\n",
                                            "acc.csv").has_value());
  ASSERT_FALSE(catalog.add_offerings_csv("cloud,region,zone,instance_type,accelerator,accelerator_count,on_demand_usd_per_hour,"
                                         "spot_usd_per_hour,source,as_of\n"
                                         "gcp,us-central1,,two,X,2,2.0,,test,2026-12-07\n"
                                         "gcp,us-central1,,four,X,4,4.0,,test,2026-12-07\n",
                                         "off.csv").has_value());
  auto placements = std::make_shared<std::vector<Placement>>();
  const Offering* two = nullptr;
  const Offering* four = nullptr;
  for (const Offering& o : catalog.offerings()) {
    placements->push_back({&o, Pricing::on_demand, nullptr});
    (o.accelerator_count == 2 ? two : four) = &o;
  }
  ASSERT_TRUE(two && four);
  PlanOption option;
  option.config = Configuration{catalog.find_accelerator("X"), 2, Batching::continuous, 256};
  option.offering = four;
  option.min_nodes = 2;
  option.placements = placements;
  place_replicas_cheapest(option, 4);
  EXPECT_EQ(option.offering, four);  // a tie: $8/hour either way
  EXPECT_DOUBLE_EQ(option.usd_per_hour, 8.0);
  place_replicas_cheapest(option, 5);
  EXPECT_EQ(option.offering, two);
  EXPECT_EQ(option.instances, 5);
  EXPECT_DOUBLE_EQ(option.usd_per_hour, 10.0);
  place_replicas(option, 5);  // the option's own offering alone
  EXPECT_DOUBLE_EQ(option.usd_per_hour, 10.0);
  option.offering = four;
  place_replicas(option, 5);
  EXPECT_DOUBLE_EQ(option.usd_per_hour, 12.0);
}

}  // namespace
}  // namespace gw
