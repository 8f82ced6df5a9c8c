#include "k8s/haproxy_manifests.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "k8s/manifests.h"
#include "k8s/router_manifests.h"

namespace gw {

std::string haproxy_config(const HaproxyInput& in) {
  const long long queue_s = in.queue_timeout_s > 0 ? static_cast<long long>(std::ceil(in.queue_timeout_s)) : 3600;
  // A reply may be silent until it is done (a completion not streamed): the proxy waits for it
  // as long as clients do, at least HAProxy's usual 300 s.
  const long long reply_s = std::max(300LL, queue_s);
  std::string out = fmt::format(
      "# HAProxy for {0}, written by gpuwise plan --emit-k8s. Source: {1}.\n"
      "# global maxconn left to HAProxy: it derives it from the container's file-descriptor limit.\n"
      "global\n"
      "  log stdout format raw local0 notice\n"
      "defaults\n"
      "  log global\n"
      "  mode http\n"
      "  option redispatch\n"
      "  retries 2\n"
      "  timeout connect 5s\n"
      "  # Clients and replicas may be silent as long as clients wait for a reply.\n"
      "  timeout client {7}s\n"
      "  timeout server {7}s\n"
      "  # Clients give up on a request not started by then: the proxy answers 503 instead of holding it.\n"
      "  timeout queue {2}s\n"
      "resolvers cluster\n"
      "  parse-resolv-conf\n"
      "  timeout resolve {6}s\n"
      "  hold valid {6}s\n"
      "  accepted_payload_size 8192\n"
      "frontend clients\n"
      "  bind :8000\n"
      "  default_backend replicas\n"
      "frontend stats\n"
      "  bind :{5}\n"
      "  http-request use-service prometheus-exporter if {{ path /metrics }}\n"
      "  # Ready only while a replica is up: at zero replicas the KEDA HTTP add-on's interceptor holds requests\n"
      "  # until this proxy is ready instead of passing them to a proxy that would answer 503.\n"
      "  http-request return status 503 content-type text/plain string \"no replica up\" if {{ path /ready }} {{ nbsrv(replicas) eq 0 }}\n"
      "  http-request return status 200 content-type text/plain string \"ready\" if {{ path /ready }}\n"
      "  monitor-uri /healthz\n"
      "backend replicas\n"
      "  balance {3}\n"
      "  option httpchk\n"
      "  http-check send meth GET uri {4}\n",
      in.name, kHaproxySource, queue_s, in.balance, in.health_path, kHaproxyMetricsPort, kRouterProbePeriodS, reply_s);
  if (in.maxconn_per_replica > 0)
    out += fmt::format(
        "  # Each replica takes {0} request(s) at a time from this proxy; the rest wait in the backend's queue\n"
        "  # and go to the first replica free: one queue the replicas share.\n",
        in.maxconn_per_replica);
  out += fmt::format(
      "  # One server slot per replica the autoscaler may run, filled from the A records of the replicas'\n"
      "  # headless Service (ready pods only), re-resolved every {2} s; one check passed puts a pod Kubernetes\n"
      "  # already found ready into service (rise 1).\n"
      "  default-server check inter {2}s rise 1{0} resolvers cluster resolve-prefer ipv4 init-addr none\n"
      "  server-template replica {1} \"${{REPLICAS_HOST}}:8000\"\n",
      in.maxconn_per_replica > 0 ? fmt::format(" maxconn {}", in.maxconn_per_replica) : "", std::max(1, in.server_slots),
      kRouterProbePeriodS);
  return out;
}

namespace {

// Each line of text indented by `indent` spaces (a YAML literal block's body).
std::string indented(const std::string& text, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += pad + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string haproxy_configmap(const HaproxyInput& in) {
  std::string out = in.header("ConfigMap (v1): HAProxy's configuration, in front of the replicas");
  out += in.how_it_routes;
  out += fmt::format(
      "apiVersion: v1\n"
      "kind: ConfigMap\n"
      "metadata:\n"
      "  name: {0}-router\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {1}}}\n"
      "data:\n"
      "  haproxy.cfg: |\n"
      "{2}",
      in.name, in.pod_labels, indented(haproxy_config(in), 4));
  return out;
}

int haproxy_replicas(const HaproxyInput& in) { return in.replicas > 0 ? in.replicas : in.maxconn_per_replica > 0 ? 1 : 2; }

std::string haproxy_deployment(const HaproxyInput& in) {
  const int replicas = haproxy_replicas(in);
  std::string out = in.header("Deployment (apps/v1): HAProxy, in front of the replicas");
  out += in.how_it_routes;
  out += fmt::format(
      "# It reads {0}-router-configmap.yaml and finds the replicas through the DNS of {1} (REPLICAS_HOST; set\n"
      "# CLUSTER_DOMAIN if your cluster's is not cluster.local). Source: {2}.\n",
      in.name, in.replicas_service, kHaproxySource);
  out += "# Ready only while a replica is up (/ready): a Service or the KEDA HTTP add-on's interceptor sends it nothing\n"
         "# until then. Alive while it answers (/healthz).\n";
  out += replicas == 1 && in.maxconn_per_replica > 0
             ? "# One proxy: the replicas share its queue, and a second proxy would keep a queue and counts of its own, sending\n"
               "# requests to replicas busy with the other's. If its node is lost it is started elsewhere after 10 s\n"
               "# (tolerationSeconds below; the default is 300 s), while requests fail.\n"
         : replicas == 1 ? "# One proxy; if its node is lost it is started elsewhere after 10 s (tolerationSeconds below).\n"
         : in.balance == "roundrobin"
             ? fmt::format("# {} proxies, each dealing its own turns, as the plan's simulation dealt them.\n", replicas)
             : fmt::format("# {} proxies, each keeping its own queue and counts: the plan's simulation modelled one.\n", replicas);
  out += router_deployment_head(in.name, in.pod_labels, replicas);
  out += fmt::format(
      "      containers:\n"
      "        - name: haproxy\n"
      "          image: {1}\n"
      "          env:\n"
      "            - {{name: POD_NAMESPACE, valueFrom: {{fieldRef: {{fieldPath: metadata.namespace}}}}}}\n"
      "            - {{name: CLUSTER_DOMAIN, value: cluster.local}}\n"
      "            - {{name: REPLICAS_HOST, value: \"{2}.$(POD_NAMESPACE).svc.$(CLUSTER_DOMAIN)\"}}\n"
      "          ports: [{{name: http, containerPort: 8000}}, {{name: metrics, containerPort: {3}}}]\n"
      "          resources:\n"
      "            requests: {{cpu: \"1\", memory: 256Mi}}\n"
      "            limits: {{memory: 512Mi}}\n"
      "          readinessProbe:\n"
      "            httpGet: {{path: /ready, port: metrics}}\n"
      "            periodSeconds: {4}\n"
      "          livenessProbe:\n"
      "            httpGet: {{path: /healthz, port: metrics}}\n"
      "            periodSeconds: 15\n"
      "            failureThreshold: 4\n"
      "          volumeMounts:\n"
      "            - {{name: config, mountPath: /usr/local/etc/haproxy, readOnly: true}}\n"
      "      volumes:\n"
      "        - {{name: config, configMap: {{name: {0}-router}}}}\n",
      in.name, yaml_quoted(in.image), in.replicas_service, kHaproxyMetricsPort, kRouterProbePeriodS);
  return out;
}

}  // namespace gw
