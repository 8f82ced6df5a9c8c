#include "perf/layer_operators.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "model/presets.h"
#include "perf/efficiency.h"
#include "perf/matmul_efficiency.h"

namespace gw {
namespace {

std::vector<const ProfiledLayer*> rows_of(const std::string& device, const std::string& model, bool keep) {
  std::vector<const ProfiledLayer*> out;
  for (const auto& r : embedded_layer_profiles())
    if (r.device == device && (r.model == model) == keep) out.push_back(&r);
  return out;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

OperatorRoofline fitted(const std::string& device, const std::vector<const ProfiledLayer*>& rows) {
  auto catalog = Catalog::embedded();
  const Accelerator* a = catalog.value().find_accelerator(profiled_accelerator(device));
  return fit_operator_roofline(rows, a->peak(Precision::fp16).value() * 1e12, a->memory_gb_per_s * 1e9);
}

TEST(LayerOperators, EveryShippedProfileLoads) {
  const auto& rows = embedded_layer_profiles();
  std::set<std::pair<std::string, std::string>> files;
  for (const auto& r : rows) {
    files.insert({r.device, r.model});
    EXPECT_GT(r.total_s(), 0) << r.device << " " << r.model << " " << r.tokens;
    EXPECT_FALSE(profiled_accelerator(r.device).empty()) << r.device;
  }
  EXPECT_EQ(files.size(), 17u);
  EXPECT_EQ(rows.size(), 12u * 1044 + 2 * 1824 + 3 * 261);
}

// A preset's layer on tp 8 has the operator shapes Vidur profiled for the same model.
TEST(LayerOperators, PresetShapesMatchTheProfiledModel) {
  auto arch = resolve_model("llama-2-70b");
  ASSERT_TRUE(arch.ok());
  LayerDims dims = layer_dims(arch.value(), 8);
  const ProfiledLayer* profiled = nullptr;
  for (const auto* r : rows_of("h100", "meta-llama/Llama-2-70b-hf", true))
    if (r->dims.tensor_parallel == 8) profiled = r;
  ASSERT_NE(profiled, nullptr);
  for (int i = 0; i < kLayerOperators; ++i) {
    auto op = static_cast<LayerOperator>(i);
    OperatorShape mine = operator_shape(op, dims), theirs = operator_shape(op, profiled->dims);
    EXPECT_EQ(mine.n, theirs.n) << operator_name(op);
    EXPECT_EQ(mine.k, theirs.k) << operator_name(op);
    EXPECT_EQ(mine.bytes_per_token, theirs.bytes_per_token) << operator_name(op);
  }
  EXPECT_EQ(operator_shape(LayerOperator::attn_pre_proj, dims).n, (64 * 128 + 2 * 8 * 128) / 8.0);
  EXPECT_EQ(operator_shape(LayerOperator::mlp_up_proj, dims).n, 2 * 28672 / 8.0);
  // phi-2 feeds attention and MLP from one norm: no post-attention norm in its profile or preset.
  EXPECT_FALSE(rows_of("a100", "microsoft/phi-2", true).front()->dims.post_attention_norm);
}

// A device's query heads per KV head: the model's group while tp divides the KV heads, fewer
// once KV heads replicate (tp 16 on 8 KV heads: 4 query heads beside each device's one).
TEST(LayerOperators, QueryHeadsPerKvHeadOnADevice) {
  ModelArch arch = resolve_model("llama-2-70b").value();
  EXPECT_EQ(layer_dims(arch, 1).query_heads_per_kv_head(), 8);
  EXPECT_EQ(layer_dims(arch, 8).query_heads_per_kv_head(), 8);
  EXPECT_EQ(layer_dims(arch, 16).query_heads_per_kv_head(), 4);
  EXPECT_EQ(layer_dims(resolve_model("llama-2-7b").value(), 4).query_heads_per_kv_head(), 1);
}

// On a profiled model the tables answer (interpolated between token counts); on a model left
// out of the fit and the tables, the fitted roofline (and the tables of models sharing a GEMM
// shape) answer within 10% in the median.
TEST(LayerOperators, ProfiledAndLeftOutModelsAreReproduced) {
  const std::string device = "h100", model = "meta-llama/Llama-2-70b-hf";
  LayerOperatorModel with_tables, left_out;
  auto own = rows_of(device, model, true), others = rows_of(device, model, false);
  // Per tensor-parallel degree, every other token count is held out (the first and last kept).
  std::vector<const ProfiledLayer*> probes;
  std::map<int, std::vector<const ProfiledLayer*>> by_tp;
  for (const auto* r : own) by_tp[r->dims.tensor_parallel].push_back(r);
  for (auto& [tp, rows] : by_tp) {
    std::sort(rows.begin(), rows.end(), [](const ProfiledLayer* a, const ProfiledLayer* b) { return a->tokens < b->tokens; });
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i % 2 == 0 || i + 1 == rows.size()) with_tables.add_measured(*rows[i]);
      else probes.push_back(rows[i]);
    }
  }
  for (const auto* r : others) left_out.add_measured(*r);
  auto all = rows_of(device, "", false);
  with_tables.set_roofline(device, fitted(device, all));
  left_out.set_roofline(device, fitted(device, others));
  std::vector<double> interpolated, held_out;
  for (const auto* r : probes) {
    auto t = with_tables.layer_time(device, r->dims, r->tokens);
    EXPECT_EQ(t.roofline_operators, 0) << r->tokens;
    interpolated.push_back(std::abs(t.time_s / r->total_s() - 1));
  }
  for (const auto* r : own) held_out.push_back(std::abs(left_out.layer_time(device, r->dims, r->tokens).time_s / r->total_s() - 1));
  EXPECT_LT(median_of(interpolated), 0.05);
  EXPECT_LT(median_of(held_out), 0.10);
  // Without any table, the roofline alone on the left-out model.
  LayerOperatorModel roofline_only;
  roofline_only.set_roofline(device, fitted(device, others));
  std::vector<double> roofline_errors;
  for (const auto* r : own) {
    auto t = roofline_only.layer_time(device, r->dims, r->tokens);
    EXPECT_EQ(t.measured_operators, 0);
    roofline_errors.push_back(std::abs(t.time_s / r->total_s() - 1));
  }
  EXPECT_LT(median_of(roofline_errors), 0.10);
}

// The fit recovers factors it was given: rows made by a known roofline come back to it.
TEST(LayerOperators, FitRecoversAKnownRoofline) {
  OperatorRoofline truth;
  truth.peak_flops = 312e12;
  truth.bandwidth_bytes_per_s = 2039e9;
  truth.gemm_compute = 0.65, truth.gemm_tile_tokens = 100, truth.gemm_memory = 0.75, truth.gemm_launch_s = 4e-6;
  std::vector<ProfiledLayer> rows;
  for (int tp : {1, 2, 4, 8})
    for (double tokens : {1.0, 8.0, 64.0, 256.0, 1024.0, 4096.0}) {
      ProfiledLayer r;
      r.device = "synthetic";
      r.tokens = tokens;
      r.dims = {8192, 64, 8, 128, 28672, true, true, tp};
      for (int i = 0; i < kLayerOperators; ++i)
        r.time_s[static_cast<size_t>(i)] =
            truth.time_s(static_cast<LayerOperator>(i), operator_shape(static_cast<LayerOperator>(i), r.dims), tokens, 8192);
      rows.push_back(r);
    }
  std::vector<const ProfiledLayer*> pointers;
  for (const auto& r : rows) pointers.push_back(&r);
  OperatorRoofline fit = fit_operator_roofline(pointers, truth.peak_flops, truth.bandwidth_bytes_per_s);
  EXPECT_NEAR(fit.gemm_compute, 0.65, 0.01);
  EXPECT_NEAR(fit.gemm_memory, 0.75, 0.01);
  EXPECT_NEAR(fit.gemm_tile_tokens, 100, 5);
  EXPECT_NEAR(fit.gemm_launch_s, 4e-6, 0.3e-6);
}

TEST(LayerOperators, BadProfileNamesLineAndColumn) {
  std::string text =
      "time_stats.attn_pre_proj.median,n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,"
      "num_tensor_parallel_workers\n"
      "0.5,32,32,4096,11008,32000,True,16,1\n"
      "0.5,32,32,4096,11008,32000,maybe,32,1\n";
  auto rows = parse_vidur_layer_profile(text, "mlp.csv", "a100", "m");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().line, 3);
  EXPECT_EQ(rows.error().field, "use_gated_mlp");
  auto missing = read_vidur_layer_profiles("/nonexistent");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("compute/"), std::string::npos);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// catalog/profiles/vidur-7d47513/rooflines.csv is what a fresh fit of the shipped profiles gives
