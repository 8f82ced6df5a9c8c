#include "perf/decode_attention_kernel.h"

namespace gw {

const std::vector<std::string>& decode_attention_kernels() {
  static const std::vector<std::string> names = {"grouped", "per-query-head"};
  return names;
}

std::optional<bool> decode_attention_per_query_head(std::string_view kernel) {
  if (kernel == decode_attention_kernels()[0]) return false;
  if (kernel == decode_attention_kernels()[1]) return true;
  return std::nullopt;
}

std::string unknown_decode_attention_message(std::string_view kernel) {
  std::string names;
  for (const auto& name : decode_attention_kernels()) names += (names.empty() ? "" : ", ") + name;
  return "'" + std::string(kernel) + "' is not one of " + names;
}

}  // namespace gw
