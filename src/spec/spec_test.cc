#include "spec/spec.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include <cmath>

namespace gw {
namespace {

Result<Spec> parse(const std::string& text) { return parse_spec(text, "spec.yaml"); }

TEST(Spec, ReadsServicesModelsAndConstraints) {
  auto spec = parse(R"(
version: 1
name: demo
constraints:
  clouds: [aws, gcp]
  pricing: [on-demand, spot]
  budget_usd_per_month: 5000
  headroom: 0.25
models:
  chat: {preset: llama-3.1-8b, precision: fp8}
services:
  - name: chat
    model: chat
    traffic: {rps: {average: 4, peak: 10}}
    tokens: {input: {mean: 1000, p99: 4000}, output: 200}
    slo: {ttft_p99_s: 1.5, tpot_p99_s: 0.08}
  - name: images
    model: resnet-50
    traffic: {rps: 20, profile: diurnal}
    slo: {latency_p99_s: 0.1}
)");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  const Spec& s = spec.value();
  EXPECT_EQ(s.constraints.pricing.size(), 2u);
  EXPECT_DOUBLE_EQ(s.constraints.max_utilization, 0.75);
  EXPECT_EQ(s.models.at("chat").precision, Precision::fp8);
  ASSERT_EQ(s.services.size(), 2u);
  EXPECT_DOUBLE_EQ(s.services[0].traffic.peak_rps, 10);
  EXPECT_NEAR(s.services[0].input_tokens.mean(), 1000, 15);            // lognormal with that mean
  EXPECT_NEAR(s.services[0].input_tokens.quantile(0.99), 4000, 200);  // and that p99
  EXPECT_DOUBLE_EQ(s.services[1].traffic.peak_rps, 20 * 1.6);         // diurnal peak is 1.6x
}

// On an LLM service latency_p99_s bounds the whole request (the planner and the simulator read
// it as they read e2e_p99_s); with no target at all the error names the keys.
TEST(Spec, AnLlmServiceTakesLatencyP99AsItsWholeRequestsTarget) {
  const std::string head = "models: {m: {preset: llama-3.1-8b, precision: bf16}}\nservices:\n  - name: batch\n    model: m\n"
                           "    traffic: {rps: 3}\n    tokens: {input: 3000, output: 300}\n";
  auto whole = parse(head + "    slo: {latency_p99_s: 600}\n");
  ASSERT_TRUE(whole.ok()) << whole.error().to_string();
  EXPECT_EQ(whole.value().services.front().slo.latency_p99_s, 600);
  auto none = parse(head + "    slo: {latency_p50_s: 60}\n");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("needs ttft_p99_s, tpot_p99_s or e2e_p99_s"), std::string::npos) << none.error().message;
}

// Seconds as people write them in an SLO: "500ms", "2 s"; a unit on another field is refused.
TEST(Spec, SecondsFieldsTakeAUnit) {
  const std::string head = "models: {m: {preset: llama-3.1-8b, precision: bf16}}\nservices:\n  - name: chat\n    model: m\n"
                           "    traffic: {rps: 3}\n    tokens: {input: 1000, output: 200}\n";
  auto spec = parse(head + "    slo: {ttft_p99_s: 500ms, tpot_p99_s: 0.05, e2e_p99_s: 1min}\n");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  EXPECT_DOUBLE_EQ(spec.value().services.front().slo.ttft_p99_s.value_or(0), 0.5);
  EXPECT_DOUBLE_EQ(spec.value().services.front().slo.e2e_p99_s.value_or(0), 60);
  auto junk = parse(head + "    slo: {ttft_p99_s: half a second}\n");
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.error().field, "services.chat.slo.ttft_p99_s");
  EXPECT_NE(junk.error().message.find("'half a second' is not a finite number of seconds (a number, or with ms, s, m, h)"),
            std::string::npos)
      << junk.error().message;
  auto rate = parse("models: {m: {preset: llama-3.1-8b, precision: bf16}}\nservices:\n  - name: chat\n    model: m\n"
                    "    traffic: {rps: 3s}\n    tokens: {input: 1000, output: 200}\n    slo: {ttft_p99_s: 1}\n");
  ASSERT_FALSE(rate.ok());
  EXPECT_EQ(rate.error().message, "'3s' is not a finite number");
}