// (regenerate with `gpuwise_operator_accuracy --write-rooflines` when the fit or data change).
TEST(LayerOperators, ShippedRooflinesAreAFreshFit) {
  const auto& shipped = embedded_rooflines();
  ASSERT_EQ(shipped.size(), 3u);
  auto catalog = Catalog::embedded();
  for (const auto& [device, roofline] : shipped) {
    const Accelerator* a = catalog.value().find_accelerator(profiled_accelerator(device));
    ASSERT_NE(a, nullptr) << device;
    std::vector<const ProfiledLayer*> rows;
    for (const auto& r : embedded_layer_profiles(device)) rows.push_back(&r);
    OperatorRoofline fresh = fit_operator_roofline(rows, a->peak(Precision::fp16).value() * 1e12, a->memory_gb_per_s * 1e9);
    EXPECT_NEAR(roofline.gemm_compute, fresh.gemm_compute, 1e-4 * fresh.gemm_compute) << device;
    EXPECT_NEAR(roofline.gemm_tile_tokens, fresh.gemm_tile_tokens, 1e-4 * fresh.gemm_tile_tokens) << device;
    EXPECT_NEAR(roofline.gemm_memory, fresh.gemm_memory, 1e-4 * fresh.gemm_memory) << device;
    EXPECT_NEAR(roofline.gemm_launch_s, fresh.gemm_launch_s, 1e-4 * fresh.gemm_launch_s) << device;
    for (int i = 0; i < kLayerOperators; ++i) {
      if (is_gemm(static_cast<LayerOperator>(i))) continue;
      const auto &s = roofline.elementwise[static_cast<size_t>(i)], &f = fresh.elementwise[static_cast<size_t>(i)];
      EXPECT_NEAR(s.efficiency, f.efficiency, 1e-4 * f.efficiency) << device << " " << operator_name(static_cast<LayerOperator>(i));
      EXPECT_NEAR(s.launch_s, f.launch_s, 1e-4 * f.launch_s) << device << " " << operator_name(static_cast<LayerOperator>(i));
    }
  }
  auto bad = parse_rooflines_csv("device,peak_flops\na100,x\n", "rooflines.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().line, 2);
}

// A profiled accelerator answers from its tables; another from the nearest profiled generation's
// fitted factors at its own peak and bandwidth, with no tables.
TEST(LayerOperators, OperatorsForProfiledAndOtherAccelerators) {
  auto catalog = Catalog::embedded();
  auto arch = resolve_model("llama-2-70b");
  ASSERT_TRUE(arch.ok());
  LayerDims dims = layer_dims(arch.value(), 8);
  const Accelerator* h100 = catalog.value().find_accelerator("H100");
  AcceleratorOperators profiled = operators_for(*h100);
  EXPECT_EQ(profiled.device, "h100");
  EXPECT_EQ(profiled.model->layer_time(profiled.device, dims, 512).measured_operators, 9);
  EXPECT_NE(profiled.basis.find("measured on H100"), std::string::npos) << profiled.basis;
  const Accelerator* l4 = catalog.value().find_accelerator("L4");
  AcceleratorOperators other = operators_for(*l4);
  EXPECT_EQ(other.device, "L4");
  EXPECT_EQ(other.model->layer_time(other.device, dims, 512).measured_operators, 0);
  EXPECT_DOUBLE_EQ(other.model->roofline("L4").bandwidth_bytes_per_s, l4->memory_gb_per_s * 1e9);
  EXPECT_NE(other.basis.find("A40"), std::string::npos) << other.basis;  // GDDR: the A40's factors
  EXPECT_EQ(other.basis.find(" x "), std::string::npos) << other.basis;  // NVIDIA: its own peak
  // Another vendor's part takes the CUDA-fitted factors at the share of its peak and bandwidth its
  // kernels reach against CUDA's (the family defaults' ratio), and says so.
  const Accelerator* mi300x = catalog.value().find_accelerator("MI300X");
  AcceleratorOperators amd = operators_for(*mi300x);
  const EfficiencyFactors rocm = default_efficiency(*mi300x), cuda = vendor_default_efficiency("nvidia");
  ASSERT_LT(rocm.compute, cuda.compute);
  // Its peak at the ratio of the two parts' measured matmul shares, its bandwidth at the families'.
  EXPECT_DOUBLE_EQ(amd.model->roofline("MI300X").peak_flops,
                   *mi300x->peak_tflops[static_cast<size_t>(Precision::bf16)] * 1e12 *
                       *measured_matmul_share("MI300X") / *measured_matmul_share("H100"));
  EXPECT_DOUBLE_EQ(amd.model->roofline("MI300X").bandwidth_bytes_per_s,
                   mi300x->memory_gb_per_s * 1e9 * rocm.memory / cuda.memory);
  EXPECT_NE(amd.basis.find("MI300X's own peak x 0.64 and bandwidth x 0.875"), std::string::npos) << amd.basis;
  EXPECT_NE(amd.basis.find("measured matmul share 51.4% against H100's 80.3%"), std::string::npos) << amd.basis;
  // A part whose matmuls nobody measured the same way takes the families' ratio for both.
  const Accelerator* gaudi = catalog.value().find_accelerator("Gaudi2");
  AcceleratorOperators intel = operators_for(*gaudi);
  const EfficiencyFactors habana = default_efficiency(*gaudi);
  EXPECT_DOUBLE_EQ(intel.model->roofline("Gaudi2").peak_flops,
                   *gaudi->peak_tflops[static_cast<size_t>(Precision::bf16)] * 1e12 * habana.compute / cuda.compute);
  // The bound layer answers as layer_time does.
  auto bound = profiled.model->bind(profiled.device, dims);
  for (double tokens : {1.0, 7.0, 300.0, 5000.0})
    EXPECT_DOUBLE_EQ(bound.time_s(tokens), profiled.model->layer_time(profiled.device, dims, tokens).time_s) << tokens;
}

}  // namespace
}  // namespace gw
