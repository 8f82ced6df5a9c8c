#include "perf/measurement.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/presets.h"
#include "perf/layer_operators.h"
#include "perf/throughput.h"

namespace gw {
namespace {

const Catalog& measurement_catalog() {
  static const Catalog c = Catalog::embedded().value();
  return c;
}

const char* kHeader = "accelerator,model,precision,tp,phase,batch,tokens,output_tokens,latency_ms\n";

TEST(Measurements, ThroughputRowsReadWithTheirLengths) {
  auto ms = read_measurements(std::string(kHeader) + "H100,llama-3.1-70b,fp8,2,throughput,4096,1000,2000,0.24\n",
                              "m.csv", measurement_catalog());
  ASSERT_TRUE(ms.ok()) << ms.error().to_string();
  const Measurement& m = ms.value().front();
  EXPECT_EQ(m.phase, "throughput");
  EXPECT_EQ(m.tensor_parallel, 2);
  EXPECT_DOUBLE_EQ(m.tokens, 1000);
  EXPECT_DOUBLE_EQ(m.output_tokens, 2000);
  EXPECT_DOUBLE_EQ(m.batch, 4096);
}

TEST(Measurements, ThroughputRowsWithoutLengthsNameTheLineAndField) {
  auto no_output = read_measurements(std::string(kHeader) + "H100,llama-3.1-8b,fp8,1,throughput,4096,128,,0.04\n",
                                     "m.csv", measurement_catalog());
  ASSERT_FALSE(no_output.ok());
  EXPECT_EQ(no_output.error().line, 2);
  EXPECT_EQ(no_output.error().field, "output_tokens");
  auto no_input = read_measurements(std::string(kHeader) + "H100,llama-3.1-8b,fp8,1,throughput,4096,0,128,0.04\n",
                                    "m.csv", measurement_catalog());
  ASSERT_FALSE(no_input.ok());
  EXPECT_EQ(no_input.error().field, "tokens");
  auto bad_phase = read_measurements(std::string(kHeader) + "H100,llama-3.1-8b,fp8,1,offline,4096,128,128,0.04\n",
                                     "m.csv", measurement_catalog());
  ASSERT_FALSE(bad_phase.ok());
  EXPECT_NE(bad_phase.error().message.find("throughput"), std::string::npos) << bad_phase.error().message;
}

// A row names its engine's decode kernel; one that runs a block per query head makes a grouped-
// query model's long decodes slower (each KV head read once per query head), and leaves a
// multi-head model (one query head per KV head) as it was.
TEST(Measurements, PerQueryHeadDecodeKernelSlowsGroupedQueryModelsOnly) {
  std::string header = "accelerator,model,precision,tp,phase,batch,tokens,output_tokens,latency_ms,decode_attention\n";
  auto ms = read_measurements(header + "A100-80GB,llama-2-70b,fp16,4,static,240,128,2048,234057,per-query-head\n"
                                       "A100-80GB,llama-2-7b,fp16,1,static,60,128,2048,63734,per-query-head\n"
                                       "A100-80GB,llama-2-70b,fp16,4,static,240,128,2048,234057,grouped\n"
                                       "A100-80GB,llama-2-70b,fp16,4,static,240,128,2048,234057,\n",
                              "m.csv", measurement_catalog());
  ASSERT_TRUE(ms.ok()) << ms.error().to_string();
  EXPECT_TRUE(ms.value()[0].decode_attention_per_query_head);
  EXPECT_FALSE(ms.value()[2].decode_attention_per_query_head);
  EXPECT_FALSE(ms.value()[3].decode_attention_per_query_head);
  const Accelerator& a100 = *measurement_catalog().find_accelerator("A100-80GB");
  EfficiencyFactors factors;
  for (int i : {0, 1}) {
    Measurement per_head = ms.value()[i], grouped = per_head;
    grouped.decode_attention_per_query_head = false;
    ModelArch arch = resolve_model(per_head.model).value();
    double slow = predict_latency_ms(per_head, arch, a100, factors, true);
    double fast = predict_latency_ms(grouped, arch, a100, factors, true);
    if (arch.num_kv_heads < arch.num_heads) {
      EXPECT_GT(slow, 1.1 * fast) << per_head.model;
    } else {
      EXPECT_DOUBLE_EQ(slow, fast) << per_head.model;
    }
  }
  auto bad = read_measurements(header + "A100-80GB,llama-2-70b,fp16,4,static,240,128,2048,234057,xqa\n", "m.csv",
                               measurement_catalog());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().line, 2);
  EXPECT_EQ(bad.error().field, "decode_attention");
}

// A throughput row can name its requests' lengths; where they vary, the running batch holds the
// long answers longer, so each slot reserves and attends to more than a mean-length request and
// the replica serves fewer tokens per second than at the mean lengths.
TEST(Measurements, ThroughputRowsWithRequestLengths) {
  auto path = std::filesystem::temp_directory_path() / "gpuwise_measurement_lengths.csv";
  {
    std::ofstream f(path);
    f << "input_length,output_length\n";
    for (int i = 0; i < 50; ++i) f << "2000,100\n2000,1900\n";  // mean 2,000 in, 1,000 out
  }
  std::string header = "accelerator,model,precision,tp,phase,batch,tokens,output_tokens,latency_ms,lengths\n";
  // Llama 3.1 70B on two H100s holds a few hundred such sequences: the KV cache limits the batch.
  auto ms = read_measurements(header + "H100,llama-3.1-70b,fp8,2,throughput,4096,2000,1000,0.5," + path.string() +
                                  "\nH100,llama-3.1-70b,fp8,2,throughput,4096,2000,1000,0.5,\n",
                              "m.csv", measurement_catalog());
  ASSERT_TRUE(ms.ok()) << ms.error().to_string();
  const Measurement& varied = ms.value()[0];
  EXPECT_EQ(varied.lengths.requests, 100u);
  EXPECT_EQ(ms.value()[1].lengths.requests, 0u);
  const Accelerator& h100 = *measurement_catalog().find_accelerator("H100");
  ModelArch arch = resolve_model("llama-3.1-70b").value();
  double varied_ms = predict_latency_ms(varied, arch, h100, default_efficiency(h100), true);
  double mean_ms = predict_latency_ms(ms.value()[1], arch, h100, default_efficiency(h100), true);
  EXPECT_GT(varied_ms, 1.05 * mean_ms);
  // The file's means must be the row's; the column is for throughput rows; the file must exist.
  auto off = read_measurements(header + "H100,llama-3.1-8b,fp8,1,throughput,4096,2000,1500,0.05," + path.string() + "\n",
                               "m.csv", measurement_catalog());
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.error().line, 2);
  EXPECT_EQ(off.error().field, "lengths");
  auto decode = read_measurements(header + "H100,llama-3.1-8b,fp8,1,decode,16,2000,,0.05," + path.string() + "\n",
                                  "m.csv", measurement_catalog());
  ASSERT_FALSE(decode.ok());
  EXPECT_EQ(decode.error().field, "lengths");
  // A bound on the time per output token: the batch whose step fits it, so fewer tokens per
  // second than the unbounded row's; for throughput rows only.
  std::string bounded_header = "accelerator,model,precision,tp,phase,batch,tokens,output_tokens,latency_ms,tpot_ms\n";
  auto bounded = read_measurements(bounded_header + "H100,llama-3.1-70b,fp8,2,throughput,4096,2000,1000,0.5,30\n" +
                                       "H100,llama-3.1-70b,fp8,2,throughput,4096,2000,1000,0.5,\n",
                                   "m.csv", measurement_catalog());
  ASSERT_TRUE(bounded.ok()) << bounded.error().to_string();
  EXPECT_DOUBLE_EQ(bounded.value()[0].tpot_limit_ms, 30);
  EXPECT_GT(predict_latency_ms(bounded.value()[0], arch, h100, default_efficiency(h100), true),
            1.05 * predict_latency_ms(bounded.value()[1], arch, h100, default_efficiency(h100), true));
  auto bounded_decode = read_measurements(bounded_header + "H100,llama-3.1-8b,fp8,1,decode,16,2000,,0.05,30\n", "m.csv",
                                          measurement_catalog());
  ASSERT_FALSE(bounded_decode.ok());
  EXPECT_EQ(bounded_decode.error().field, "tpot_ms");
  auto absent = read_measurements(header + "H100,llama-3.1-8b,fp8,1,throughput,4096,2000,1000,0.05,/nonexistent/l.csv\n",
                                  "m.csv", measurement_catalog());
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().field, "lengths");
  EXPECT_EQ(absent.error().line, 2);
  std::filesystem::remove(path);
}