// A model with no precision runs as its checkpoint ships (gpt-oss: MXFP4 experts), as vLLM
// serves it; one given wins; a 16-bit checkpoint stays bf16.
TEST(Spec, AModelWithoutAPrecisionRunsAsItsCheckpointShips) {
  const std::string service = "services:\n  - name: chat\n    model: m\n    traffic: {rps: 3}\n"
                              "    tokens: {input: 1000, output: 200}\n    slo: {ttft_p99_s: 1}\n";
  auto shipped = parse("models: {m: {preset: gpt-oss-20b}}\n" + service);
  ASSERT_TRUE(shipped.ok()) << shipped.error().to_string();
  EXPECT_EQ(shipped.value().models.at("m").precision, Precision::fp4);
  EXPECT_EQ(shipped.value().models.at("m").weight_format, WeightFormat::mxfp4);
  auto given = parse("models: {m: {preset: gpt-oss-20b, precision: bf16}}\n" + service);
  ASSERT_TRUE(given.ok()) << given.error().to_string();
  EXPECT_EQ(given.value().models.at("m").precision, Precision::bf16);
  EXPECT_EQ(given.value().models.at("m").weight_format, WeightFormat::plain);
  auto sixteen = parse("models: {m: {preset: llama-3.1-8b}}\n" + service);
  ASSERT_TRUE(sixteen.ok()) << sixteen.error().to_string();
  EXPECT_EQ(sixteen.value().models.at("m").precision, Precision::bf16);
}

TEST(Spec, UnknownKeysSuggestTheRightOne) {
  auto spec = parse("version: 1\nservices:\n  - name: a\n    model: gpt2\n    trafic: {rps: 1}\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().line, 5);
  EXPECT_EQ(spec.error().field, "services[0].trafic");
  EXPECT_NE(spec.error().message.find("did you mean 'traffic'"), std::string::npos);
}

TEST(Spec, BadSpecsNameFileLineAndKey) {
  auto missing_slo = parse("services:\n  - name: a\n    model: resnet-50\n    traffic: {rps: 1}\n");
  ASSERT_FALSE(missing_slo.ok());
  EXPECT_EQ(missing_slo.error().field, "services.a.slo");
  EXPECT_EQ(missing_slo.error().file, "spec.yaml");

  auto unknown_model = parse("services:\n  - name: a\n    model: llama-9\n    traffic: {rps: 1}\n    slo: {latency_p99_s: 1}\n");
  ASSERT_FALSE(unknown_model.ok());
  EXPECT_EQ(unknown_model.error().line, 3);
  EXPECT_EQ(unknown_model.error().field, "services.a.model");

  auto negative = parse("services:\n  - name: a\n    model: resnet-50\n    traffic: {rps: -5}\n    slo: {latency_p99_s: 1}\n");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().field, "services.a.traffic.rps");

  auto llm_without_tokens = parse("services:\n  - name: a\n    model: gpt2\n    traffic: {rps: 1}\n    slo: {ttft_p99_s: 1}\n");
  ASSERT_FALSE(llm_without_tokens.ok());
  EXPECT_EQ(llm_without_tokens.error().field, "services.a.tokens");

  auto wrong_slo = parse("services:\n  - name: a\n    model: resnet-50\n    traffic: {rps: 1}\n    slo: {ttft_p99_s: 1}\n");
  ASSERT_FALSE(wrong_slo.ok());

  auto bad_yaml = parse("services: [\n  - name: a\n");
  ASSERT_FALSE(bad_yaml.ok());
  EXPECT_NE(bad_yaml.error().message.find("invalid YAML"), std::string::npos);
  EXPECT_GT(bad_yaml.error().line, 0);

  auto peak_below = parse("services:\n  - name: a\n    model: resnet-50\n    traffic: {rps: {average: 5, peak: 2}}\n    slo: {latency_p99_s: 1}\n");
  ASSERT_FALSE(peak_below.ok());
  EXPECT_EQ(peak_below.error().line, 4);
}

