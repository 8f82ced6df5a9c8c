// HAProxy in front of a service's replicas where the routing the plan verified is not one the vLLM
// Router has: a queue the replicas share (a model served one request at a time: each replica
// takes one request from the proxy, the rest wait in the proxy's queue for the first replica
// free), the fewest requests in flight (leastconn), or round robin for models batched per
// replica. It finds the replicas through the DNS of their headless Service (server-template:
// one A record per ready pod, re-resolved every few seconds), so replicas added or removed by
// the autoscaler join and leave without a reload. A plain Service would spread connections at
// random (kube-proxy), which bench/routing_as_deployed.py measured as up to 3.9x the replicas.
#pragma once

#include <functional>
#include <string>

namespace gw {

// The proxy's image, pinned to the branch whose binary checks the emitted configuration in the
// tests (Debian's haproxy 2.6); HAProxy's official image.
inline constexpr const char* kHaproxyImage = "haproxy:2.6";
inline constexpr const char* kHaproxySource =
    "HAProxy 2.6 configuration manual (docs.haproxy.org/2.6/configuration.html: balance leastconn and roundrobin, "
    "server maxconn and the backend queue, server-template with resolvers, timeout queue, prometheus-exporter) "
    "(read 2026-12-07)";

// Its Prometheus metrics and health (frontend stats): haproxy_backend_current_queue{proxy="replicas"}
// is the queue where each replica takes a set number of requests at a time.
inline constexpr int kHaproxyMetricsPort = 8404;

struct HaproxyInput {
  std::string name;            // the service's DNS label: objects are <name>-router
  std::function<std::string(const std::string& what)> header;  // a file's first comment lines, on what it is
  std::string pod_labels;      // the proxy pods' labels, "key: value, ..." (also the Deployment's selector)
  std::string replicas_service;  // the replicas' headless Service, whose DNS lists their pods
  std::string balance = "leastconn";  // leastconn or roundrobin
  // Requests a replica takes from each proxy at once; the rest wait in the proxy's queue for the
  // first replica free (one queue shared by the replicas). 0: no limit (the replica queues them).
  int maxconn_per_replica = 0;
  int server_slots = 1;        // the most replicas the autoscaler may run (server-template's count)
  std::string health_path = "/v2/health/ready";
  // How long a request may wait in the proxy's queue before it is answered 503 (clients give up
  // then); 0: as long as it takes (an hour).
  double queue_timeout_s = 60;
  std::string how_it_routes;   // comment lines on the choice it makes, each starting "# "
  std::string image = kHaproxyImage;
  int replicas = 0;            // 0: haproxy_replicas' choice
};

// The proxy's replicas where not given: two (one lost leaves the other routing), but one where the replicas share
// its queue: two proxies would each count only their own requests and send one to a replica busy
// with the other's, which is not the one queue the plan verified (bench/proxy_count.py, the
// cluster-peak example's 60 replicas at 95% busy: latency p99 2.10 s behind one proxy, 2.94 s
// behind two; at 70% busy 1.91 s and 2.53 s).
int haproxy_replicas(const HaproxyInput& in);

// haproxy.cfg: the proxy on port 8000, its Prometheus metrics and health on 8404.
std::string haproxy_config(const HaproxyInput& in);
// The ConfigMap holding it, and the Deployment that mounts it.
std::string haproxy_configmap(const HaproxyInput& in);
std::string haproxy_deployment(const HaproxyInput& in);

}  // namespace gw
