// Multi-head latent attention (DeepSeek-V2/V3) by operator: the projections around the
// attention kernel, as vLLM and SGLang run them in decode. The query goes down to q_lora_rank
// and back up per head; keys and values live in the cache as one kv_lora_rank latent plus a
// shared rotary key, so the per-head key up-projection is absorbed into the query (one batched
// GEMM, nope -> kv_lora per head) and the value up-projection applied to the attention's output
// (kv_lora -> v per head). The same weights and FLOPs per token as decompressing with kv_b_proj
// in prefill, one launch more.
#pragma once

#include "perf/layer_operators.h"

namespace gw {

struct PerfSetup;

// The GEMMs of one MLA layer on one device of the tensor-parallel group, in order: the fused
// down-projections of query and latent (replicated: every device computes them in full), the
// query up-projection, the absorbed key and value up-projections (16-bit: engines keep them
// dequantized for the batched GEMM), the output projection. Without q_lora_rank the query is
// one column-parallel projection and the latent's its own replicated GEMM.
struct MlaGemm {
  const char* name;
  OperatorShape shape;
  bool sixteen_bit;  // run at 16 bits whatever the weights' precision
};
std::vector<MlaGemm> mla_gemms(const ModelArch& arch, int tensor_parallel);

// One MLA layer's operators besides the attention kernel at `tokens`: its GEMMs by the fitted
// roofline (`precision` for the quantized ones), the input, query-latent and KV-latent norms and
// the rotary embedding of the query heads' and shared key's rotary parts as elementwise kernels,
// the post-attention norm and residual add as a dense layer's. measured / roofline as
// LayerOperatorModel::LayerTime counts them.
double mla_attention_side_s(const ModelArch& arch, const PerfSetup& setup, double tokens, const GemmPrecision& precision,
                            int* measured = nullptr, int* roofline = nullptr);

}  // namespace gw
