// The vLLM Router in front of a service's vLLM pods: its Deployment (it finds the pods by label
// through the Kubernetes API in its own namespace and picks one per request by its policy), and
// the ServiceAccount, Role and RoleBinding that let it read pods there and nothing else. Both a
// plan of one pool (power_of_two over the replicas) and a disaggregated plan (a prefill pod, then
// a decode pod) put it in front; the Service clients call is the router's.
#pragma once

#include <functional>
#include <string>

namespace gw {

// The router's image, pinned (a published nightly: vllm-project/router has no release tags).
inline constexpr const char* kVllmRouterImage = "vllm/vllm-router:nightly-20260629-e667ebb";
inline constexpr const char* kVllmRouterSource =
    "vllm-project/router, docs/environment/kubernetes.md and docs/model-routing/pd-disaggregation.md; its power_of_two policy "
    "from SGLang's router (sgl-router src/policies/power_of_two.rs: two workers drawn at random, the fewer requests in flight) "
    "(read 2026-12-07)";

struct VllmRouterInput {
  std::string name;           // the service's DNS label: objects are <name>-router
  std::function<std::string(const std::string& what)> header;  // a file's first comment lines, on what it is
  std::string pod_labels;     // the router pods' labels, "key: value, ..." (also the Deployment's selector)
  std::string mode_args;      // arguments before --service-discovery, each followed by ", " (--vllm-pd-disaggregation)
  std::string discovery_args; // lines of arguments after its namespace and port (selectors, policies), each line
                              // indented 17 spaces and ending "," and a newline
  std::string how_it_routes;  // comment lines on the choice it makes, each starting "# "
  std::string image = kVllmRouterImage;
  // One: two copies would each deal their own round robin over the replicas, and their merged
  // stream is burstier at each (bench/README.md, routing as deployed: the code-completion trace
  // on L4s needs $57,232 a month behind two against $35,770 behind one). A lost router pod is
  // started again in seconds, off a lost node after 10 s (router_deployment_head).
  int replicas = 1;
};

std::string vllm_router_deployment(const VllmRouterInput& in);
// kind: ServiceAccount, Role or RoleBinding.
std::string vllm_router_rbac(const VllmRouterInput& in, const std::string& kind);

}  // namespace gw
