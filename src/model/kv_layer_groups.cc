#include "model/kv_layer_groups.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace gw {

long long sliding_window_tokens(int sliding_window, int block_tokens) {
  const long long block = std::max(1, block_tokens);
  return (sliding_window + block - 1) / block * block + (block > 1 ? block : 0);
}

KvLayerGroups kv_layer_groups(const ModelArch& arch, int block_tokens) {
  KvLayerGroups g;
  if (!arch.sliding_window || arch.num_layers <= 0) return g;
  int sliding = 0;
  for (int layer = 0; layer < arch.num_layers; ++layer) sliding += arch.is_sliding_layer(layer);
  if (sliding == 0) return g;
  const int full = arch.num_layers - sliding;
  // vLLM groups layers so that every group has as many layers: their greatest common divisor.
  const int per_group = std::gcd(full, sliding);
  g.layers_per_group = per_group;
  g.full_groups = full / per_group;
  g.sliding_groups = sliding / per_group;
  const int block = std::max(1, block_tokens);
  g.sliding_window = *arch.sliding_window;
  g.window_blocks = sliding_window_tokens(*arch.sliding_window, block) / block;
  return g;
}

bool hybrid_kv_cache_manager(std::string_view vendor, bool kv_connector) {
  return !kv_connector && (vendor == "nvidia" || vendor == "amd");
}

std::string no_hybrid_kv_cache_reason(std::string_view vendor, bool kv_connector) {
  if (kv_connector) return "vLLM turns its hybrid KV cache manager off where a KV connector moves the cache (disaggregation)";
  if (!hybrid_kv_cache_manager(vendor, false)) return "vLLM's hybrid KV cache manager runs on GPUs only (CUDA, ROCm)";
  return {};
}

long long KvLayerGroups::blocks_for(long long sequence_blocks) const {
  return full_groups * sequence_blocks + sliding_groups * std::min(sequence_blocks, window_blocks);
}

long long KvLayerGroups::sequence_blocks_within(long long blocks) const {
  if (blocks <= 0) return 0;
  const long long through_window = static_cast<long long>(groups()) * window_blocks;
  if (!windowed() || blocks < through_window) return blocks / groups();
  if (full_groups == 0) return 1LL << 50;
  return window_blocks + (blocks - through_window) / full_groups;
}

double KvLayerGroups::all_layer_tokens(double tokens, int block_tokens) const {
  if (!windowed()) return tokens;
  const double window = static_cast<double>(window_blocks) * std::max(1, block_tokens);
  return (full_groups * tokens + sliding_groups * std::min(tokens, window)) / groups();
}

std::string KvLayerGroups::describe(int block_tokens) const {
  if (!windowed()) return {};
  return fmt::format("{} full-attention + {} sliding-window layers (window {}: {} blocks of {} kept per sequence)",
                     full_groups * layers_per_group, sliding_groups * layers_per_group, sliding_window, window_blocks,
                     std::max(1, block_tokens));
}

}  // namespace gw
