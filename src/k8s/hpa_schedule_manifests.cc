#include "k8s/hpa_schedule_manifests.h"

#include <fmt/format.h>

#include <algorithm>

namespace gw {
namespace {

// The jobs' pods carry neither the service's label (its Service would send them requests) nor
// a GPU toleration (they run on the cluster's general nodes).
std::string labels(const std::string& name) {
  return fmt::format("{{app.kubernetes.io/managed-by: gpuwise, gpuwise.dev/schedule-of: {}}}", name);
}

std::string rbac(const ManifestInput& in, const std::string& name, const std::string& kind) {
  const std::string account = name + "-hpa-schedule";
  const std::string meta = fmt::format("metadata:\n  name: {}\n  labels: {}\n", account, labels(name));
  if (kind == "ServiceAccount")
    return manifest_header(in, "ServiceAccount (v1): the identity of the CronJobs that set the HPA's minReplicas") +
           "apiVersion: v1\nkind: ServiceAccount\n" + meta + "automountServiceAccountToken: true\n";
  if (kind == "Role")
    return manifest_header(in, "Role (rbac.authorization.k8s.io/v1): the CronJobs read and patch this service's HPA, nothing else") +
           "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n" + meta +
           fmt::format(
               "rules:\n"
               "  - apiGroups: [autoscaling]\n"
               "    resources: [horizontalpodautoscalers]\n"
               "    resourceNames: [{}]\n"
               "    verbs: [get, patch]\n",
               name);
  return manifest_header(in, "RoleBinding (rbac.authorization.k8s.io/v1): the Role to the CronJobs' ServiceAccount, in this namespace") +
         "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n" + meta +
         fmt::format(
             "roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: {0}}}\n"
             "subjects:\n"
             "  - {{kind: ServiceAccount, name: {0}}}\n",
             account);
}

std::string cronjob(const ManifestInput& in, const std::string& name, size_t i) {
  const CronChange& change = in.schedule_changes[i - 1];
  // A run started late must not land after the next change: it may start until half the time
  // its value holds has passed (the controller checks every 10 s), 15 minutes at most.
  const int deadline_s = std::clamp(change.holds_minutes * 30, 60, 900);
  std::string out = manifest_header(in, "CronJob (batch/v1) setting the HPA's floor by the schedule (a cluster without KEDA)");
  out += fmt::format(
      "# Sets minReplicas of HorizontalPodAutoscaler {} to {} at {} ({}), for at least {} min until the next\n"
      "# change; the HPA scales on queue depth above it. Apply it with the HPA file, not with the KEDA\n"
      "# ScaledObject (whose cron triggers follow the same schedule).\n",
      name, change.replicas, change.note, in.timezone, change.holds_minutes);
  out += fmt::format(
      "apiVersion: batch/v1\n"
      "kind: CronJob\n"
      "metadata:\n"
      "  name: {0}\n"
      "  labels: {1}\n"
      "spec:\n"
      "  schedule: {2}\n"
      "  timeZone: {3}\n"
      "  concurrencyPolicy: Replace\n"
      "  startingDeadlineSeconds: {4}\n"
      "  successfulJobsHistoryLimit: 1\n"
      "  failedJobsHistoryLimit: 3\n"
      "  jobTemplate:\n"
      "    spec:\n"
      "      backoffLimit: 3\n"
      "      activeDeadlineSeconds: {4}\n"
      "      ttlSecondsAfterFinished: 86400\n"
      "      template:\n"
      "        metadata:\n"
      "          labels: {1}\n"
      "        spec:\n"
      "          serviceAccountName: {5}-hpa-schedule\n"
      "          restartPolicy: OnFailure\n"
      "          containers:\n"
      "            - name: set-min-replicas\n"
      "              image: {6}\n"
      "              args: [patch, horizontalpodautoscaler, {5}, --type=merge, {7}]\n"
      "              resources:\n"
      "                requests: {{cpu: 10m, memory: 64Mi}}\n"
      "                limits: {{memory: 64Mi}}\n",
      floor_cronjob_name(in, i), labels(name), yaml_quoted(change.at), yaml_quoted(in.timezone), deadline_s, name, kKubectlImage,
      yaml_quoted(fmt::format("--patch={{\"spec\":{{\"minReplicas\":{}}}}}", change.replicas)));
  return out;
}

}  // namespace

std::string floor_cronjob_prefix(const ManifestInput& in) {
  // Room for the largest job number, so every job of a service shares this prefix.
  const size_t room = std::string("-floor-").size() + std::to_string(std::max<size_t>(in.schedule_changes.size(), 1)).size();
  std::string base = dns_label(in.service);
  if (base.size() + room > 52) base.resize(52 - room);
  while (!base.empty() && base.back() == '-') base.pop_back();
  return base + "-floor";
}

std::string floor_cronjob_name(const ManifestInput& in, size_t i) { return fmt::format("{}-{}", floor_cronjob_prefix(in), i); }

std::vector<Manifest> hpa_schedule_manifests(const ManifestInput& in) {
  if (in.schedule_changes.empty()) return {};
  const std::string name = dns_label(in.service);
  std::vector<Manifest> out;
  out.push_back({name + "-hpa-schedule-serviceaccount.yaml", rbac(in, name, "ServiceAccount"), "the schedule CronJobs' ServiceAccount"});
  out.push_back({name + "-hpa-schedule-role.yaml", rbac(in, name, "Role"),
                 fmt::format("horizontalpodautoscalers/{}: get, patch (the schedule CronJobs')", name)});
  out.push_back(
      {name + "-hpa-schedule-rolebinding.yaml", rbac(in, name, "RoleBinding"), "the Role bound to the schedule CronJobs' ServiceAccount"});
  for (size_t i = 1; i <= in.schedule_changes.size(); ++i) {
    const CronChange& change = in.schedule_changes[i - 1];
    out.push_back({fmt::format("{}-hpa-schedule-{}-cronjob.yaml", name, i), cronjob(in, name, i),
                   fmt::format("sets the HPA's minReplicas to {} at {} ({})", change.replicas, change.note, in.timezone)});
  }
  return out;
}

}  // namespace gw
