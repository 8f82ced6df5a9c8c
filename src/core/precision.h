// Numeric precisions of weights, activations and peak rates, and their sizes in bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gw {

enum class Precision { fp32, tf32, fp16, bf16, fp8, int8, fp4, int4 };
inline constexpr int kPrecisionCount = 8;

std::string_view precision_name(Precision precision);
// Accepts the names above, case-insensitive, plus "float32", "float16", "bfloat16", "half", and the
// quantization formats "awq", "gptq", "w4a16" (int4) and "w8a8" (int8).
std::optional<Precision> parse_precision(std::string_view text);
// How 4-bit weights were quantized, where the name said: AWQ and GPTQ store the same bytes
// (W4A16) but need different kernels (AWQ's need Turing or newer, GPTQ's run on Volta).
enum class WeightFormat { plain, awq, gptq };
// The format a precision's name gives ("awq", "gptq"; plain for every other name).
WeightFormat weight_format_of(std::string_view text);
// "awq", "gptq", or "" for plain.
std::string_view weight_format_name(WeightFormat format);
// Bytes per stored element: tf32 is stored as fp32; 4-bit types pack two per byte.
double precision_bytes(Precision precision);
// The list of accepted names, for error messages.
std::string precision_choices();

}  // namespace gw
