// The Kubernetes manifests for a plan (`gpuwise plan --emit-k8s`): per service a Deployment, a
// KEDA ScaledObject, an HPA and a Karpenter NodePool. The queue-depth threshold and whether scale
// to zero pays come from simulating both on the service's traffic (gpuwise scale's policies); the
// cooldown is the cold start's billed time (ski rental: idle as long as a restart costs), unless
// the spec sets keep_alive_s.
#pragma once

#include <string>
#include <vector>

#include "k8s/manifests.h"
#include "plan/plan_spec.h"

namespace gw {

// `plan_options` are those the plan was made with; services without a plan get no manifests.
Result<std::vector<Manifest>> plan_manifests(const Catalog& catalog, const PlanResult& plans, const PlanSpecOptions& plan_options,
                                             const std::string& prometheus_url);

}  // namespace gw