// Prefix caching: the deployment's cache and the traffic's shared prefixes, and their bad values.
TEST(Spec, PrefixCachingAndSharedPrefixes) {
  const std::string head = "services:\n  - name: a\n    model: llama-3.1-8b\n    tokens: {input: {mean: 300}, output: {mean: 100}}\n"
                           "    slo: {ttft_p99_s: 1}\n";
  auto spec = [&](const std::string& traffic, const std::string& cache) {
    return parse(head + "    traffic: " + traffic + "\n    deployment: {accelerator: H100, replicas: 1, prefix_cache: " + cache + "}\n");
  };
  auto ok = spec("{rps: 2, prefix: {system_prompt_tokens: 2000, turns: 4, think_time_s: 15}}", "{capacity_tokens: 3000000}");
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  const ServiceSpec& s = ok.value().services[0];
  EXPECT_EQ(s.traffic.prefix.system_prompt_tokens, 2000);
  EXPECT_EQ(s.traffic.prefix.turns, 4);
  EXPECT_EQ(s.traffic.prefix.think_time_s, 15);
  EXPECT_EQ(s.deployment->prefix_cache, "room");
  EXPECT_EQ(s.deployment->prefix_cache_tokens, 3e6);
  auto unlimited = spec("{rps: 2}", "unlimited");
  ASSERT_TRUE(unlimited.ok()) << unlimited.error().to_string();
  EXPECT_TRUE(std::isinf(unlimited.value().services[0].deployment->prefix_cache_tokens));
  auto off = spec("{rps: 2}", "off");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off.value().services[0].deployment->prefix_cache, "off");

  auto bad_cache = spec("{rps: 2}", "lots");
  ASSERT_FALSE(bad_cache.ok());
  EXPECT_EQ(bad_cache.error().field, "services.a.deployment.prefix_cache");
  EXPECT_EQ(bad_cache.error().line, 7);
  auto bad_size = spec("{rps: 2}", "{capacity_tokens: -4}");
  ASSERT_FALSE(bad_size.ok());
  EXPECT_EQ(bad_size.error().field, "services.a.deployment.prefix_cache.capacity_tokens");
  auto empty_prefix = spec("{rps: 2, prefix: {turns: 1}}", "kv");
  ASSERT_FALSE(empty_prefix.ok());
  EXPECT_EQ(empty_prefix.error().field, "services.a.traffic.prefix");
  auto typo = spec("{rps: 2, prefix: {system_prompt: 100}}", "kv");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("system_prompt_tokens"), std::string::npos) << typo.error().message;
}

TEST(Spec, SpeculativeDecodingNeedsItsRateAndItsDraft) {
  const std::string head = "services:\n  - name: a\n    model: llama-3.1-8b\n    tokens: {input: {mean: 300}, output: {mean: 100}}\n"
                           "    slo: {ttft_p99_s: 1}\n    traffic: {rps: 1}\n    deployment:\n      accelerator: H100\n"
                           "      replicas: 1\n      speculative: ";
  auto ok = parse(head + "{method: eagle, tokens: 3, acceptance: 0.7}\n");
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(ok.value().services[0].deployment->speculative->method, "eagle");
  EXPECT_EQ(ok.value().services[0].deployment->speculative->tokens, 3);
  auto field_of = [&](const std::string& tail) {
    auto r = parse(head + tail + "\n");
    return r.ok() ? std::string("accepted") : r.error().field;
  };
  EXPECT_EQ(field_of("{method: draft, tokens: 4, acceptance: 0.5}"), "services.a.deployment.speculative.draft_model");
  EXPECT_EQ(field_of("{method: eagle, tokens: 4}"), "services.a.deployment.speculative.acceptance");
  EXPECT_EQ(field_of("{method: eagle, tokens: 4, acceptance: 1.5}"), "services.a.deployment.speculative.acceptance");
  EXPECT_EQ(field_of("{method: medusa, tokens: 4, acceptance: 0.5}"), "services.a.deployment.speculative.method");
  EXPECT_EQ(field_of("{method: ngram, tokens: 4, acceptance: 0.5, draft_model: llama-3.2-1b}"),
            "services.a.deployment.speculative.draft_model");
}

