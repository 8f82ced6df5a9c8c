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
  double memory_gib = 0;                 // the datasheet's capacity
  // What the device reports to software (nvidia-smi memory.total, ECC on for datacenter parts),
  // when measured; the datasheet's figure otherwise.
  std::optional<double> memory_mib;
  std::string memory_mib_source;
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
  // The memory software can allocate from: the reported figure where known.
  double memory_bytes() const { return memory_mib ? *memory_mib * 1024.0 * 1024.0 : memory_gib * 1024.0 * 1024.0 * 1024.0; }
  double reported_gib() const { return memory_bytes() / (1024.0 * 1024.0 * 1024.0); }
};

// Column names of accelerators.csv, in order.
const std::vector<std::string>& accelerator_columns();

// Reads one row of accelerators.csv; errors name file, line and field.
Result<Accelerator> parse_accelerator(const CsvTable& table, const CsvRow& row);

}  // namespace gw
