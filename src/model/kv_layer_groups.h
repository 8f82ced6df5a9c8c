// How a paged KV cache holds a sequence when some layers attend within a sliding window, as
// vLLM V1's hybrid allocator does (Mistral, Gemma 2 and 3, gpt-oss): the layers fall into groups
// of equal size, each group's blocks holding block_tokens tokens of its layers; a full-attention
// group keeps a block for every block of the sequence, a sliding group only the blocks its window
// reaches (the blocks behind it are freed as it slides). A model without a window is one full
// group: a block per block of tokens, as before.
#pragma once

#include <string>
#include <string_view>

#include "model/model_arch.h"

namespace gw {

struct KvLayerGroups {
  int full_groups = 1;
  int sliding_groups = 0;
  int layers_per_group = 0;     // 0: one group of every layer
  long long window_blocks = 0;  // a sliding group's blocks for a sequence past its window
  int sliding_window = 0;       // tokens

  int groups() const { return full_groups + sliding_groups; }
  bool windowed() const { return sliding_groups > 0; }
  // Group blocks a sequence spanning `sequence_blocks` blocks of tokens holds.
  long long blocks_for(long long sequence_blocks) const;
  // The most blocks of tokens `blocks` group blocks hold (a very large number where every group
  // slides: a sequence past the window grows no more).
  long long sequence_blocks_within(long long blocks) const;
  // The tokens of every layer that hold as many bytes as a sequence of `tokens` tokens holds
  // (block rounding aside): what a cache sized in all-layer tokens fits.
  double all_layer_tokens(double tokens, int block_tokens) const;
  // "18 full + 18 sliding layers (window 128: 9 blocks of 16)", or empty without a window.
  std::string describe(int block_tokens) const;
};

// The groups of `arch`'s layers for blocks of `block_tokens` (1: unpaged, the window exactly).
KvLayerGroups kv_layer_groups(const ModelArch& arch, int block_tokens);

// Whether vLLM keeps the groups apart (its hybrid KV cache manager) on a deployment: on GPUs
// (CUDA, ROCm) only, and not where a KV connector moves the cache between prefill and decode
// replicas (vLLM's VllmConfig.__post_init__ turns the manager off for --kv-transfer-config and on
// non-GPU platforms: TPUs and Gaudi keep every layer's every token, as a model without a window).
bool hybrid_kv_cache_manager(std::string_view vendor, bool kv_connector);
// `why` hybrid_kv_cache_manager is false, for the assumptions ("" where it is true).
std::string no_hybrid_kv_cache_reason(std::string_view vendor, bool kv_connector);

// Tokens a paged window spans while it slides: one block more than the window (none unpaged).
long long sliding_window_tokens(int sliding_window, int block_tokens);

}  // namespace gw
