// The HPA's floor from a schedule: a CronJob per change, each patching that HPA alone to the
// change's count at its time in the schedule's zone, never starting so late that it lands
// after the next change; pods the service's Service does not select; names the API server takes;
// RBAC that allows that one patch.
#include "k8s/hpa_schedule_manifests.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "k8s/manifest_schemas_test.h"
#include "k8s/yaml_json_test.h"

namespace gw {
namespace {

using testing_support::ManifestSchemas;
using testing_support::to_json;

ManifestInput scheduled_input(const std::string& service) {
  ManifestInput in;
  in.service = service;
  in.llm = true;
  in.accelerator = "H100";
  in.min_replicas = 1;
  in.max_replicas = 4;
  in.timezone = "America/New_York";
  std::vector<int> week(7 * 1440, 1);
  for (int day = 0; day < 5; ++day) {
    for (int m = day * 1440 + 8 * 60 + 43; m < day * 1440 + 18 * 60; ++m) week[static_cast<size_t>(m)] = 3;
    for (int m = day * 1440 + 12 * 60; m < day * 1440 + 12 * 60 + 2; ++m) week[static_cast<size_t>(m)] = 4;  // two minutes at noon
  }
  in.schedule = cron_windows(week, 1);
  in.schedule_changes = cron_changes(week, 1);
  return in;
}

TEST_F(ManifestSchemas, HpaFloorJobsValidateAndPatchTheirHpaAlone) {
  const ManifestInput in = scheduled_input("Chat 405B");
  const auto manifests = hpa_schedule_manifests(in);
  ASSERT_EQ(in.schedule_changes.size(), 4u);  // 08:43 to 3, 12:00 to 4, 12:02 to 3, 18:00 to 1
  ASSERT_EQ(manifests.size(), 3u + 4u);
  int jobs = 0;
  for (const auto& m : manifests) {
    const YAML::Node doc = YAML::Load(m.yaml);
    EXPECT_EQ(validate(to_json(doc), schema_for(m.file_name)), 0) << m.file_name << "\n" << m.yaml << "\n" << last_log_;
    if (m.file_name == "chat-405b-hpa-schedule-role.yaml") {
      EXPECT_EQ(doc["rules"][0]["resourceNames"][0].as<std::string>(), "chat-405b");
      EXPECT_EQ(doc["rules"][0]["resources"][0].as<std::string>(), "horizontalpodautoscalers");
    }
    if (m.file_name.find("cronjob") == std::string::npos) continue;
    const CronChange& change = in.schedule_changes[static_cast<size_t>(jobs++)];
    EXPECT_EQ(doc["metadata"]["name"].as<std::string>(), "chat-405b-floor-" + std::to_string(jobs));
    const YAML::Node spec = doc["spec"];
    EXPECT_EQ(spec["schedule"].as<std::string>(), change.at);
    EXPECT_EQ(spec["timeZone"].as<std::string>(), "America/New_York");
    // Started late, a job still lands before the next change.
    EXPECT_LT(spec["startingDeadlineSeconds"].as<int>(), change.holds_minutes * 60 + 1) << m.yaml;
    EXPECT_GE(spec["startingDeadlineSeconds"].as<int>(), 60);
    const YAML::Node pod = spec["jobTemplate"]["spec"]["template"];
    EXPECT_FALSE(pod["metadata"]["labels"]["gpuwise.dev/service"]) << "the service's Service would select the job's pod";
    EXPECT_EQ(pod["spec"]["serviceAccountName"].as<std::string>(), "chat-405b-hpa-schedule");
    const YAML::Node args = pod["spec"]["containers"][0]["args"];
    EXPECT_EQ(args[0].as<std::string>() + " " + args[1].as<std::string>() + " " + args[2].as<std::string>(),
              "patch horizontalpodautoscaler chat-405b");
    EXPECT_EQ(args[4].as<std::string>(), "--patch={\"spec\":{\"minReplicas\":" + std::to_string(change.replicas) + "}}");
  }
  EXPECT_EQ(jobs, 4);
  // The extract is strict: a misspelt field or a policy the API server does not know fails.
  const Manifest& job = manifests.back();
  nlohmann::json document = to_json(YAML::Load(job.yaml));
  document["spec"]["concurrencyPolicy"] = "Replaced";
  EXPECT_NE(validate(document, schema_for(job.file_name)), 0);
  document = to_json(YAML::Load(job.yaml));
  document["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["arg"] =
      document["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"];
  EXPECT_NE(validate(document, schema_for(job.file_name)), 0);
  // The two-minute noon step: its jobs may start at most a minute late.
  const auto noon =
      std::find_if(in.schedule_changes.begin(), in.schedule_changes.end(), [](const CronChange& c) { return c.replicas == 4; });
  ASSERT_NE(noon, in.schedule_changes.end());
  EXPECT_EQ(noon->holds_minutes, 2);
  ManifestInput none = in;
  none.schedule_changes.clear();
  EXPECT_TRUE(hpa_schedule_manifests(none).empty());
}

TEST(HpaScheduleManifests, CronJobNamesStayWithinFiftyTwoCharacters) {
  ManifestInput in = scheduled_input("a very long service name for the customer support assistant of the retail bank");
  in.schedule_changes.resize(12, in.schedule_changes.front());  // two-digit numbers
  // Every job's name is the one prefix the HPA's file names (to run a change by hand) and its number.
  const std::string prefix = floor_cronjob_prefix(in);
  for (size_t i = 1; i <= in.schedule_changes.size(); ++i) {
    const std::string name = floor_cronjob_name(in, i);
    EXPECT_LE(name.size(), 52u) << name;
    EXPECT_EQ(name, prefix + "-" + std::to_string(i));
    EXPECT_EQ(name.substr(name.size() - std::to_string(i).size() - 7), "-floor-" + std::to_string(i));
  }
  EXPECT_EQ(floor_cronjob_name(in, 12).size(), 52u);
  EXPECT_NE(prefix[prefix.size() - 7], '-') << prefix;  // no dash left before "-floor" where the name was cut
  EXPECT_EQ(floor_cronjob_name(scheduled_input("Chat"), 2), "chat-floor-2");
}

}  // namespace
}  // namespace gw
