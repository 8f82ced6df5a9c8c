#include "catalog/precision_support.h"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "catalog/embedded.h"
#include "core/csv.h"

namespace gw {

namespace {

struct SupportRow {
  std::string family;  // "*" for every family
  Precision precision = Precision::fp16;
  WeightFormat format = WeightFormat::plain;  // a row for one format (awq) before the precision's own
  PrecisionEngine engine = PrecisionEngine::serving;
  PrecisionSupport::Level level = PrecisionSupport::Level::runs;
  std::optional<Precision> requires_peak;
  std::string note, source;
};

// The shipped table, parsed once. It is part of the binary, so a malformed row is a build
// defect that the tests catch, not user input.
const std::vector<SupportRow>& support_rows() {
  static const std::vector<SupportRow> rows = [] {
    const std::string file = "<embedded>/precision_support.csv";
    auto table = parse_csv(embedded_catalog_file("precision_support.csv"), file);
    if (!table.ok()) throw std::logic_error(table.error().to_string());
    std::vector<SupportRow> out;
    for (const CsvRow& row : table.value().rows) {
      CsvRecord r(table.value(), row);
      SupportRow s;
      s.family = r.required_text("family");
      auto precision = parse_precision(r.required_text("precision"));
      const std::string engine = r.required_text("engine"), level = r.required_text("support");
      const std::string peak = r.text("requires_peak");
      if (!precision || (engine != "vllm" && engine != "training") || (level != "yes" && level != "as" && level != "no") ||
          (!peak.empty() && !parse_precision(peak)) || !r.ok())
        throw std::logic_error(fmt::format("{}:{}: malformed precision support row", file, row.line));
      s.precision = *precision;
      s.format = weight_format_of(r.required_text("precision"));
      s.engine = engine == "vllm" ? PrecisionEngine::serving : PrecisionEngine::training;
      s.level = level == "yes" ? PrecisionSupport::Level::runs
                : level == "as" ? PrecisionSupport::Level::runs_as
                                : PrecisionSupport::Level::none;
      if (!peak.empty()) s.requires_peak = parse_precision(peak);
      s.note = r.text("note");
      s.source = r.text("source");
      out.push_back(std::move(s));
    }
    return out;
  }();
  return rows;
}

// How a family is named in reasons: the architecture for NVIDIA, the product line otherwise, so
// parts that share a reason share its words (and a report names the reason once for them all).
std::string reason_subject(const Accelerator& a) {
  const std::string arch = nvidia_architecture(a);
  // The parts of that family without fp4 tensor cores are the Ada and Hopper ones.
  if (arch == "Ada/Hopper/Blackwell" && !a.peak(Precision::fp4)) return "Ada/Hopper";
  if (!arch.empty()) return arch;
  if (a.vendor == "google") return "Google TPU";
  if (a.vendor == "amd") return "AMD Instinct";
  if (a.vendor == "intel") return "Intel Gaudi";
  return a.name;
}

}  // namespace

std::string nvidia_architecture(const Accelerator& a) {
  if (a.vendor != "nvidia") return "";
  if (a.peak(Precision::fp8)) return "Ada/Hopper/Blackwell";
  if (a.peak(Precision::bf16)) return "Ampere";
  if (a.peak(Precision::int4)) return "Turing";  // int4 tensor cores came with Turing
  return "Pascal/Volta";
}

std::string accelerator_family(const Accelerator& a) {
  if (a.vendor == "nvidia") {
    std::string arch = nvidia_architecture(a);
    if (arch == "Ada/Hopper/Blackwell") return "nvidia-ada-hopper-blackwell";
    if (arch == "Ampere") return "nvidia-ampere";
    if (arch == "Turing") return "nvidia-turing";
    return "nvidia-pascal-volta";
  }
  if (a.vendor == "amd") return "amd-instinct";
  if (a.vendor == "google") return "google-tpu";
  if (a.vendor == "intel") return "intel-gaudi";
  return a.vendor;
}

PrecisionSupport precision_support(const Accelerator& a, Precision weights, PrecisionEngine engine, WeightFormat format) {
  const std::string family = accelerator_family(a);
  const SupportRow* match = nullptr;
  for (const SupportRow& row : support_rows()) {
    if (row.engine != engine || row.precision != weights || (row.family != family && row.family != "*")) continue;
    if (row.format != WeightFormat::plain && row.format != format) continue;
    // The format's own row wins over the precision's.
    if (!match || (match->format == WeightFormat::plain && row.format != WeightFormat::plain)) match = &row;
  }
  if (match) {
    const SupportRow& row = *match;
    PrecisionSupport s;
    s.source = row.source;
    s.level = row.level;
    // A part with the peak runs it as asked; without it, a "yes" row refuses it and an "as" row
    // runs it as its note says (MXFP4: native on fp4 tensor cores, weight-only elsewhere).
    const bool has_peak = !row.requires_peak || a.peak(*row.requires_peak).value_or(0) > 0;
    if (row.requires_peak && has_peak) s.level = PrecisionSupport::Level::runs;
    if (!has_peak && row.level == PrecisionSupport::Level::runs) s.level = PrecisionSupport::Level::none;
    if (s.level != PrecisionSupport::Level::runs) s.note = reason_subject(a) + " has " + row.note;
    return s;
  }
  return {};
}

std::optional<std::string> unsupported_precision(const Accelerator& a, Precision weights, PrecisionEngine engine,
                                                 WeightFormat format) {
  PrecisionSupport s = precision_support(a, weights, engine, format);
  if (s.level == PrecisionSupport::Level::none) return s.note;
  return std::nullopt;
}

std::string precision_note(const Accelerator& a, Precision weights, PrecisionEngine engine, WeightFormat format) {
  PrecisionSupport s = precision_support(a, weights, engine, format);
  return s.level == PrecisionSupport::Level::runs_as ? s.note : "";
}

}  // namespace gw