// A throughput row is predicted as continuous batching at the largest batch the replica's KV
// cache holds, capped by the row's batch: milliseconds per output token of the replica.
TEST(Measurements, ThroughputPredictionIsContinuousBatchingAtTheKvCacheLimit) {
  const Accelerator& h100 = *measurement_catalog().find_accelerator("H100");
  ModelArch arch = resolve_model("llama-3.1-8b").value();
  auto row = [&](double batch_cap) {
    Measurement m;
    m.accelerator = h100.name;
    m.model = "llama-3.1-8b";
    m.precision = Precision::fp8;
    m.phase = "throughput";
    m.batch = batch_cap;
    m.tokens = 128;
    m.output_tokens = 2048;
    m.latency_ms = 1;
    return predict_latency_ms(m, arch, h100, default_efficiency(h100), true);
  };
  double uncapped = row(4096), capped = row(16), one = row(1);
  // The KV cache holds a few hundred 2,176-token sequences on one H100 in fp8: far below 4,096.
  double free = kv_cache_free_bytes(arch, h100, Precision::fp8, Precision::fp8, 1);
  EXPECT_GT(free, 40e9);
  EXPECT_LT(free, 80e9);
  EXPECT_DOUBLE_EQ(row(100000), uncapped);  // beyond the cache's limit the cap no longer binds
  // An engine that gives its KV cache 95% of what the weights leave (TensorRT-LLM's
  // kv_cache_free_gpu_mem_fraction) sizes it from the same estimate.
  MemoryEstimate e;
  double engine_free = kv_cache_free_bytes(arch, h100, Precision::fp8, Precision::fp8, 1, &e, 0.95);
  EXPECT_NEAR(engine_free, 0.95 * (h100.memory_bytes() - e.weights_bytes - e.activation_bytes - e.overhead_bytes), 1);
  EXPECT_GT(engine_free, free);  // 95% of what is left is more than 90% of the device less the weights
  // More sequences at once: more tokens per second, so fewer milliseconds per token.
  EXPECT_LT(uncapped, capped / 4);
  EXPECT_LT(capped, one / 4);
  // One sequence at a time: a decode step per token, plus its prompt's share (a prefill of 128
  // tokens every 2,048 steps), so about one batch-1 decode step.
  PerfSetup setup;
  setup.accelerator = &h100;
  setup.weight_precision = Precision::fp8;
  setup.kv_precision = Precision::fp8;
  use_layer_operators(setup, nullptr);
  setup.efficiency = default_efficiency(h100);
  double decode_ms = decode_step(arch, setup, 1, 128 + 1024).time_s * 1e3;
  EXPECT_NEAR(one / decode_ms, 1.0, 0.05);
}

}  // namespace
}  // namespace gw
