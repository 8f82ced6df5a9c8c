#include "k8s/vllm_router_manifests.h"

#include <fmt/format.h>

#include "k8s/manifests.h"
#include "k8s/router_manifests.h"

namespace gw {

std::string vllm_router_deployment(const VllmRouterInput& in) {
  std::string out = in.header("Deployment (apps/v1): the vLLM Router, in front of the vLLM pods");
  out += in.how_it_routes;
  out += fmt::format(
      "# It finds the pods by label in its own namespace (Kubernetes service discovery). Source: {}.\n"
      "# Image: {}, a published nightly build (the project tags no releases): pin the build you have verified.\n",
      kVllmRouterSource, in.image);
  if (in.replicas == 1)
    out += "# One router: two would each deal their own turns and send replicas bursts the plan was not verified with.\n"
           "# If its node is lost it is started elsewhere after 10 s (tolerationSeconds below; the default is 300 s).\n";
  // /health answers 503 while any worker is unhealthy (and 200 with none): as a liveness probe it
  // restarted the router whenever one replica failed its checks; /readiness is 503 until a
  // worker is healthy, /liveness 200 while the process answers (vllm-project/router src/server.rs
  // and src/routers/http/router.rs).
  out += "# Ready only while a replica is (/readiness): a Service or the KEDA HTTP add-on's interceptor sends it nothing\n"
         "# until then. Alive while it answers (/liveness), whatever its replicas' health.\n";
  out += router_deployment_head(in.name, in.pod_labels, in.replicas);
  out += fmt::format(
      "      serviceAccountName: {0}-router\n"
      "      containers:\n"
      "        - name: router\n"
      "          image: {1}\n"
      "          command: [vllm-router]\n"
      "          args: [--host, 0.0.0.0, --port, \"8000\", {2}--service-discovery,\n"
      "                 --service-discovery-namespace, $(POD_NAMESPACE), --service-discovery-port, \"8000\",\n"
      "{3}"
      "                 --prometheus-host, 0.0.0.0, --prometheus-port, \"29000\"]\n"
      "          env:\n"
      "            - {{name: POD_NAMESPACE, valueFrom: {{fieldRef: {{fieldPath: metadata.namespace}}}}}}\n"
      "          ports: [{{name: http, containerPort: 8000}}, {{name: metrics, containerPort: 29000}}]\n"
      "          resources:\n"
      "            requests: {{cpu: \"1\", memory: 1Gi}}\n"
      "            limits: {{memory: 2Gi}}\n"
      "          readinessProbe:\n"
      "            httpGet: {{path: /readiness, port: http}}\n"
      "            periodSeconds: {4}\n"
      "          livenessProbe:\n"
      "            httpGet: {{path: /liveness, port: http}}\n"
      "            periodSeconds: 15\n"
      "            failureThreshold: 4\n",
      in.name, yaml_quoted(in.image), in.mode_args, in.discovery_args, kRouterProbePeriodS);
  return out;
}

std::string vllm_router_rbac(const VllmRouterInput& in, const std::string& kind) {
  const std::string meta = fmt::format(
      "metadata:\n"
      "  name: {0}-router\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {1}}}\n",
      in.name, in.pod_labels);
  if (kind == "ServiceAccount")
    return in.header("ServiceAccount (v1): the router's identity") + "apiVersion: v1\nkind: ServiceAccount\n" + meta +
           "automountServiceAccountToken: true\n";
  if (kind == "Role")
    return in.header("Role (rbac.authorization.k8s.io/v1): the router reads the service's pods, nothing else") +
           "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n" + meta +
           "rules:\n"
           "  - apiGroups: [\"\"]\n"
           "    resources: [pods]\n"
           "    verbs: [get, list, watch]\n";
  return in.header("RoleBinding (rbac.authorization.k8s.io/v1): the Role to the router's ServiceAccount, in this namespace") +
         "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n" + meta +
         fmt::format("roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: {0}-router}}\n"
                     "subjects:\n"
                     "  - {{kind: ServiceAccount, name: {0}-router}}\n",
                     in.name);
}

}  // namespace gw
