// The router in front of one pool, kept warm or scaled to zero, with the routing its plan was
// verified with: the vLLM Router (round_robin, power_of_two) or HAProxy (a queue the replicas
// share, leastconn, roundrobin, random(2)); the Service clients call (the router's, named as the
// service) and the replicas' own headless Service, whose name labels their metrics and whose DNS
// lists them.
#pragma once

#include <string>
#include <vector>

#include "k8s/manifests.h"

namespace gw {

// Seconds between the routers' readiness probes, HAProxy's health checks of the replicas and its
// re-resolutions of their DNS; CoreDNS caches cluster records as long (its kubernetes plugin's
// default TTL). How soon a ready replica gets requests follows from it (plan's router_join_s).
inline constexpr int kRouterProbePeriodS = 5;

std::vector<Manifest> router_manifests(const ManifestInput& in, const std::string& name);

// A router's Deployment from its apiVersion to its pod spec's topology spread (named
// <name>-router, its pods labelled pod_labels and spread over nodes), the pod spec's further keys
// to follow at six spaces. One replica tolerates a node unreachable or not ready for 10 s only
// (the default is 300 s), so that it is started on another node within seconds.
std::string router_deployment_head(const std::string& name, const std::string& pod_labels, int replicas);

}  // namespace gw
