// Achievable fractions of an accelerator's peak rates, by family, and per-accelerator overrides
// from a calibration file (`gpuwise calibrate`). The roofline divides by these.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "catalog/accelerator.h"
#include "core/error.h"

namespace gw {

struct EfficiencyFactors {
  double compute = 0.60;                // of dense 16-bit peak, for large matrix multiplies
  double compute_8bit = 0.40;           // of dense fp8/int8 peak: 8-bit GEMMs reach less of theirs
  double memory = 0.80;                 // of HBM/GDDR bandwidth, for streaming weights and KV
  double network = 0.70;                // of interconnect bandwidth, for all-reduce
  double overhead_per_layer_s = 20e-6;  // kernel launches and scheduling per layer per step
  // By operator: 8-bit (W8A8) GEMMs' achieved share of their peak over 16-bit GEMMs' share of
  // theirs (the 16-bit share is fitted to measured profiles; there are no 8-bit profiles).
  // Fitted on the fit half of the published fp8 rows in bench/perf_measurements.csv (every other
  // row) and measured on the other half there (bench/perf_accuracy.cc); the rows, the fit's date
  // and the value are beside its definition in efficiency.cc.
  double operator_compute_8bit_scale = kOperatorCompute8bitScale;
  static const double kOperatorCompute8bitScale;  // efficiency.cc
  std::string source;                   // where the figures come from
};

// Defaults by family (the catalog's vendor: nvidia, amd, intel, google), with their sources
// (documented in src/perf/README.md); an accelerator's are its vendor's.
EfficiencyFactors vendor_default_efficiency(std::string_view vendor);
EfficiencyFactors default_efficiency(const Accelerator& accelerator);

// Per-accelerator factors fitted from measurements.
class Calibration {
 public:
  // CSV: accelerator,compute,compute_8bit,memory,network,overhead_per_layer_s,measurements,median_abs_error
  static Result<Calibration> load(const std::string& path);
  std::string to_csv() const;

  void set(const std::string& accelerator, const EfficiencyFactors& factors) { factors_[accelerator] = factors; }
  std::optional<EfficiencyFactors> find(const std::string& accelerator) const;
  const std::map<std::string, EfficiencyFactors>& all() const { return factors_; }
  std::map<std::string, std::pair<int, double>> fit_quality;  // accelerator -> (measurements, median error)

 private:
  std::map<std::string, EfficiencyFactors> factors_;
};

// Calibrated factors when present, else the family default.
EfficiencyFactors efficiency_for(const Accelerator& accelerator, const Calibration* calibration);

}  // namespace gw