TEST(Spec, DisaggregatedDeploymentsNeedBothPools) {
  const std::string head = "services:\n  - name: a\n    model: llama-3.1-8b\n    tokens: {input: {mean: 300}, output: {mean: 100}}\n"
                           "    slo: {ttft_p99_s: 1}\n    traffic: {rps: 1}\n    deployment:\n      replicas:\n";
  auto ok = parse(head + "        - {accelerator: H100, count: 1, role: prefill}\n        - {accelerator: H100, count: 2, role: decode}\n"
                         "      disaggregation: {link: efa, gbps_per_gpu: 200}\n");
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  const Deployment& d = *ok.value().services[0].deployment;
  EXPECT_EQ(d.groups[0].role, "prefill");
  EXPECT_EQ(d.groups[1].role, "decode");
  EXPECT_EQ(d.disaggregation->link, "efa");
  EXPECT_EQ(*d.disaggregation->gbps_per_gpu, 200);
  auto defaults = parse(head + "        - {accelerator: H100, role: prefill}\n        - {accelerator: H100, role: decode}\n");
  ASSERT_TRUE(defaults.ok()) << defaults.error().to_string();
  EXPECT_EQ(defaults.value().services[0].deployment->disaggregation->link, "infiniband");
  auto field_of = [&](const std::string& tail) {
    auto r = parse(head + tail);
    return r.ok() ? std::string("accepted") : r.error().field;
  };
  EXPECT_EQ(field_of("        - {accelerator: H100, role: prefill}\n"), "services.a.deployment.replicas");
  EXPECT_EQ(field_of("        - {accelerator: H100, role: prefill}\n        - {accelerator: H100, role: decode}\n"
                     "        - {accelerator: H100}\n"),
            "services.a.deployment.replicas");
  EXPECT_EQ(field_of("        - {accelerator: H100, role: prefil}\n"), "services.a.deployment.replicas.role");
  EXPECT_EQ(field_of("        - {accelerator: H100, role: prefill}\n        - {accelerator: H100, role: decode}\n"
                     "      disaggregation: {link: carrier-pigeon}\n"),
            "services.a.deployment.disaggregation.link");
  EXPECT_EQ(field_of("        - {accelerator: H100, role: prefill}\n        - {accelerator: H100, role: decode}\n"
                     "      disaggregation: {kv_transfer: later}\n"),
            "services.a.deployment.disaggregation.kv_transfer");
  EXPECT_EQ(d.disaggregation->kv_transfer, "overlapped");
  auto pulled = parse(head + "        - {accelerator: H100, role: prefill}\n        - {accelerator: H100, role: decode}\n"
                             "      disaggregation: {link: nvlink, kv_transfer: between_steps}\n");
  ASSERT_TRUE(pulled.ok()) << pulled.error().to_string();
  EXPECT_EQ(pulled.value().services[0].deployment->disaggregation->kv_transfer, "between_steps");
}

// deployment.pp: pipeline stages of an LLM replica, at most one per layer (Llama-3.1-8B has 32).
TEST(Spec, PipelineStagesAreReadPerGroup) {
  const std::string head = "services:\n  - name: a\n    model: llama-3.1-8b\n    tokens: {input: {mean: 300}, output: {mean: 100}}\n"
                           "    slo: {ttft_p99_s: 1}\n    traffic: {rps: 1}\n    deployment:\n";
  auto groups = parse(head + "      replicas:\n        - {accelerator: H100, tp: 2, pp: 4, count: 3}\n");
  ASSERT_TRUE(groups.ok()) << groups.error().to_string();
  EXPECT_EQ(groups.value().services[0].deployment->groups[0].pipeline_parallel, 4);
  auto one = parse(head + "      replicas: 2\n      accelerator: A100-80GB\n      pp: 2\n");
  ASSERT_TRUE(one.ok()) << one.error().to_string();
  EXPECT_EQ(one.value().services[0].deployment->groups[0].pipeline_parallel, 2);
  auto too_many = parse(head + "      replicas:\n        - {accelerator: H100, pp: 33}\n");
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().field, "services.a.deployment.replicas.pp");
  EXPECT_NE(too_many.error().message.find("33 pipeline stages for 32 layers"), std::string::npos) << too_many.error().message;
  auto engine_only = parse(head + "      pp: 2\n");
  ASSERT_FALSE(engine_only.ok());
  EXPECT_EQ(engine_only.error().field, "services.a.deployment.replicas");
}

