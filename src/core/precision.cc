#include "core/precision.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "core/text.h"

namespace gw {

namespace {
constexpr std::array<std::string_view, kPrecisionCount> kNames = {"fp32", "tf32", "fp16", "bf16",
                                                                  "fp8",  "int8", "fp4",  "int4"};
}

std::string_view precision_name(Precision precision) {
  return kNames[static_cast<size_t>(precision)];
}

std::optional<Precision> parse_precision(std::string_view text) {
  std::string lower = to_lower(text);
  if (lower == "float32") lower = "fp32";
  if (lower == "float16" || lower == "half") lower = "fp16";
  if (lower == "bfloat16") lower = "bf16";
  // Quantization formats by their usual names: AWQ and GPTQ store 4-bit weights (W4A16).
  if (lower == "awq" || lower == "gptq" || lower == "w4a16") lower = "int4";
  if (lower == "w8a8" || lower == "int8-w8a8") lower = "int8";
  // OCP microscaling fp4 (gpt-oss's experts): fp4 elements with a shared scale per 32.
  if (lower == "mxfp4") lower = "fp4";
  for (size_t i = 0; i < kNames.size(); ++i)
    if (lower == kNames[i]) return static_cast<Precision>(i);
  return std::nullopt;
}

WeightFormat weight_format_of(std::string_view text) {
  const std::string lower = to_lower(text);
  if (lower == "awq") return WeightFormat::awq;
  if (lower == "gptq") return WeightFormat::gptq;
  if (lower == "mxfp4") return WeightFormat::mxfp4;
  return WeightFormat::plain;
}

std::string_view weight_format_name(WeightFormat format) {
  switch (format) {
    case WeightFormat::awq: return "awq";
    case WeightFormat::gptq: return "gptq";
    case WeightFormat::mxfp4: return "mxfp4";
    case WeightFormat::plain: break;
  }
  return "";
}

double quantized_weight_bits(Precision precision, WeightFormat format, int group_size) {
  if (format == WeightFormat::mxfp4) return 4.0 + 8.0 / 32;  // an 8-bit power-of-two scale per 32
  if (precision == Precision::int4 || precision == Precision::fp4) return 4.0 + 20.0 / group_size;
  return precision_bytes(precision) * 8;
}

std::string quantized_weight_bits_formula(Precision precision, WeightFormat format, int group_size) {
  if (format == WeightFormat::mxfp4) return "(4 + 8/32) bits (MXFP4)";
  if (precision == Precision::int4 || precision == Precision::fp4) return fmt::format("(4 + 20/{}) bits", group_size);
  return fmt::format("{} bits", precision_bytes(precision) * 8);
}

bool quantizes_experts_only(WeightFormat format, bool moe) { return format == WeightFormat::mxfp4 && moe; }

double precision_bytes(Precision precision) {
  switch (precision) {
    case Precision::fp32:
    case Precision::tf32: return 4;
    case Precision::fp16:
    case Precision::bf16: return 2;
    case Precision::fp8:
    case Precision::int8: return 1;
    case Precision::fp4:
    case Precision::int4: return 0.5;
  }
  return 4;
}

std::string precision_choices() {
  std::string out;
  for (auto name : kNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out + " (awq, gptq: int4; mxfp4: fp4 microscaled)";
}

}  // namespace gw
