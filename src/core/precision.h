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
// quantization formats "awq", "gptq", "w4a16" (int4), "w8a8" (int8) and "mxfp4" (fp4).
std::optional<Precision> parse_precision(std::string_view text);
// How 4-bit weights were quantized, where the name said: AWQ and GPTQ store the same bytes
// (W4A16) but need different kernels (AWQ's need Turing or newer, GPTQ's run on Volta). MXFP4
// (the OCP microscaling format gpt-oss ships) stores fp4 elements with an 8-bit scale per 32, in
// a MoE model's routed experts only (attention, router and embeddings stay 16-bit).
enum class WeightFormat { plain, awq, gptq, mxfp4 };
// The format a precision's name gives ("awq", "gptq"; plain for every other name).
WeightFormat weight_format_of(std::string_view text);
// "awq", "gptq", "mxfp4", or "" for plain.
std::string_view weight_format_name(WeightFormat format);
// Bytes per stored element: tf32 is stored as fp32; 4-bit types pack two per byte.
double precision_bytes(Precision precision);
// Bits a quantized layer-matrix weight takes with its scales: 4-bit groups carry an fp16 scale
// and a 4-bit zero point per group_size weights (AWQ/GPTQ layout), MXFP4 an 8-bit scale per 32;
// other precisions their element's bits.
double quantized_weight_bits(Precision precision, WeightFormat format, int group_size = 128);
// Those bits as a formula: "(4 + 8/32) bits (MXFP4)", "(4 + 20/128) bits".
std::string quantized_weight_bits_formula(Precision precision, WeightFormat format, int group_size = 128);
// Whether a format quantizes a MoE model's routed experts only, the rest kept 16-bit: MXFP4, as
// gpt-oss ships it (its quantization_config's modules_to_not_convert).
bool quantizes_experts_only(WeightFormat format, bool moe);
// The list of accepted names, for error messages.
std::string precision_choices();

}  // namespace gw
