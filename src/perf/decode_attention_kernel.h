// The decode attention kernels an engine may run, by the names users give them (perf
// --decode-attention, the measurements' decode_attention column): "grouped", one read of each KV
// head's cache for its group of query heads (FlashAttention, FlashInfer, TensorRT-LLM's XQA), or
// "per-query-head", a thread block per query head (TensorRT-LLM before XQA, FasterTransformer).
// See PerfSetup::decode_attention_per_query_head.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

// The names, grouped (the default) first.
const std::vector<std::string>& decode_attention_kernels();
// Whether the named kernel runs a thread block per query head; nullopt for a name that is
// neither kernel.
std::optional<bool> decode_attention_per_query_head(std::string_view kernel);
// "'NAME' is not one of grouped, per-query-head", for errors.
std::string unknown_decode_attention_message(std::string_view kernel);

}  // namespace gw
