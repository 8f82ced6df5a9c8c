// Kubernetes manifests for replicas that span nodes (ManifestInput::nodes_per_replica > 1): a
// LeaderWorkerSet whose groups are the replicas, one pod per node holding its whole GPUs (the
// leader runs the Ray head and vLLM's server with tensor parallelism within a node and one
// pipeline stage per node; the workers join its Ray cluster), a Service on the leaders, the
// autoscalers (KEDA's ScaledObject and the HPA on the leaders' queue depth, scaling the
// LeaderWorkerSet in whole groups; none when min_replicas == max_replicas, never to zero), and
// the Karpenter NodePool for the most groups the autoscaler may ask for.
#pragma once

#include <vector>

#include "k8s/manifests.h"

namespace gw {

// Where the layout comes from, for comments and --explain.
inline constexpr const char* kLeaderWorkerSetSource =
    "LeaderWorkerSet leaderworkerset.x-k8s.io/v1 and its vLLM example (kubernetes-sigs/lws, docs/examples/vllm/GPU/lws.yaml, "
    "commit 060ab4d, read 2026-12-05); vLLM's multi-node helper examples/online_serving/multi-node-serving.sh";

std::vector<Manifest> multi_node_manifests(const ManifestInput& input);

}  // namespace gw
