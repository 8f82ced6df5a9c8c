// HAProxy in front of a pool: its configuration is one HAProxy accepts (Debian's
// haproxy, of the branch the image pins, checks it with haproxy -c), it queues and balances as
// the plan's routing was verified, the objects validate against their published schemas, and
// they are wired so that clients reach the replicas through the proxy alone and the autoscalers
// read the proxy's queue where requests wait in it; it is ready only while a replica is up, which
// is what lets a pool scaled to zero keep it.
#include "k8s/haproxy_manifests.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <sys/types.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include "core/loopback_server_test.h"
#include "core/require_tools_test.h"
#include "k8s/manifest_schemas_test.h"
#include "k8s/manifests.h"
#include "k8s/router_manifests.h"
#include "k8s/yaml_json_test.h"

namespace gw {
namespace {

using testing_support::by_file_name;
using testing_support::ManifestSchemas;
using testing_support::selects;
using testing_support::string_map;

// An unbatched model on 60 L4s (the cluster-peak example's plan): one queue the replicas share.
ManifestInput queued_frames_input() {
  ManifestInput in;
  in.service = "frames";
  in.haproxy_balance = "leastconn";
  in.haproxy_maxconn_per_replica = 1;
  in.client_timeout_s = 60;
  in.queue_threshold = 1.01;
  in.min_replicas = 2;
  in.max_replicas = 120;
  in.peak_replicas = 60;
  in.why_min = "the service's min_replicas";
  in.why_threshold = "capacity x latency";
  in.cloud = "aws";
  in.instance_types = {"g6.xlarge"};
  in.capacity_types = {"on-demand"};
  in.replicas = 60;
  in.model_name = "video-analytics";
  in.accelerator = "L4";
  in.usd_per_replica_hour = 0.8048;
  in.cold_start_s = 165;
  return in;
}

HaproxyInput proxy_input(const std::string& balance, int maxconn) {
  HaproxyInput in;
  in.name = "frames";
  in.header = [](const std::string& what) { return "# " + what + "\n"; };
  in.pod_labels = "gpuwise.dev/router: frames";
  in.replicas_service = "frames-replicas";
  in.balance = balance;
  in.maxconn_per_replica = maxconn;
  in.server_slots = 120;
  return in;
}

// haproxy -c on the configuration, with the variable the Deployment sets; its exit status.
int haproxy_check(const std::string& config) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_haproxy_{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "haproxy.cfg") << config;
  const int status = std::system(fmt::format("REPLICAS_HOST=frames-replicas.default.svc.cluster.local haproxy -c -q -f '{}' >'{}' 2>&1",
                                             (dir / "haproxy.cfg").string(), (dir / "log").string())
                                     .c_str());
  std::filesystem::remove_all(dir);
  return status;
}

// The configuration's lines that open with `key` (indentation dropped).
std::vector<std::string> config_lines(const std::string& config, const std::string& key) {
  std::vector<std::string> out;
  std::istringstream lines(config);
  for (std::string line; std::getline(lines, line);) {
    line.erase(0, line.find_first_not_of(' '));
    if (line.rfind(key, 0) == 0) out.push_back(line);
  }
  return out;
}

TEST(HaproxyConfig, EveryRoutingItDeploysIsOneHaproxyAccepts) {
  REQUIRE_TOOLS(testing_support::have("haproxy"), "haproxy is required (scripts/bootstrap installs it)");
  for (const auto& [balance, maxconn] : std::vector<std::pair<std::string, int>>{{"leastconn", 1}, {"leastconn", 0}, {"roundrobin", 0}, {"random(2)", 0}})
    EXPECT_EQ(haproxy_check(haproxy_config(proxy_input(balance, maxconn))), 0) << balance << " " << maxconn;
  // The check can fail: a balance HAProxy does not have is refused.
  EXPECT_NE(haproxy_check(haproxy_config(proxy_input("least-outstanding-tokens", 0))), 0);
}

TEST(HaproxyConfig, ASharedQueueHandsEachReplicaOneRequestAtATime) {
  HaproxyInput in = proxy_input("leastconn", 1);
  in.queue_timeout_s = 42.5;
  const std::string queued = haproxy_config(in);
  EXPECT_EQ(config_lines(queued, "balance"), (std::vector<std::string>{"balance leastconn"}));
  ASSERT_EQ(config_lines(queued, "default-server").size(), 1u);
  EXPECT_NE(config_lines(queued, "default-server")[0].find(" maxconn 1 "), std::string::npos) << queued;
  EXPECT_NE(config_lines(queued, "default-server")[0].find("resolvers cluster"), std::string::npos);
  // One slot per replica the autoscaler may run, at the replicas' Service's address.
  EXPECT_EQ(config_lines(queued, "server-template"), (std::vector<std::string>{"server-template replica 120 \"${REPLICAS_HOST}:8000\""}));
  // Requests wait in the queue as long as clients do, no longer.
  EXPECT_EQ(config_lines(queued, "timeout queue"), (std::vector<std::string>{"timeout queue 43s"}));
  EXPECT_EQ(config_lines(queued, "http-check send"), (std::vector<std::string>{"http-check send meth GET uri /v2/health/ready"}));

  // Batched per replica: round robin, no limit (each replica batches what it is sent).
  const std::string dealt = haproxy_config(proxy_input("roundrobin", 0));
  EXPECT_EQ(config_lines(dealt, "balance"), (std::vector<std::string>{"balance roundrobin"}));
  EXPECT_EQ(config_lines(dealt, "default-server")[0].find("maxconn"), std::string::npos);
  in.queue_timeout_s = 0;  // clients that wait for ever: an hour
  EXPECT_EQ(config_lines(haproxy_config(in), "timeout queue"), (std::vector<std::string>{"timeout queue 3600s"}));
  // A reply silent until it is done is waited for as long as clients wait, at least 300 s.
  EXPECT_EQ(config_lines(haproxy_config(in), "timeout server"), (std::vector<std::string>{"timeout server 3600s"}));
  EXPECT_EQ(config_lines(queued, "timeout server"), (std::vector<std::string>{"timeout server 300s"}));
  in.queue_timeout_s = 900;
  EXPECT_EQ(config_lines(haproxy_config(in), "timeout server"), (std::vector<std::string>{"timeout server 900s"}));
  EXPECT_EQ(config_lines(haproxy_config(in), "timeout client"), (std::vector<std::string>{"timeout client 900s"}));
}

// A replica that serves one request in a second (long beside the clients' start on a busy machine),
// as many at once as it is sent, and counts the most it held at once.
class SlowReplica {
 public:
  explicit SlowReplica(int port = 0) {
    server_.Get("/v2/health/ready", [](const httplib::Request&, httplib::Response& r) { r.set_content("ok", "text/plain"); });
    server_.Get("/infer", [this](const httplib::Request&, httplib::Response& r) {
      const int now = ++held_;
      int most = most_held_.load();
      while (now > most && !most_held_.compare_exchange_weak(most, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
      --held_;
      r.set_content("done", "text/plain");
    });
    port_ = port > 0 ? (server_.bind_to_port("127.0.0.1", port) ? port : -1) : server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~SlowReplica() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  int most_held() const { return most_held_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> held_{0};
  std::atomic<int> most_held_{0};
};

// HAProxy run on loopback (Debian's, in the foreground) with the emitted configuration: its
// listeners on the server's port and the next (its metrics), its servers the given replicas
// instead of the slots the cluster's DNS fills, checked every 200 ms instead of 5 s so that a
// replica's coming and going shows within a second.
struct LoopbackHaproxy : testing_support::LoopbackServer {
  LoopbackHaproxy(const std::string& emitted, const std::vector<int>& replica_ports) {
    dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_haproxy_live_{}", ::getpid());
    std::filesystem::create_directories(dir);
    port = 20000 + (::getpid() * 13) % 19999;
    log_name = "haproxy.log";
    ready_path = "/v2/health/ready";  // answered by a replica through the proxy
    command = [this, emitted, replica_ports](int p) {
      std::string config = emitted;
      config.replace(config.find("bind :8000"), 10, fmt::format("bind 127.0.0.1:{}", p));
      config.replace(config.find(fmt::format("bind :{}", kHaproxyMetricsPort)), 10, fmt::format("bind 127.0.0.1:{}", p + 1));
      const size_t slots = config.find("\n  server-template") + 1;  // the line, not the source comment naming it
      std::string servers;
      for (size_t i = 0; i < replica_ports.size(); ++i) servers += fmt::format("  server replica{} 127.0.0.1:{}\n", i + 1, replica_ports[i]);
      config.replace(slots, config.find('\n', slots) + 1 - slots, servers);
      // Addresses given, none to resolve (a server left to the resolver starts in maintenance).
      const std::string resolved = " resolvers cluster resolve-prefer ipv4 init-addr none";
      config.erase(config.find(resolved), resolved.size());
      const std::string every = fmt::format(" inter {}s ", kRouterProbePeriodS);
      config.replace(config.find(every), every.size(), " inter 200ms ");
      std::ofstream(dir / "haproxy.cfg") << config;
      return std::vector<std::string>{"haproxy", "-db", "-f", (dir / "haproxy.cfg").string()};
    };
    launch();
  }
  ~LoopbackHaproxy() {
    now();
    std::filesystem::remove_all(dir);
  }
  // Its words, where it did not start.
  std::string log() const {
    std::ifstream in(dir / log_name);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }
};

// Six requests at once through the proxy to three replicas; the most any replica held at once.
int most_held_through(const std::string& balance, int maxconn, std::chrono::milliseconds* took) {
  std::vector<std::unique_ptr<SlowReplica>> replicas;
  std::vector<int> ports;
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(std::make_unique<SlowReplica>());
    ports.push_back(replicas.back()->port());
  }
  LoopbackHaproxy proxy(haproxy_config(proxy_input(balance, maxconn)), ports);
  if (!proxy.ready()) {
    ADD_FAILURE() << proxy.log();
    return -1;
  }
  std::atomic<int> served{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  for (int i = 0; i < 6; ++i)
    clients.emplace_back([&] {
      httplib::Client client("127.0.0.1", proxy.port);
      client.set_read_timeout(10, 0);
      auto response = client.Get("/infer");
      if (response && response->status == 200) ++served;
    });
  for (auto& c : clients) c.join();
  *took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  if (served != 6) return -2;
  int most = 0;
  for (const auto& r : replicas) most = std::max(most, r->most_held());
  return most;
}

// The shared queue as HAProxy runs it: with maxconn 1 no replica ever holds two requests, the
// rest wait in the proxy for the first replica free; without it (round robin) a replica holds
// two at once while they run.
TEST(HaproxyLive, ASharedQueueHandsEachReplicaOneRequestAtATime) {
  REQUIRE_TOOLS(testing_support::have("haproxy"), "haproxy is required (scripts/bootstrap installs it)");
  std::chrono::milliseconds took{0};
  EXPECT_EQ(most_held_through("leastconn", 1, &took), 1);
  EXPECT_GE(took.count(), 2000);  // two rounds of a second
  EXPECT_EQ(most_held_through("roundrobin", 0, &took), 2);
}

// The status of GET path on loopback port, polled every 50 ms until it is `want` or 10 s have
// passed; the last status seen (0: no answer).
int status_once_it_is(int port, const std::string& path, int want) {
  int status = 0;
  for (int i = 0; i < 200 && status != want; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(1, 0);
    auto response = client.Get(path);
    status = response ? response->status : 0;
  }
  return status;
}

// The proxy is ready (/ready on its metrics port) only while a replica is up, as the readiness
// probe the interceptor's wait depends on needs: its one replica stopped, it answers 503 within
// its checks; a replica started again on that port, 200 after one check (rise 1). Alive
// (/healthz) throughout.
TEST(HaproxyLive, TheProxyIsReadyOnlyWhileAReplicaIsUp) {
  REQUIRE_TOOLS(testing_support::have("haproxy"), "haproxy is required (scripts/bootstrap installs it)");
  auto replica = std::make_unique<SlowReplica>();
  const int replica_port = replica->port();
  LoopbackHaproxy proxy(haproxy_config(proxy_input("leastconn", 1)), {replica_port});
  ASSERT_TRUE(proxy.ready()) << proxy.log();
  const int metrics_port = proxy.port + 1;
  EXPECT_EQ(status_once_it_is(metrics_port, "/ready", 200), 200);
  replica.reset();
  EXPECT_EQ(status_once_it_is(metrics_port, "/ready", 503), 503);
  EXPECT_EQ(status_once_it_is(metrics_port, "/healthz", 200), 200);
  replica = std::make_unique<SlowReplica>(replica_port);
  ASSERT_EQ(replica->port(), replica_port);
  EXPECT_EQ(status_once_it_is(metrics_port, "/ready", 200), 200);
}

TEST_F(ManifestSchemas, ProxiedPoolManifestsValidate) {
  auto manifests = service_manifests(queued_frames_input());
  // Deployment, the proxy's Service, ConfigMap and Deployment, the replicas' Service,
  // ScaledObject, HPA, ServiceMonitor, NodePool.
  ASSERT_EQ(manifests.size(), 9u);
  expect_each_validates(manifests);
  ManifestInput at_zero = queued_frames_input();  // the proxy kept, the interceptor in front
  at_zero.min_replicas = 0;
  manifests = service_manifests(at_zero);
  ASSERT_EQ(manifests.size(), 10u);
  expect_each_validates(manifests);
}

TEST(HaproxyManifests, ClientsReachTheReplicasThroughTheProxyAlone) {
  const std::map<std::string, YAML::Node> by_file = by_file_name(service_manifests(queued_frames_input()));
  const YAML::Node replicas = by_file.at("frames-deployment.yaml");
  const YAML::Node proxy = by_file.at("frames-router-deployment.yaml");
  const auto replica_pods = string_map(replicas["spec"]["template"]["metadata"]["labels"]);
  const auto proxy_pods = string_map(proxy["spec"]["template"]["metadata"]["labels"]);
  EXPECT_FALSE(selects(string_map(replicas["spec"]["selector"]["matchLabels"]), proxy_pods));
  EXPECT_FALSE(selects(string_map(proxy["spec"]["selector"]["matchLabels"]), replica_pods));

  // Clients' Service reaches the proxy alone; the replicas' headless Service, whose DNS the proxy
  // reads, the replicas alone.
  const YAML::Node client = by_file.at("frames-service.yaml");
  EXPECT_TRUE(selects(string_map(client["spec"]["selector"]), proxy_pods));
  EXPECT_FALSE(selects(string_map(client["spec"]["selector"]), replica_pods));
  const YAML::Node pods = by_file.at("frames-replicas-service.yaml");
  EXPECT_EQ(pods["spec"]["clusterIP"].as<std::string>(), "None");
  EXPECT_TRUE(selects(string_map(pods["spec"]["selector"]), replica_pods));
  EXPECT_FALSE(selects(string_map(pods["spec"]["selector"]), proxy_pods));

  // The proxy mounts its ConfigMap where the image reads haproxy.cfg and resolves the replicas'
  // Service in its own namespace.
  const YAML::Node spec = proxy["spec"]["template"]["spec"];
  const YAML::Node configmap = by_file.at("frames-router-configmap.yaml");
  EXPECT_EQ(spec["volumes"][0]["configMap"]["name"].as<std::string>(), configmap["metadata"]["name"].as<std::string>());
  EXPECT_EQ(spec["containers"][0]["volumeMounts"][0]["mountPath"].as<std::string>(), "/usr/local/etc/haproxy");
  EXPECT_TRUE(configmap["data"]["haproxy.cfg"].IsScalar());
  const std::string config = configmap["data"]["haproxy.cfg"].as<std::string>();
  EXPECT_EQ(config_lines(config, "balance"), (std::vector<std::string>{"balance leastconn"}));
  std::map<std::string, std::string> env;
  for (const auto& e : spec["containers"][0]["env"])
    if (e["value"]) env[e["name"].as<std::string>()] = e["value"].as<std::string>();
  EXPECT_EQ(env.at("REPLICAS_HOST"), "frames-replicas.$(POD_NAMESPACE).svc.$(CLUSTER_DOMAIN)");
  EXPECT_EQ(client["spec"]["ports"][0]["targetPort"].as<std::string>(), spec["containers"][0]["ports"][0]["name"].as<std::string>());
  // One proxy holds the queue the replicas share (two would each keep their own), moved off a
  // lost node after 10 s.
  EXPECT_EQ(proxy["spec"]["replicas"].as<int>(), 1);
  ASSERT_EQ(spec["tolerations"].size(), 2u);
  EXPECT_EQ(spec["tolerations"][0]["tolerationSeconds"].as<int>(), 10);

  // Requests wait in the proxy's queue, so the ServiceMonitor scrapes both Services' metrics
  // ports, and the autoscalers' query adds the proxy's queue to the replicas' pending count.
  const YAML::Node monitor = by_file.at("frames-servicemonitor.yaml");
  std::vector<std::string> monitored;
  for (const auto& [file, doc] : by_file)
    if (doc["kind"].as<std::string>() == "Service" && selects(string_map(monitor["spec"]["selector"]["matchLabels"]), string_map(doc["metadata"]["labels"]))) {
      monitored.push_back(doc["metadata"]["name"].as<std::string>());
      bool metrics_port = false;
      for (const auto& port : doc["spec"]["ports"]) metrics_port |= port["name"].as<std::string>() == monitor["spec"]["endpoints"][0]["port"].as<std::string>();
      EXPECT_TRUE(metrics_port) << file;
    }
  std::sort(monitored.begin(), monitored.end());
  EXPECT_EQ(monitored, (std::vector<std::string>{"frames", "frames-replicas"}));
  const std::string query = by_file.at("frames-keda-scaledobject.yaml")["spec"]["triggers"][0]["metadata"]["query"].as<std::string>();
  EXPECT_NE(query.find("haproxy_backend_current_queue{service=\"frames\", proxy=\"replicas\"}"), std::string::npos) << query;
  EXPECT_NE(query.find("nv_inference_pending_request_count{service=\"frames-replicas\"}"), std::string::npos) << query;
  EXPECT_NE(config.find("backend replicas"), std::string::npos);
}

// Without a queue in the proxy (round robin for a model batched per replica) the replicas hold
// the backlog: the ServiceMonitor reads them alone, and the client Service has no metrics port.
TEST(HaproxyManifests, RoundRobinLeavesTheBacklogAtTheReplicas) {
  ManifestInput in = queued_frames_input();
  in.haproxy_balance = "roundrobin";
  in.haproxy_maxconn_per_replica = 0;
  const std::map<std::string, YAML::Node> by_file = by_file_name(service_manifests(in));
  EXPECT_EQ(by_file.at("frames-service.yaml")["spec"]["ports"].size(), 1u);
  const std::string query = by_file.at("frames-keda-scaledobject.yaml")["spec"]["triggers"][0]["metadata"]["query"].as<std::string>();
  EXPECT_EQ(query, "sum(nv_inference_pending_request_count{service=\"frames-replicas\"})");
  EXPECT_EQ(config_lines(by_file.at("frames-router-configmap.yaml")["data"]["haproxy.cfg"].as<std::string>(), "balance"),
            (std::vector<std::string>{"balance roundrobin"}));
  // No queue to share: two proxies, one lost leaves the other routing.
  EXPECT_EQ(by_file.at("frames-router-deployment.yaml")["spec"]["replicas"].as<int>(), 2);
}

// Scaled to zero, the pool keeps its proxy: the interceptor forwards to the proxy's Service, whose
// pod is ready only while a replica is up (/ready), and it scales the replicas.
TEST(HaproxyManifests, APoolScaledToZeroIsWokenThroughItsProxy) {
  ManifestInput in = queued_frames_input();
  in.min_replicas = 0;
  const std::map<std::string, YAML::Node> by_file = by_file_name(service_manifests(in));
  const YAML::Node proxy = by_file.at("frames-router-deployment.yaml");
  const YAML::Node target = by_file.at("frames-interceptorroute.yaml")["spec"]["target"];
  // The ScaledObject scales the replicas' Deployment on the interceptor's count.
  EXPECT_EQ(by_file.at("frames-keda-scaledobject.yaml")["spec"]["scaleTargetRef"]["name"].as<std::string>(), "frames");
  EXPECT_TRUE(selects(string_map(by_file.at(target["service"].as<std::string>() + "-service.yaml")["spec"]["selector"]),
                      string_map(proxy["spec"]["template"]["metadata"]["labels"])));
  const YAML::Node container = proxy["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/ready");
  EXPECT_EQ(container["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  const std::string cfg = by_file.at("frames-router-configmap.yaml")["data"]["haproxy.cfg"].as<std::string>();
  EXPECT_EQ(config_lines(cfg, "http-request return status 503").size(), 1u) << cfg;
  EXPECT_NE(cfg.find("nbsrv(replicas) eq 0"), std::string::npos) << cfg;
  // Still one queue the replicas share, in one proxy.
  EXPECT_EQ(proxy["spec"]["replicas"].as<int>(), 1);
  EXPECT_EQ(config_lines(cfg, "balance"), (std::vector<std::string>{"balance leastconn"}));
}

}  // namespace
}  // namespace gw
