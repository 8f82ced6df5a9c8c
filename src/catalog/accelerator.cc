#include "catalog/accelerator.h"

#include "core/text.h"

#include <fmt/format.h>

namespace gw {

namespace {
// Peak-rate columns, in Precision order.
const std::array<const char*, kPrecisionCount> kPeakColumns = {
    "fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops",
    "fp8_tflops",  "int8_tops",   "fp4_tflops",  "int4_tops"};
}  // namespace

const std::vector<std::string>& accelerator_columns() {
  static const std::vector<std::string> columns = {
      "name", "aliases", "vendor", "memory_gib", "memory_gb_per_s", "fp32_tflops", "tf32_tflops",
      "fp16_tflops", "bf16_tflops", "fp8_tflops", "int8_tops", "fp4_tflops", "int4_tops",
      "interconnect", "interconnect_gb_per_s", "pcie_gen", "tdp_watts", "class", "source",
      "as_of", "memory_mib", "memory_mib_source"};
  return columns;
}

Result<Accelerator> parse_accelerator(const CsvTable& table, const CsvRow& row) {
  CsvRecord record(table, row);
  Accelerator accelerator;
  accelerator.name = record.required_text("name");
  for (auto& alias : split(record.text("aliases"), ';'))
    if (!alias.empty()) accelerator.aliases.push_back(alias);
  accelerator.vendor = record.text("vendor");
  accelerator.memory_gib = record.number("memory_gib", 0.001, 1e6);
  accelerator.memory_gb_per_s = record.number("memory_gb_per_s", 0.001, 1e7);
  for (size_t i = 0; i < kPeakColumns.size(); ++i)
    accelerator.peak_tflops[i] = record.optional_number(kPeakColumns[i], 0.001, 1e7);
  accelerator.interconnect = record.text("interconnect");
  accelerator.interconnect_gb_per_s = record.optional_number("interconnect_gb_per_s", 0, 1e7);
  if (auto gen = record.optional_number("pcie_gen", 1, 9)) accelerator.pcie_gen = static_cast<int>(*gen);
  accelerator.tdp_watts = record.optional_number("tdp_watts", 1, 1e5);
  accelerator.device_class = record.text("class");
  if (record.ok() && accelerator.device_class != "inference" && accelerator.device_class != "training" &&
      accelerator.device_class != "both") {
    return Error{table.file, row.line, "class",
                 "'" + accelerator.device_class + "' is not one of inference, training, both"};
  }
  accelerator.memory_mib = record.optional_number("memory_mib", 1, 1e9);
  accelerator.memory_mib_source = record.text("memory_mib_source");
  if (record.ok() && accelerator.memory_mib && accelerator.memory_mib_source.empty())
    return Error{table.file, row.line, "memory_mib_source", "a measured memory_mib needs its source"};
  if (record.ok() && accelerator.memory_mib && *accelerator.memory_mib > accelerator.memory_gib * 1024 * 1.1)
    return Error{table.file, row.line, "memory_mib",
                 fmt::format("{:.0f} MiB is more than memory_gib ({:.0f} GiB) allows", *accelerator.memory_mib, accelerator.memory_gib)};
  accelerator.source = record.required_text("source");
  accelerator.as_of = record.required_text("as_of");
  if (!record.ok()) return record.error();
  return accelerator;
}

}  // namespace gw