// A deployment without replicas says how the engine runs; plans choose the replicas.
TEST(Spec, ADeploymentWithoutReplicasDescribesTheEngine) {
  const std::string head = "services:\n  - name: a\n    model: llama-3.1-8b\n    tokens: {input: {mean: 300}, output: {mean: 100}}\n"
                           "    slo: {ttft_p99_s: 1}\n    traffic: {rps: 1}\n    deployment: ";
  auto engine = parse(head + "{prefix_cache: off, speculative: {method: ngram, tokens: 3, acceptance: 0.4}, disaggregation: {link: roce}}\n");
  ASSERT_TRUE(engine.ok()) << engine.error().to_string();
  const Deployment& d = *engine.value().services[0].deployment;
  EXPECT_TRUE(d.groups.empty());
  EXPECT_EQ(d.prefix_cache, "off");
  EXPECT_EQ(d.speculative->tokens, 3);
  EXPECT_EQ(d.disaggregation->link, "roce");
  auto bad = parse(head + "{accelerator: H100}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "services.a.deployment.replicas");
}

// Clients' timeout: 60 s, or twice the SLO's longest target where that is longer, unless the
// traffic says otherwise; none for clients that wait for ever; a bad value names its line and field.
TEST(Spec, ClientTimeoutDefaultsToSixtySecondsOrTwiceTheSlo) {
  auto spec = parse("services:\n  - name: a\n    model: resnet-50\n    traffic: {rps: 1}\n    slo: {latency_p99_s: 1}\n"
                    "  - name: b\n    model: resnet-50\n    traffic: {rps: 1, client_timeout_s: 7.5}\n    slo: {latency_p99_s: 1}\n"
                    "  - name: c\n    model: resnet-50\n    traffic: {rps: 1, client_timeout_s: none}\n    slo: {latency_p99_s: 1}\n"
                    "  - name: d\n    model: resnet-50\n    traffic: {rps: 1}\n    slo: {latency_p99_s: 20, latency_p50_s: 45}\n");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  EXPECT_EQ(spec.value().services[0].traffic.client_timeout_s, 60);
  EXPECT_FALSE(spec.value().services[0].traffic.client_timeout_given);
  EXPECT_EQ(spec.value().services[1].traffic.client_timeout_s, 7.5);
  EXPECT_TRUE(spec.value().services[1].traffic.client_timeout_given);
  EXPECT_EQ(spec.value().services[2].traffic.client_timeout_s, 0);
  EXPECT_EQ(spec.value().services[3].traffic.client_timeout_s, 90);
  for (const char* bad : {"soon", "0", "-3", "[1]"}) {
    auto wrong = parse(std::string("services:\n  - name: a\n    model: resnet-50\n    traffic:\n      rps: 1\n      client_timeout_s: ") +
                       bad + "\n    slo: {latency_p99_s: 1}\n");
    ASSERT_FALSE(wrong.ok()) << bad;
    EXPECT_EQ(wrong.error().field, "services.a.traffic.client_timeout_s") << bad;
    EXPECT_EQ(wrong.error().line, 6) << bad;
  }
}

// The clock of a profile's hours: an IANA name, UTC unless given; not with a trace's own times.
TEST(Spec, AProfilesTimezoneIsAnIanaName) {
  const std::string head = "services:\n  - name: a\n    model: resnet-50\n    slo: {latency_p99_s: 1}\n    traffic:\n";
  auto spec = parse(head + "      rps: 1\n      profile: diurnal\n      timezone: America/New_York\n");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  EXPECT_EQ(spec.value().services[0].traffic.timezone, "America/New_York");
  auto plain = parse(head + "      rps: 1\n      profile: diurnal\n");
  ASSERT_TRUE(plain.ok()) << plain.error().to_string();
  EXPECT_EQ(plain.value().services[0].traffic.timezone, "UTC");
  for (const char* bad : {"New York", "/etc/passwd", "Europe/../x", "[UTC]"}) {
    auto wrong = parse(head + "      rps: 1\n      profile: diurnal\n      timezone: " + bad + "\n");
    ASSERT_FALSE(wrong.ok()) << bad;
    EXPECT_EQ(wrong.error().field, "services.a.traffic.timezone") << bad;
    EXPECT_EQ(wrong.error().line, 8) << bad;
  }
}

TEST(Spec, TraceWithABadRowNamesItsLine) {
  auto dir = std::filesystem::temp_directory_path() / "gpuwise_spec_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "trace.csv") << "timestamp,input_tokens,output_tokens\n0.0,100,20\n0.5,abc,20\n";
  std::ofstream(dir / "spec.yaml") << "services:\n  - name: a\n    model: gpt2\n    traffic: {trace: trace.csv}\n"
                                      "    slo: {ttft_p99_s: 1}\n";
  auto spec = load_spec((dir / "spec.yaml").string());
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().file, (dir / "trace.csv").string());
  EXPECT_EQ(spec.error().line, 3);
  EXPECT_EQ(spec.error().field, "input_tokens");
}

