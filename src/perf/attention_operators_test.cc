#include "perf/attention_operators.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "perf/layer_operators.h"
#include "perf/step_error.h"

namespace gw {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Vidur's A100 attention profile (Llama-2-70B, tp 2): decode at batch 1-128 by context 32-4,032,
// prefill chunks 64-4,096 after up to 4,032 tokens; every row loads.
TEST(AttentionOperators, ShippedProfileLoads) {
  const auto& rows = embedded_attention_profiles();
  size_t decode = 0, prefill = 0;
  for (const auto& r : rows) {
    (r.prefill ? prefill : decode)++;
    EXPECT_EQ(r.device, "a100");
    EXPECT_EQ(r.q_dim, 32 * 128);  // 64 query heads over 2 devices
    EXPECT_EQ(r.kv_dim, 4 * 128);
    EXPECT_GT(r.time_s, 0);
  }
  EXPECT_EQ(decode, 10240u);
  EXPECT_EQ(prefill, 4418u);
}

// Fitted on every other context length, the rest are predicted: decode and prefill medians
// within 10% and 15% (bench/operator_accuracy prints the figures).
TEST(AttentionOperators, HeldOutContextLengthsArePredicted) {
  auto catalog = Catalog::embedded();
  const Accelerator* a100 = catalog.value().find_accelerator("A100-80GB");
  double peak = a100->peak(Precision::fp16).value() * 1e12, bandwidth = a100->memory_gb_per_s * 1e9;
  std::vector<const ProfiledAttention*> fit_rows;
  for (const auto& r : embedded_attention_profiles())
    if (static_cast<long>(r.kv_tokens / 32) % 2 == 0) fit_rows.push_back(&r);
  AttentionRoofline fit = fit_attention_roofline(fit_rows, peak, bandwidth);
  EXPECT_GT(fit.decode_memory, 0.5);  // FlashAttention decode streams the KV cache near bandwidth
  EXPECT_LT(fit.decode_memory, 0.95);
  std::vector<double> decode, prefill, large_decode;
  for (const auto& r : embedded_attention_profiles()) {
    if (static_cast<long>(r.kv_tokens / 32) % 2 == 0) continue;
    double e = std::abs(predicted_attention_s(fit, r, peak, bandwidth) / r.time_s - 1);
    (r.prefill ? prefill : decode).push_back(e);
    if (!r.prefill && r.batch >= 64 && r.kv_tokens >= 1024) large_decode.push_back(e);
  }
  EXPECT_LT(median(decode), 0.10);
  EXPECT_LT(median(prefill), 0.15);
  EXPECT_LT(median(large_decode), 0.10);
  // The figures --explain weighs attention's share of a step with (perf/step_error.h).
  StepErrorFigures figures;
  EXPECT_NEAR(median(decode), figures.decode_attention, 0.005);
  EXPECT_NEAR(median(prefill), figures.prefill_attention, 0.005);
}

TEST(AttentionOperators, FitRecoversAKnownRoofline) {
  AttentionRoofline truth;
  truth.decode_memory = 0.6, truth.decode_launch_s = 12e-6, truth.decode_per_sequence_s = 0.2e-6;
  truth.prefill_compute = 0.35, truth.prefill_launch_s = 9e-6, truth.prefill_pairs_per_token = 600;
  const double peak = 312e12, bandwidth = 2039e9;
  std::vector<ProfiledAttention> rows;
  for (double batch : {1.0, 4.0, 32.0, 128.0})
    for (double kv : {32.0, 512.0, 4096.0}) {
      ProfiledAttention r;
      r.batch = batch, r.kv_tokens = kv, r.q_dim = 4096, r.kv_dim = 512;
      r.time_s = predicted_attention_s(truth, r, peak, bandwidth);
      rows.push_back(r);
      r.prefill = true, r.batch = 1, r.chunk = batch * 16;
      r.time_s = predicted_attention_s(truth, r, peak, bandwidth);
      rows.push_back(r);
    }
  std::vector<const ProfiledAttention*> pointers;
  for (const auto& r : rows) pointers.push_back(&r);
  AttentionRoofline fit = fit_attention_roofline(pointers, peak, bandwidth);
  EXPECT_NEAR(fit.decode_memory, 0.6, 0.01);
  EXPECT_NEAR(fit.decode_launch_s, 12e-6, 0.3e-6);
  EXPECT_NEAR(fit.prefill_compute, 0.35, 0.01);
  EXPECT_NEAR(fit.prefill_pairs_per_token, 600, 40);
  // Linear in the simulator's counts: two sequences' decode is one launch plus twice the rest.
  double one = truth.decode_time_s(1, 1000, 2048, bandwidth), two = truth.decode_time_s(2, 2000, 2048, bandwidth);
  EXPECT_NEAR(two - truth.decode_launch_s, 2 * (one - truth.decode_launch_s), 1e-15);
  EXPECT_EQ(truth.decode_time_s(0, 0, 2048, bandwidth), 0);
  EXPECT_EQ(truth.prefill_time_s(0, 0, 4096, peak), 0);
}

// Prefill attention's work beyond the launch is work on each query head: a tp8 device (a quarter
// of a tp2 device's heads) does a quarter of it, and a device with three times the peak does it
// in a third of the time; the per-token part included, at every chunk.
TEST(AttentionOperators, PrefillWorkScalesWithTheDevicesQueryHeadsAndRate) {
  AttentionRoofline shipped = embedded_rooflines().at("a100").attention;
  ASSERT_GT(shipped.prefill_pairs_per_token, 0);
  const double peak = 312e12;
  for (double chunk : {16.0, 512.0, 8192.0}) {
    double pairs = chunk * chunk / 2;
    double tp2 = shipped.prefill_time_s(chunk, pairs, 4096, peak) - shipped.prefill_launch_s;
    double tp8 = shipped.prefill_time_s(chunk, pairs, 1024, peak) - shipped.prefill_launch_s;
    double faster = shipped.prefill_time_s(chunk, pairs, 4096, 3 * peak) - shipped.prefill_launch_s;
    EXPECT_NEAR(tp8, tp2 / 4, 1e-12 * tp2) << chunk;
    EXPECT_NEAR(faster, tp2 / 3, 1e-12 * tp2) << chunk;
    // The per-token part matters most for short chunks: above the pairs' own time there.
    if (chunk == 16) {
      EXPECT_GT(tp2, 2 * 4 * 4096 * pairs / (peak * shipped.prefill_compute));
    }
  }
}

// A kernel with one thread block per query head reads each KV head once per query head: from
// memory once, from L2 for the rest of the group. It costs what the grouped kernel costs while
// memory binds (one query head per KV head, or L2 fast enough), the group's reads at the L2 rate
// past that, and every read at memory bandwidth where no L2 rate is measured.
TEST(AttentionOperators, PerQueryHeadDecodeReadsTheCacheOncePerQueryHead) {
  AttentionRoofline shipped = embedded_rooflines().at("a100").attention;
  const double bandwidth = 2.039e12, kv_tokens = 240 * 1152.0, bytes_per_token = 2 * 2 * 128 * 2;
  double grouped = shipped.decode_time_s(240, kv_tokens, bytes_per_token, bandwidth);
  double l2 = measured_l2_read_bytes_per_s("A100-80GB");
  ASSERT_GT(l2, bandwidth);
  EXPECT_DOUBLE_EQ(shipped.decode_per_query_head_time_s(240, kv_tokens, bytes_per_token, 2, 1, bandwidth, l2), grouped);
  EXPECT_DOUBLE_EQ(shipped.decode_per_query_head_time_s(240, kv_tokens, bytes_per_token, 2, 2, bandwidth, 1e18), grouped);
  double reads = shipped.decode_per_query_head_time_s(240, kv_tokens, bytes_per_token, 2, 8, bandwidth, l2) -
                 shipped.decode_launch_s - 240 * shipped.decode_per_sequence_s;
  EXPECT_NEAR(reads, 8 * kv_tokens * bytes_per_token / l2, 1e-12);
  EXPECT_GT(reads + shipped.decode_launch_s, grouped);
  double unmeasured = shipped.decode_per_query_head_time_s(240, kv_tokens, bytes_per_token, 2, 8, bandwidth, 0);
  double fixed = shipped.decode_launch_s + 240 * shipped.decode_per_sequence_s;
  EXPECT_NEAR(unmeasured - fixed, 8 * (grouped - fixed), 1e-12);
  EXPECT_GT(unmeasured, reads);
  EXPECT_EQ(shipped.decode_per_query_head_time_s(0, 0, bytes_per_token, 2, 8, bandwidth, l2), 0);
  // An 8-bit cache halves the bytes: memory serves them in half the time, but L2 streams its
  // elements at the 16-bit rate (the kernel converts each), so the group's reads cost the same.
  double fp8 = shipped.decode_per_query_head_time_s(240, kv_tokens, bytes_per_token / 2, 1, 8, bandwidth, l2);
  EXPECT_NEAR(fp8 - fixed, reads, 1e-12);
  EXPECT_LT(shipped.decode_time_s(240, kv_tokens, bytes_per_token / 2, bandwidth), grouped);
  EXPECT_DOUBLE_EQ(shipped.decode_per_query_head_time_s(240, kv_tokens, bytes_per_token / 2, 1, 1, bandwidth, l2),
                   shipped.decode_time_s(240, kv_tokens, bytes_per_token / 2, bandwidth));
  // Devices of one die configuration share a figure; devices nobody measured have none.
  EXPECT_EQ(measured_l2_read_bytes_per_s("H100"), measured_l2_read_bytes_per_s("H200"));
  EXPECT_GT(measured_l2_read_bytes_per_s("H100"), measured_l2_read_bytes_per_s("H100-PCIE"));
  EXPECT_EQ(measured_l2_read_bytes_per_s("MI300X"), 0);
}

TEST(AttentionOperators, BadProfileNamesLineAndColumn) {
  std::string header =
      "time_stats.attn_decode.median,time_stats.attn_prefill.median,n_embd,n_q_head,n_kv_head,"
      "num_tensor_parallel_workers,batch_size,prefill_chunk_size,kv_cache_size,is_prefill\n";
  auto rows = parse_vidur_attention_profile(header + "0.02,,8192,64,8,2,4,0,1024,False\n0.02,,8192,64,8,2,x,0,1024,False\n",
                                            "attention.csv", "a100", "m");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().line, 3);
  EXPECT_EQ(rows.error().field, "batch_size");
  auto flag = parse_vidur_attention_profile(header + "0.02,,8192,64,8,2,4,0,1024,no\n", "attention.csv", "a100", "m");
  ASSERT_FALSE(flag.ok());
  EXPECT_EQ(flag.error().field, "is_prefill");
  auto kernel = parse_vidur_attention_profile(header + ",0.1,8192,64,8,2,1,512,0,True\n,,8192,64,8,2,1,512,0,True\n",
                                              "attention.csv", "a100", "m");
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.error().line, 3);
  EXPECT_EQ(kernel.error().field, "time_stats.attn_prefill.median");
}

// Every shipped roofline carries the attention factors a fresh fit of the A100 profile gives
// (the only device Vidur published attention for: H100 and A40 inherit them at their own rates).
TEST(AttentionOperators, ShippedFactorsAreAFreshFit) {
  auto catalog = Catalog::embedded();
  for (const auto& [device, roofline] : embedded_rooflines()) {
    OperatorRoofline fresh;
    fit_device_attention(fresh, device, embedded_attention_profiles(), catalog.value());
    EXPECT_EQ(roofline.attention_fitted_on, "a100") << device;
    EXPECT_NEAR(roofline.attention.decode_memory, fresh.attention.decode_memory, 1e-4) << device;
    EXPECT_NEAR(roofline.attention.decode_launch_s, fresh.attention.decode_launch_s, 1e-4 * fresh.attention.decode_launch_s);
    EXPECT_NEAR(roofline.attention.prefill_compute, fresh.attention.prefill_compute, 1e-4) << device;
    EXPECT_NEAR(roofline.attention.prefill_pairs_per_token, fresh.attention.prefill_pairs_per_token,
                1e-4 * fresh.attention.prefill_pairs_per_token);
  }
}

}  // namespace
}  // namespace gw
