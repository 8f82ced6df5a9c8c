// Kubernetes manifests for a plan that splits prefill from decode: a Deployment per pool (vLLM
// with the NIXL KV connector, each pod labelled with its role), the vLLM Router in front of them
// (it finds the pools' pods by label through the Kubernetes API, sends each request's prompt to a
// prefill pod and its decoding to a decode pod, and the KV goes from one to the other), the
// router's ServiceAccount, Role and RoleBinding (pods: get, list, watch in its namespace), the
// Service clients call (the router's), and a Karpenter NodePool per pool (each pool spreads over
// its own nodes, as the plan rents them). Where simulating the pools over the service's traffic
// found that scaling each on its own signal meets the SLO for less than fixed pools, each pool
// also gets a headless Service (its pods' metrics), a KEDA ScaledObject and the HPA alternative
// on that pool's signal (queue depth, with the ServiceMonitor that labels the pool's vLLM series
// service="<name>-<role>"; or the prefill pool's GPU duty cycle, dcgm-exporter's), and its
// NodePool holds its most replicas; else the pools keep the counts the plan verified.
#pragma once

#include <string>
#include <vector>

#include "k8s/manifests.h"
#include "k8s/vllm_router_manifests.h"

namespace gw {

struct DisaggregatedManifestInput {
  ManifestInput prefill;  // role "prefill": its replicas, devices and pod resources
  ManifestInput decode;   // role "decode"
  std::string why_layout;  // the plan's figures behind the two pools
  std::string link;        // the KV link the plan assumed, in words
  // The spec's engine pulls each request's KV between its decode steps (kv_transfer:
  // between_steps, DistServe's) and the plan was sized so; the vLLM written here does not.
  bool planned_kv_pulled_between_steps = false;
  // Each pool scaled between its min_replicas and max_replicas on its signal (ManifestInput's
  // threshold or duty-cycle target); false: fixed at its replicas. why_scaling: the figures
  // behind either.
  bool autoscaled = false;
  std::string why_scaling;
  std::string router_image = kVllmRouterImage;
  std::string router_policy = "round_robin";  // both halves' (--prefill-policy, --decode-policy), as the plan was verified
  std::string router_note;                     // where the verified routing is not the router's: why, said in its file
  int router_replicas = VllmRouterInput{}.replicas;  // one, as verified (deployment.router_replicas: more)
};

std::vector<Manifest> disaggregated_manifests(const DisaggregatedManifestInput& input);

}  // namespace gw
