#include "perf/efficiency.h"

#include <fmt/format.h>
#include <map>

#include "core/csv.h"
#include "core/text.h"

namespace gw {

// Defined here so that a refit rebuilds one file. Fitted by bench/perf_accuracy.cc on 2026-12-03
// on every other fp8 row on an NVIDIA part of bench/perf_measurements.csv (197 rows: TensorRT-LLM v0.5/v0.6.1
// tables on H100 and L40S, Llama 2 and Falcon 180B, 2023; NIM 1.8 on H100, 2025; TensorRT-LLM v0.17 and v1.0 throughput
// tables for Llama 3.x, Mistral 7B, Mixtral 8x7B and 8x22B on H100, H200, GH200 and L40S, 2025; MLPerf
// Inference v5.0 Offline and Server, Llama 2 70B and Mixtral 8x7B on H200 and H100, and v5.1, Llama 3.1 8B
// Offline on H100 (vLLM) and Server on H200, 2025), after the 2023 engines' decode kernel was charged its
// fp8 cache's elements at the 16-bit rate; refitted 2026-12-04 (0.935 before) after MoE experts became one fused
// kernel per matrix and four DeepSeek-V3 rows on H200 (SGLang v0.5.7) joined, 199 rows.
// Below 1: those engines' fp8 GEMMs reach a little less of their (doubled) peak than the PyTorch
// fp16 GEMMs profiled by Vidur reach of theirs.
const double EfficiencyFactors::kOperatorCompute8bitScale = 0.912;

EfficiencyFactors vendor_default_efficiency(std::string_view vendor) {
  EfficiencyFactors f;
  if (vendor == "amd") {
    // ROCm kernels reach a lower share of MI300X peak than CUDA on H100 (SemiAnalysis, "MI300X vs
    // H100 vs H200 benchmark", 2024-12: ~45% of bf16 peak in GEMM-heavy training, ~60-70% of HBM).
    f.compute = 0.45;
    f.compute_8bit = 0.35;
    f.memory = 0.70;
    f.source = "family default (AMD Instinct): compute 0.45 (8-bit 0.35), memory 0.70";
  } else if (vendor == "intel") {
    // No measurement of whole models on Gaudi backs these. Matmuls alone reach more: Maximum
    // Achievable Matmul FLOPS (github.com/stas00/ml-engineering, its older v1 table) measured
    // Gaudi 2 at 429.3 of 432 bf16 TFLOPS (99.4%) and Gaudi 3 at 1,288.8 of 1,677 (76.8%), against
    // H100's 80.1% in the same table; not used, as that table's method is superseded.
    f.compute = 0.50;
    f.compute_8bit = 0.40;
    f.memory = 0.70;
    f.source = "family default (Intel Gaudi): compute 0.50 (8-bit 0.40), memory 0.70";
  } else if (vendor == "google") {
    // MaxText's published training MFU: Llama2-70B 57% on v5e-256 and 65% on v5p-128 (getting
    // started/Run_Llama2.md); 16B-128B models 56-67% on one v5e-256 (configs/v5e).
    f.compute = 0.55;
    f.compute_8bit = 0.45;
    f.memory = 0.80;
    f.overhead_per_layer_s = 10e-6;  // XLA compiles the whole step
    f.source = "family default (TPU, XLA-compiled step): compute 0.55 (8-bit 0.45), memory 0.80";
  } else {
    // Decode on NVIDIA data-center GPUs streams weights at ~75-85% of HBM bandwidth; 16-bit
    // prefill GEMMs reach ~60-65% of dense peak and fp8 ones ~40% of the fp8 peak (TensorRT-LLM
    // first-token latencies and NIM TTFTs in bench/perf_measurements.csv).
    f.source = "family default (NVIDIA): compute 0.60 (8-bit 0.40), memory 0.80";
  }
  return f;
}

EfficiencyFactors default_efficiency(const Accelerator& a) { return vendor_default_efficiency(a.vendor); }

Result<Calibration> Calibration::load(const std::string& path) {
  std::string text, message;
  if (!read_file(path, text, message)) return Error{path, 0, "--calibration", "cannot read: " + message};
  auto table = parse_csv(text, path);
  if (!table.ok()) return table.error();
  Calibration calibration;
  std::map<std::string, int> first_line;
  for (const auto& column : {"accelerator", "compute", "memory"})
    if (table.value().column(column) < 0) return Error{path, 1, column, "missing column in the header"};
  for (const auto& row : table.value().rows) {
    CsvRecord record(table.value(), row);
    std::string name = record.required_text("accelerator");
    if (!name.empty() && !first_line.emplace(name, record.line()).second)
      return Error{path, record.line(), "accelerator",
                   fmt::format("'{}' is calibrated twice (first on line {}): keep one row", name, first_line[name])};
    EfficiencyFactors f;
    f.compute = record.number("compute", 0.01, 1.0);
    f.compute_8bit = record.optional_number("compute_8bit", 0.01, 1.0).value_or(f.compute * 2 / 3);
    f.memory = record.number("memory", 0.01, 1.0);
    f.network = record.optional_number("network", 0.01, 1.0).value_or(0.70);
    f.overhead_per_layer_s = record.optional_number("overhead_per_layer_s", 0, 0.1).value_or(20e-6);
    if (!record.ok()) return record.error();
    f.source = fmt::format("calibrated from measurements ({})", path);
    calibration.set(name, f);
  }
  return calibration;
}

std::string Calibration::to_csv() const {
  std::string out = "accelerator,compute,compute_8bit,memory,network,overhead_per_layer_s,measurements,median_abs_error\n";
  for (const auto& [name, f] : factors_) {
    auto quality = fit_quality.find(name);
    out += fmt::format("{},{:.4f},{:.4f},{:.4f},{:.4f},{:.3g},{},{}\n", name, f.compute, f.compute_8bit, f.memory, f.network,
                       f.overhead_per_layer_s, quality == fit_quality.end() ? 0 : quality->second.first,
                       quality == fit_quality.end() ? std::string() : fmt::format("{:.4f}", quality->second.second));
  }
  return out;
}

std::optional<EfficiencyFactors> Calibration::find(const std::string& accelerator) const {
  for (const auto& [name, f] : factors_)
    if (normalize_name(name) == normalize_name(accelerator)) return f;
  return std::nullopt;
}

EfficiencyFactors efficiency_for(const Accelerator& accelerator, const Calibration* calibration) {
  if (calibration)
    if (auto f = calibration->find(accelerator.name)) return *f;
  return default_efficiency(accelerator);
}

}  // namespace gw