TEST(Spec, MeasuredServiceTimesInterpolate) {
  auto spec = parse(R"(
models:
  m: {params: 1e8, service_time: {accelerator: T4, batch_ms: {1: 50, 8: 58, 64: 140}}}
services:
  - {name: a, model: m, traffic: {rps: 100}, slo: {latency_p99_s: 1}}
)");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  const auto& measured = *spec.value().models.at("m").measured;
  EXPECT_DOUBLE_EQ(measured.at(1), 0.050);
  EXPECT_NEAR(measured.at(36), 0.058 + (0.140 - 0.058) * 28 / 56, 1e-12);
  EXPECT_DOUBLE_EQ(measured.at(128), 0.280);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

TEST(Spec, TrainingJobsPinPrecisionZeroAndRecomputation) {
  auto spec = parse_spec(R"(
training:
  - name: pretrain
    model: llama-2-7b
    tokens: 5e11
    precision: fp8
    zero: 1
    recompute: selective
    allow_tcp_clusters: true
)", "t.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  const TrainingSpec& t = spec.value().training[0];
  EXPECT_EQ(t.precision, Precision::fp8);
  EXPECT_EQ(*t.zero_stage, 1);
  EXPECT_EQ(*t.recompute, Recompute::selective);
  EXPECT_TRUE(t.allow_tcp_clusters);
  auto int8 = parse_spec("training:\n  - name: a\n    model: gpt2\n    tokens: 1e9\n    precision: int8\n", "p.yaml");
  ASSERT_FALSE(int8.ok());
  EXPECT_EQ(int8.error().field, "training.a.precision");
  EXPECT_EQ(int8.error().line, 5);
  auto zero = parse_spec("training:\n  - name: a\n    model: gpt2\n    tokens: 1e9\n    zero: 4\n", "z.yaml");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().field, "training.a.zero");
  auto recompute = parse_spec("training:\n  - name: a\n    model: gpt2\n    tokens: 1e9\n    recompute: most\n", "r.yaml");
  ASSERT_FALSE(recompute.ok());
  EXPECT_EQ(recompute.error().field, "training.a.recompute");
}

TEST(Spec, TrainingJobsAndTheirBadInputs) {
  auto spec = parse_spec(R"(
training:
  - name: pretrain
    model: llama-2-7b
    tokens: 5e11
    deadline_days: 20
    interruptible: true
    checkpoint: {storage_gbps: 25}
    spot: {preemptions_per_hour: 0.3}
  - name: vision
    model: {params: 25e6, flops_per_item: 8.2e9}
    items: 1e8
)", "t.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  ASSERT_EQ(spec.value().training.size(), 2u);
  EXPECT_DOUBLE_EQ(*spec.value().training[0].deadline_days, 20);
  EXPECT_DOUBLE_EQ(*spec.value().training[0].preemptions_per_hour, 0.3);
  EXPECT_EQ(spec.value().models.at("vision.model").arch.kind, ModelKind::generic);

  auto zero = parse_spec("training:\n  - name: a\n    model: gpt2\n    tokens: 0\n", "z.yaml");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().field, "training.a.tokens");
  EXPECT_EQ(zero.error().line, 4);
  auto past = parse_spec("training:\n  - name: a\n    model: gpt2\n    tokens: 1e9\n    deadline_days: -3\n", "p.yaml");
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().field, "training.a.deadline_days");
  auto rate = parse_spec("training:\n  - name: a\n    model: gpt2\n    tokens: 1e9\n    spot: {preemptions_per_hour: 9000}\n", "r.yaml");
  ASSERT_FALSE(rate.ok());
  EXPECT_EQ(rate.error().field, "training.a.spot.preemptions_per_hour");
  auto items = parse_spec("training:\n  - name: a\n    model: resnet-50\n    tokens: 1e9\n", "i.yaml");
  ASSERT_FALSE(items.ok());
  EXPECT_EQ(items.error().field, "training.a.items");
}

}  // namespace
}  // namespace gw
