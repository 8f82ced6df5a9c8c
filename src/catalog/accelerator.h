// An accelerator model (GPU, TPU chip, Gaudi card): memory, bandwidth, dense peak rates.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/csv.h"
#include "core/precision.h"

namespace gw {

struct Accelerator {
  std::string name;
  std::vector<std::string> aliases;  // other spellings clouds use ("A100", "H100-SXM")
  std::string vendor;
  double memory_gib = 0;
  double memory_gb_per_s = 0;
  // Dense (not sparse) peak, TFLOPS or TOPS, by Precision; nullopt where the hardware has none.
  std::array<std::optional<double>, kPrecisionCount> peak_tflops{};
  std::string interconnect;                      // nvlink4, infinity-fabric, ici, none, ...
  std::optional<double> interconnect_gb_per_s;   // per device, bidirectional aggregate
  std::optional<int> pcie_gen;
  std::optional<double> tdp_watts;
  std::string device_class;  // inference, training or both
  std::string source;
  std::string as_of;

  std::optional<double> peak(Precision precision) const {
    return peak_tflops[static_cast<size_t>(precision)];
  }
  double memory_bytes() const { return memory_gib * 1024.0 * 1024.0 * 1024.0; }
};

// Column names of accelerators.csv, in order.
const std::vector<std::string>& accelerator_columns();

// Reads one row of accelerators.csv; errors name file, line and field.
Result<Accelerator> parse_accelerator(const CsvTable& table, const CsvRow& row);

}  // namespace gw
