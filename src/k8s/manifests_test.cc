// Emitted manifests against the published schemas of their APIs (schemas/k8s, ajv), for an LLM
// service scaled to zero on AWS and a classic one kept warm on Azure; a misspelt field or a
// wrong enum value fails the same check; names are made DNS-1123 and strings stay quoted.
#include "k8s/manifests.h"

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>

#include <map>

#include "k8s/manifest_schemas_test.h"
#include "k8s/yaml_json_test.h"
#include <nlohmann/json.hpp>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

namespace gw {
namespace {

using testing_support::ManifestSchemas;
using testing_support::to_json;

ManifestInput llm_input() {
  ManifestInput in;
  in.service = "Chat Service (prod)";
  in.llm = true;
  in.queue_threshold = 21.74;
  in.min_replicas = 0;
  in.max_replicas = 8;
  in.peak_replicas = 2;
  in.cooldown_s = 210;
  in.why_min = "scale to zero met the SLO";
  in.why_threshold = "capacity x latency";
  in.cloud = "aws";
  in.instance_types = {"g6.xlarge", "g6.12xlarge"};
  in.capacity_types = {"on-demand", "spot"};
  in.gpus_per_replica = 2;
  in.replicas = 3;
  in.min_nodes = 2;
  in.spot_floor = true;
  in.floor_replicas = 1;
  in.model_name = "llama-3.1-8b";
  in.model_uri = "s3://models-bucket/llama-3.1-8b/2024-07-23";
  in.startup_s = 40;
  in.accelerator = "L4";
  in.usd_per_replica_hour = 1.6;
  in.cold_start_s = 181;
  return in;
}

TEST_F(ManifestSchemas, EveryManifestValidates) {
  ManifestInput classic = llm_input();
  classic.service = "image-generation";
  classic.llm = false;
  classic.min_replicas = 3;
  classic.cloud = "azure";
  classic.capacity_types = {"on-demand"};
  ManifestInput elsewhere = llm_input();
  elsewhere.cloud = "runpod";
  int checked = 0;
  for (const ManifestInput& in : {llm_input(), classic, elsewhere}) {
    for (const auto& m : service_manifests(in)) {
      nlohmann::json document = to_json(YAML::Load(m.yaml));
      EXPECT_EQ(validate(document, schema_for(m.file_name)), 0) << m.file_name << "\n" << m.yaml << "\n" << last_log_;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20);
}

// Without scaling.model_uri the weights' placeholder is in the plan's cloud's object storage and
// fetched with its own tool: a GCP plan copied them from s3:// with the AWS CLI.
TEST(Manifests, TheWeightsPlaceholderIsTheCloudsObjectStorage) {
  auto fetch = [](const std::string& cloud) {
    ManifestInput in = llm_input();
    in.model_uri.clear();
    in.cloud = cloud;
    for (const auto& m : service_manifests(in))
      if (m.file_name.find("-deployment.yaml") != std::string::npos)
        return YAML::Load(m.yaml)["spec"]["template"]["spec"]["initContainers"][0];
    return YAML::Node();
  };
  const YAML::Node gcp = fetch("gcp");
  ASSERT_TRUE(gcp.IsMap());
  EXPECT_EQ(gcp["command"][0].as<std::string>(), "gcloud");
  EXPECT_EQ(gcp["command"][4].as<std::string>(), "gs://YOUR-BUCKET/models/llama-3-1-8b/REVISION");
  EXPECT_NE(gcp["image"].as<std::string>().find("google-cloud-cli"), std::string::npos);
  const YAML::Node aws = fetch("aws");
  EXPECT_EQ(aws["command"][0].as<std::string>(), "aws");
  EXPECT_EQ(aws["command"][4].as<std::string>(), "s3://YOUR-BUCKET/models/llama-3-1-8b/REVISION");
  // Azure's Blob Storage has no copy written yet: the Deployment says so where the placeholder is.
  ManifestInput azure = llm_input();
  azure.model_uri.clear();
  azure.cloud = "azure";
  for (const auto& m : service_manifests(azure))
    if (m.file_name.find("-deployment.yaml") != std::string::npos) {
      EXPECT_NE(m.yaml.find("replace the fetch-weights init container with azcopy"), std::string::npos) << m.yaml;
    }
}

// Triton's pending count, what a classic model's queue-depth query reads, is on its metrics port
// (8002), not its HTTP port: the ServiceMonitor scrapes the Service's port of that name, which
// reaches the container port the server was told to serve its metrics on.
TEST(Manifests, TritonsMetricsPortIsScraped) {
  ManifestInput classic = llm_input();
  classic.service = "image-generation";
  classic.llm = false;
  classic.min_replicas = 3;
  std::map<std::string, YAML::Node> by_file;
  for (const auto& m : service_manifests(classic)) by_file[m.file_name] = YAML::Load(m.yaml);
  ASSERT_EQ(by_file.count("image-generation-servicemonitor.yaml"), 1u);
  const YAML::Node monitor = by_file["image-generation-servicemonitor.yaml"], service = by_file["image-generation-service.yaml"];
  const std::string port = monitor["spec"]["endpoints"][0]["port"].as<std::string>();
  std::string target;
  for (const auto& p : service["spec"]["ports"])
    if (p["name"].as<std::string>() == port) target = p["targetPort"].as<std::string>();
  ASSERT_FALSE(target.empty()) << "the Service has no port " << port;
  const YAML::Node container = by_file["image-generation-deployment.yaml"]["spec"]["template"]["spec"]["containers"][0];
  int container_port = 0;
  for (const auto& p : container["ports"])
    if (p["name"].as<std::string>() == target) container_port = p["containerPort"].as<int>();
  EXPECT_EQ(container_port, 8002);
  bool told = false;
  for (const auto& arg : container["args"]) told |= arg.as<std::string>() == "--metrics-port=8002";
  EXPECT_TRUE(told) << "Triton serves its metrics where it is scraped";
  EXPECT_NE(by_file["image-generation-keda-scaledobject.yaml"]["spec"]["triggers"][0]["metadata"]["query"].as<std::string>().find(
                "nv_inference_pending_request_count{service=\"image-generation\"}"),
            std::string::npos);
  // vLLM serves /metrics on its API port: its ServiceMonitor scrapes http.
  ManifestInput warm = llm_input();
  warm.min_replicas = 2;
  for (const auto& m : service_manifests(warm)) {
    if (m.file_name == "chat-service-prod-servicemonitor.yaml") {
      EXPECT_EQ(YAML::Load(m.yaml)["spec"]["endpoints"][0]["port"].as<std::string>(), "http");
    }
  }
}

// A schedule beside the metric: cron triggers after the Prometheus one, each a valid KEDA
// trigger in the profile's clock; for the HPA, valid CronJobs that set its floor at the changes.
TEST_F(ManifestSchemas, AScheduleIsWrittenAsCronTriggersAndAsTheHpasFloor) {
  ManifestInput in = llm_input();
  in.min_replicas = 2;
  std::vector<int> week(7 * 1440, 2);
  for (int day = 0; day < 5; ++day)
    for (int m = day * 1440 + 8 * 60 + 40; m < day * 1440 + 18 * 60; ++m) week[static_cast<size_t>(m)] = 5;
  in.schedule = cron_windows(week, in.min_replicas);
  in.schedule_changes = cron_changes(week, in.min_replicas);
  in.timezone = "Europe/Berlin";
  in.why_schedule = "queue depth alone missed the SLO";
  int scalers = 0;
  for (const auto& m : service_manifests(in)) {
    const YAML::Node doc = YAML::Load(m.yaml);
    EXPECT_EQ(validate(to_json(doc), schema_for(m.file_name)), 0) << m.file_name << "\n" << m.yaml << "\n" << last_log_;
    if (m.file_name == "chat-service-prod-keda-scaledobject.yaml") {
      ++scalers;
      const YAML::Node triggers = doc["spec"]["triggers"];
      ASSERT_EQ(triggers.size(), 2u) << m.yaml;
      EXPECT_EQ(triggers[0]["type"].as<std::string>(), "prometheus");
      EXPECT_EQ(triggers[1]["type"].as<std::string>(), "cron");
      EXPECT_EQ(triggers[1]["metadata"]["timezone"].as<std::string>(), "Europe/Berlin");
      EXPECT_EQ(triggers[1]["metadata"]["start"].as<std::string>(), "40 8 * * 1-5");
      EXPECT_EQ(triggers[1]["metadata"]["end"].as<std::string>(), "0 18 * * 1-5");
      EXPECT_EQ(triggers[1]["metadata"]["desiredReplicas"].as<std::string>(), "5");
      EXPECT_NE(m.yaml.find("# Cron triggers (Europe/Berlin): queue depth alone missed the SLO."), std::string::npos) << m.yaml;
    }
    if (m.file_name == "chat-service-prod-hpa.yaml") {
      ++scalers;
      EXPECT_EQ(doc["spec"]["minReplicas"].as<int>(), 2);
      EXPECT_NE(m.yaml.find("It follows the schedule (Europe/Berlin) through 2 CronJob(s)"), std::string::npos) << m.yaml;
      // The command it gives to run a change now names the jobs as they are written.
      EXPECT_NE(m.yaml.find("--from=cronjob/chat-service-prod-floor-K "), std::string::npos) << m.yaml;
    }
    if (m.file_name.find("cronjob") != std::string::npos) {
      ++scalers;
      EXPECT_EQ(doc["spec"]["timeZone"].as<std::string>(), "Europe/Berlin");
      const YAML::Node args = doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"];
      EXPECT_EQ(args[2].as<std::string>(), "chat-service-prod");  // the HPA's name
      const bool morning = doc["spec"]["schedule"].as<std::string>() == "40 8 * * 1-5";
      EXPECT_EQ(args[4].as<std::string>(), morning ? R"(--patch={"spec":{"minReplicas":5}})" : R"(--patch={"spec":{"minReplicas":2}})");
    }
  }
  EXPECT_EQ(scalers, 4);
}

TEST_F(ManifestSchemas, MisspeltFieldsAndBadValuesFail) {
  auto manifests = service_manifests(llm_input());
  nlohmann::json deployment = to_json(YAML::Load(manifests[0].yaml));
  deployment["spec"]["template"]["spec"]["tolerations"][0]["effect"] = "NoScheduling";
  EXPECT_NE(validate(deployment, schema_for(manifests[0].file_name)), 0);
  deployment = to_json(YAML::Load(manifests[0].yaml));
  deployment["spec"]["template"]["spec"]["containers"][0]["resource"] = deployment["spec"]["template"]["spec"]["containers"][0]["resources"];
  EXPECT_NE(validate(deployment, schema_for(manifests[0].file_name)), 0);
  nlohmann::json route = to_json(YAML::Load(manifests[2].yaml));
  route["spec"]["target"].erase("port");  // neither port nor portName
  EXPECT_NE(validate(route, schema_for(manifests[2].file_name)), 0);
  route = to_json(YAML::Load(manifests[2].yaml));
  route["spec"]["target"]["portName"] = "http";  // both
  EXPECT_NE(validate(route, schema_for(manifests[2].file_name)), 0);
  route = to_json(YAML::Load(manifests[2].yaml));
  route["spec"]["timeouts"]["conditionWait"] = "362s";  // the HTTPScaledObject's name, not the InterceptorRoute's
  EXPECT_NE(validate(route, schema_for(manifests[2].file_name)), 0);
  route = to_json(YAML::Load(manifests[2].yaml));
  route["spec"]["scalingMetric"].erase("concurrency");  // no metric
  EXPECT_NE(validate(route, schema_for(manifests[2].file_name)), 0);
  nlohmann::json service = to_json(YAML::Load(manifests[1].yaml));
  service["spec"]["ports"][0]["protocol"] = "HTTP";
  EXPECT_NE(validate(service, schema_for(manifests[1].file_name)), 0);
  ManifestInput warm = llm_input();
  warm.min_replicas = 2;
  auto kept = service_manifests(warm);
  nlohmann::json keda = to_json(YAML::Load(kept[2].yaml));
  keda["spec"]["minReplicas"] = 0;  // HPA's name, not KEDA's
  EXPECT_NE(validate(keda, schema_for(kept[2].file_name)), 0);
  nlohmann::json hpa = to_json(YAML::Load(manifests[4].yaml));
  hpa["spec"]["metrics"][0]["external"]["target"]["averageValue"] = "twenty";
  EXPECT_NE(validate(hpa, schema_for(manifests[4].file_name)), 0);
  nlohmann::json pool = to_json(YAML::Load(manifests[6].yaml));
  pool["spec"]["disruption"]["consolidationPolicy"] = "WhenUnderutilized";  // the pre-v1 name
  EXPECT_NE(validate(pool, schema_for(manifests[6].file_name)), 0);
}

// A schedule of one count throughout needs no job: the HPA's floor is that count.
TEST(Manifests, AScheduleOfOneCountIsTheHpasFloor) {
  ManifestInput in = llm_input();
  in.min_replicas = 1;
  const std::vector<int> day(1440, 3);
  in.schedule = cron_windows(day, 1);
  in.schedule_changes = cron_changes(day, 1);
  ASSERT_FALSE(in.schedule.empty());
  ASSERT_TRUE(in.schedule_changes.empty());
  int hpas = 0;
  for (const auto& m : service_manifests(in)) {
    EXPECT_EQ(m.file_name.find("cronjob"), std::string::npos) << m.file_name;
    if (m.file_name != "chat-service-prod-hpa.yaml") continue;
    ++hpas;
    EXPECT_EQ(YAML::Load(m.yaml)["spec"]["minReplicas"].as<int>(), 3) << m.yaml;
  }
  EXPECT_EQ(hpas, 1);
}

TEST(Manifests, NamesAndFigures) {
  EXPECT_EQ(dns_label("Chat Service (prod)"), "chat-service-prod");
  EXPECT_EQ(dns_label("--"), "service");
  EXPECT_EQ(dns_label(std::string(80, 'a')).size(), 63u);
  auto manifests = service_manifests(llm_input());
  ASSERT_EQ(manifests.size(), 7u);
  // The HPA alternative's metric is scraped at zero too (the ScaledObject reads the interceptor).
  EXPECT_EQ(manifests[5].file_name, "chat-service-prod-servicemonitor.yaml");
  // Scaled to zero: no Prometheus trigger on the replicas' own gauges (none exist at zero); the
  // HTTP add-on's interceptor holds requests and counts them (its InterceptorRoute), and a
  // ScaledObject wakes the Deployment on that count through the add-on's external scaler.
  EXPECT_EQ(manifests[1].file_name, "chat-service-prod-service.yaml");
  EXPECT_EQ(manifests[2].file_name, "chat-service-prod-interceptorroute.yaml");
  EXPECT_EQ(manifests[3].file_name, "chat-service-prod-keda-scaledobject.yaml");
  YAML::Node service = YAML::Load(manifests[1].yaml);
  YAML::Node route = YAML::Load(manifests[2].yaml);
  YAML::Node from_zero = YAML::Load(manifests[3].yaml);
  EXPECT_EQ(route["spec"]["scalingMetric"]["concurrency"]["targetValue"].as<int>(), 21);
  EXPECT_EQ(route["spec"]["target"]["service"].as<std::string>(), service["metadata"]["name"].as<std::string>());
  EXPECT_EQ(route["spec"]["target"]["port"].as<int>(), service["spec"]["ports"][0]["port"].as<int>());
  EXPECT_EQ(route["spec"]["rules"][0]["hosts"][0].as<std::string>(), "chat-service-prod");
  EXPECT_EQ(route["spec"]["timeouts"]["readiness"].as<std::string>(), "362s");  // twice the 181 s cold start
  // Response headers waited for as long as clients wait, at least 300 s; no limit where they set none.
  EXPECT_EQ(route["spec"]["timeouts"]["responseHeader"].as<std::string>(), "300s");  // clients wait 60 s
  ManifestInput patient = llm_input();
  patient.client_timeout_s = 900;
  EXPECT_EQ(YAML::Load(service_manifests(patient)[2].yaml)["spec"]["timeouts"]["responseHeader"].as<std::string>(), "900s");
  patient.client_timeout_s = 0;
  EXPECT_EQ(YAML::Load(service_manifests(patient)[2].yaml)["spec"]["timeouts"]["responseHeader"].as<std::string>(), "0s");
  EXPECT_EQ(from_zero["spec"]["minReplicaCount"].as<int>(), 0);
  EXPECT_EQ(from_zero["spec"]["maxReplicaCount"].as<int>(), 8);
  EXPECT_EQ(from_zero["spec"]["cooldownPeriod"].as<int>(), 210);
  EXPECT_EQ(from_zero["spec"]["scaleTargetRef"]["name"].as<std::string>(), "chat-service-prod");
  ASSERT_EQ(from_zero["spec"]["triggers"].size(), 1u);
  EXPECT_EQ(from_zero["spec"]["triggers"][0]["type"].as<std::string>(), "external-push");
  EXPECT_EQ(from_zero["spec"]["triggers"][0]["metadata"]["interceptorRoute"].as<std::string>(), route["metadata"]["name"].as<std::string>());
  EXPECT_EQ(from_zero["spec"]["triggers"][0]["metadata"]["scalerAddress"].as<std::string>(), "keda-add-ons-http-external-scaler.keda:9090");
  EXPECT_EQ(service["spec"]["selector"]["gpuwise.dev/service"].as<std::string>(), "chat-service-prod");
  // Kept warm: the Prometheus trigger on the replicas' queue depth.
  ManifestInput warm = llm_input();
  warm.min_replicas = 2;
  auto kept = service_manifests(warm);
  ASSERT_EQ(kept.size(), 6u);  // and the ServiceMonitor the trigger's query depends on
  EXPECT_EQ(kept[2].file_name, "chat-service-prod-keda-scaledobject.yaml");
  // The scrape the query reads: the Service's pods on its http port, the series labelled with its name.
  ASSERT_EQ(kept[4].file_name, "chat-service-prod-servicemonitor.yaml");
  const YAML::Node monitor = YAML::Load(kept[4].yaml), kept_service = YAML::Load(kept[1].yaml);
  for (const auto& label : monitor["spec"]["selector"]["matchLabels"])
    EXPECT_EQ(kept_service["metadata"]["labels"][label.first.as<std::string>()].as<std::string>(), label.second.as<std::string>());
  EXPECT_EQ(monitor["spec"]["endpoints"][0]["port"].as<std::string>(), kept_service["spec"]["ports"][0]["name"].as<std::string>());
  YAML::Node keda = YAML::Load(kept[2].yaml);
  EXPECT_EQ(keda["spec"]["minReplicaCount"].as<int>(), 2);
  EXPECT_EQ(keda["spec"]["triggers"][0]["metadata"]["threshold"].as<std::string>(), "21.7");
  EXPECT_NE(keda["spec"]["triggers"][0]["metadata"]["query"].as<std::string>().find("vllm:num_requests_waiting{service=\"chat-service-prod\"}"),
            std::string::npos);
  YAML::Node hpa = YAML::Load(manifests[4].yaml);
  EXPECT_EQ(hpa["spec"]["minReplicas"].as<int>(), 1);  // an HPA cannot go to zero
  EXPECT_EQ(hpa["spec"]["metrics"][0]["external"]["target"]["averageValue"].as<std::string>(), "21740m");
  YAML::Node pool = YAML::Load(manifests[6].yaml);
  EXPECT_EQ(pool["spec"]["limits"]["nvidia.com/gpu"].as<int>(), 16);  // 8 replicas x 2 GPUs
  // The Deployment lands on the pool's nodes and tolerates its taint, asks for the replica's
  // GPUs, loads the weights from object storage (not the image) and waits out the cold start.
  YAML::Node deployment = YAML::Load(manifests[0].yaml);
  EXPECT_EQ(manifests[0].file_name, "chat-service-prod-deployment.yaml");
  YAML::Node pod = deployment["spec"]["template"]["spec"];
  const YAML::Node taint = pool["spec"]["template"]["spec"]["taints"][0];
  bool tolerated = false;
  for (const auto& t : pod["tolerations"])
    tolerated |= t["key"].as<std::string>() == taint["key"].as<std::string>() && t["effect"].as<std::string>() == taint["effect"].as<std::string>() &&
                 t["operator"].as<std::string>() == "Exists";
  EXPECT_TRUE(tolerated);
  EXPECT_EQ(pod["nodeSelector"]["gpuwise.dev/service"].as<std::string>(),
            pool["spec"]["template"]["metadata"]["labels"]["gpuwise.dev/service"].as<std::string>());
  EXPECT_EQ(deployment["spec"]["replicas"].as<int>(), 3);
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<std::string>(), "2");
  EXPECT_EQ(pod["initContainers"][0]["command"][4].as<std::string>(), "s3://models-bucket/llama-3.1-8b/2024-07-23");
  EXPECT_EQ(pod["containers"][0]["startupProbe"]["failureThreshold"].as<int>() * pod["containers"][0]["startupProbe"]["periodSeconds"].as<int>(),
            80);  // twice the 40 s start
  bool hostname_spread = false;
  for (const auto& c : pod["topologySpreadConstraints"]) hostname_spread |= c["topologyKey"].as<std::string>() == "kubernetes.io/hostname";
  EXPECT_TRUE(hostname_spread);
  EXPECT_EQ(pool["spec"]["template"]["spec"]["requirements"][0]["values"].size(), 2u);
  EXPECT_EQ(pool["spec"]["disruption"]["consolidateAfter"].as<std::string>(), "210s");
  // The shm volume fits inside the memory limit it counts against.
  ManifestInput small = llm_input();
  small.memory_gib_per_replica = 12.3;
  YAML::Node small_pod = YAML::Load(service_manifests(small)[0].yaml)["spec"]["template"]["spec"];
  EXPECT_EQ(small_pod["containers"][0]["resources"]["limits"]["memory"].as<std::string>(), "12Gi");
  EXPECT_EQ(small_pod["volumes"][1]["emptyDir"]["sizeLimit"].as<std::string>(), "6Gi");
  // The service's own name appears only quoted in comments: a name with YAML syntax stays inert.
  ManifestInput odd = llm_input();
  odd.service = "x: {y: [z]} # \"q\"";
  for (const auto& m : service_manifests(odd)) EXPECT_NO_THROW(YAML::Load(m.yaml)) << m.yaml;
}

}  // namespace
}  // namespace gw
