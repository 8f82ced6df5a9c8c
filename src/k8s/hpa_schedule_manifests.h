// The schedule for an HPA without KEDA: an HPA has no cron trigger, so CronJobs set its
// minReplicas at each change of the schedule's count (ManifestInput::schedule_changes), in the
// schedule's time zone; the HPA then scales on its metric above that floor, as KEDA's cron
// triggers and its Prometheus trigger do together. With them the ServiceAccount, Role and
// RoleBinding that let the jobs patch that one HPA and nothing else.
#pragma once

#include <string>
#include <vector>

#include "k8s/manifests.h"

namespace gw {

// kubectl's own image, published with each Kubernetes release from v1.28 (kubernetes/kubernetes
// PR #116672, linux amd64, arm64, ppc64le, s390x; read 2026-12-06); its entrypoint is kubectl.
inline constexpr const char* kKubectlImage = "registry.k8s.io/kubectl:v1.30.0";

// The CronJob that makes the i-th change (from 1 to the number of changes): its name, at most 52
// characters as the API server requires of a CronJob, the prefix and the number.
std::string floor_cronjob_name(const ManifestInput& input, size_t i);
// What every one of a service's CronJob names starts with, before "-" and the number.
std::string floor_cronjob_prefix(const ManifestInput& input);

// The CronJobs and their RBAC; none without changes.
std::vector<Manifest> hpa_schedule_manifests(const ManifestInput& input);

}  // namespace gw
