// A GKE ComputeClass (cloud.google.com/v1): the nodes a plan's pods run on where Karpenter does
// not run. Its priorities are the plan's machine types with their GPUs or TPU slice (spot first
// where the plan allows it, then on demand); node auto-provisioning creates the node pools, and
// whenUnsatisfiable: DoNotScaleUp keeps the pods off hardware the plan did not size them for.
#pragma once

#include <string>

#include "k8s/manifests.h"

namespace gw {

// The class's name, which the pods select (cloud.google.com/compute-class).
std::string compute_class_name(const ManifestInput& input);

// accelerator_limit: the GPUs or TPU chips the plan may use at most, said with limit_note (GKE
// bounds them cluster-wide, not per class).
std::string gke_compute_class_manifest(const ManifestInput& input, int accelerator_limit, const std::string& limit_note);

inline constexpr const char* kComputeClassSource =
    "GKE ComputeClass CRD computeclasses.cloud.google.com v1 (priorities[].machineType, machineFamily, minCores, minMemoryGb, "
    "spot, gpu {type, count}, tpu {type, count, topology}; nodePoolAutoCreation; whenUnsatisfiable), as packaged in "
    "tommy351/kubernetes-models-ts third-party/gke/crd/computeclasses.yaml at f819b64, and GKE docs 'About custom "
    "ComputeClasses' (read 2026-12-07)";

}  // namespace gw
