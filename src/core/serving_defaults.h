// Serving defaults that fit, plan, simulate and the Kubernetes manifests share: one home each,
// with where it comes from, so that a plan, its simulation and its manifests assume the same.
#pragma once

namespace gw {

// Share of device memory the serving engine may use: vLLM's gpu_memory_utilization default
// (https://docs.vllm.ai/en/v0.9.2/api/vllm/config.html, CacheConfig, as of 2025-07).
inline constexpr double kUsableMemoryFraction = 0.90;

// Memory per device held outside the engine's share by the runtime (CUDA context, NCCL buffers),
// assumed; --overhead-gib changes it.
inline constexpr double kRuntimeOverheadGib = 1.0;

// Tokens one engine step may process under chunked prefill, the scheduler's budget (vLLM's
// max_num_batched_tokens with chunked prefill enabled, V0 default 2048, same source).
inline constexpr int kStepTokenBudget = 2048;

// Tokens per paged KV cache block: vLLM's default block_size.
inline constexpr int kKvBlockTokens = 16;

// Tokens of one prefill pass whose activations fit must hold: larger than the step budget on
// purpose, so that memory is sized for an engine configured with vLLM V1's online-serving
// default of 8192 (same source, SchedulerConfig).
inline constexpr long long kActivationPeakTokens = 8192;

// One call from a serving engine to its worker and the reply, where the engine pulls a request's
// KV between its steps (DistServe awaits one per request): a Ray actor's synchronous call, 2,025
// a second (ray-project/ray's microbenchmark, 1_1_actor_calls_sync, in PR #51427 of 2025-03-17;
// read 2026-12-06).
inline constexpr double kEngineWorkerCallS = 1.0 / 2025;

}  // namespace gw
