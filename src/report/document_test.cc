// Escaping in every format, and the HTML report rendered in headless chromium: charts drawn from
// their data, no console errors, no network requests, hostile names shown as text.
#include "report/document.h"

#include "core/require_tools_test.h"

#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gw {
namespace {

const std::string kHostile = "<script>alert(1)</script>";

TEST(Report, HtmlEscapesTextAndScriptData) {
  EXPECT_EQ(html_escape(kHostile + " & \"q\" 'a'"), "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot; &#39;a&#39;");
  nlohmann::json data = {{"pod", kHostile}, {"line", "a\u2028b"}};
  std::string safe = script_safe_json(data);
  EXPECT_EQ(safe.find("</script"), std::string::npos);
  EXPECT_EQ(safe.find('<'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(safe), data);  // the same data once parsed
  // Invalid UTF-8 from telemetry is replaced, not a failure.
  EXPECT_NO_THROW(script_safe_json(nlohmann::json(std::string("bad \xff byte"))));
}

TEST(Report, MarkdownEscapesMarkupAndNewlines) {
  Document d;
  d.title = "fleet";
  Section s;
  Table t;
  t.columns = {"pod", "usd"};
  t.add_row({kHostile + "|x\ny", "1"});
  s.tables.push_back(t);
  s.paragraphs.push_back("*not bold* " + kHostile);
  d.sections.push_back(s);
  std::string md = render_markdown(d);
  EXPECT_NE(md.find("\\<script\\>alert(1)\\</script\\>\\|x y"), std::string::npos) << md;
  EXPECT_NE(md.find("\\*not bold\\*"), std::string::npos) << md;
  EXPECT_EQ(md.find("<script>"), std::string::npos);
}

using testing_support::have;

// Two weeks of dcgm-exporter scrapes for five GPUs whose pods have hostile names.
void write_fleet(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "fleet.prom");
    const char* pods[] = {"train-a", "infer-b", "<script>alert(1)</script>", "quote\\\"pod's", "\xC3\xBCn\xC3\xAF-\xE6\xA8\xA1\xE5\x9E\x8B"};
    double utils[] = {0, 20, 85, -1, 80};
    double memory_mib[] = {900, 60000, 9000, 70000, 70000};
    for (int step = 0; step < 14 * 24 * 12; ++step) {
      long long t = 1714348800LL + step * 300LL;  // from Monday 2024-04-29
      for (int i = 0; i < 5; ++i) {
        double util = utils[i] >= 0 ? utils[i] : ((t / 3600) % 24 < 12 ? 0 : 90);
        std::string labels = fmt::format("gpu=\"{}\",UUID=\"GPU-{}\",Hostname=\"node-{}\",modelName=\"NVIDIA A100-SXM4-80GB\",pod=\"{}\",namespace=\"team-{}\"",
                                         i, i, i, pods[i], i % 2);
        out << fmt::format("DCGM_FI_DEV_GPU_UTIL{{{}}} {} {}\n", labels, util, t * 1000);
        out << fmt::format("DCGM_FI_DEV_FB_USED{{{}}} {} {}\n", labels, memory_mib[i], t * 1000);
      }
    }
  }
}

// The audit of a fleet whose pods have hostile names, rendered in chromium.
TEST(Report, AuditHtmlRendersInChromium) {
  REQUIRE_TOOLS(have("node") && have("chromium"), "node and chromium are required (scripts/bootstrap installs them)");
  auto web = std::filesystem::path(GPUWISE_SOURCE_DIR) / "web";
  if (!std::filesystem::exists(web / "node_modules" / "playwright-core"))
    GTEST_FAIL() << "web/node_modules is missing (scripts/bootstrap runs npm ci in web/)";
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_html_{}", ::getpid());
  write_fleet(dir);
  std::string report = (dir / "audit.html").string();
  ASSERT_EQ(std::system(fmt::format("'{}' audit '{}' --group-by pod --format html -o '{}' --charts '{}' -q", GPUWISE_BINARY,
                                    (dir / "fleet.prom").string(), report, (dir / "charts").string()).c_str()), 0);
  // The charts also as Vega-Lite specs beside the report: waterfall, waste, heat map, cost by pod.
  for (int n = 1; n <= 4; ++n) {
    std::ifstream spec(dir / "charts" / fmt::format("audit-{}.vl.json", n));
    ASSERT_TRUE(spec.good()) << n;
    auto json = nlohmann::json::parse(spec);
    EXPECT_TRUE(json.contains("$schema") && json.contains("data") && json.contains("title")) << n;
  }
  // The screenshot is kept in the build folder for people to look at.
  std::string screenshot = (std::filesystem::path(GPUWISE_BINARY).parent_path() / "audit-report.png").string();
  std::string command = fmt::format("cd '{}' && node test/render.mjs '{}' '{}' '{}' >'{}' 2>&1", web.string(), report, screenshot,
                                    kHostile, (dir / "render.log").string());
  int status = std::system(command.c_str());
  std::ifstream log(dir / "render.log");
  std::string text((std::istreambuf_iterator<char>(log)), {});
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("\"failures\":[]"), std::string::npos) << text;
  EXPECT_TRUE(std::filesystem::exists(screenshot));
  std::filesystem::remove_all(dir);
}

// Plans (inference and training), a simulation, a fit and a spot training run as HTML: the
// frontier charts, the latency CDF, the memory charts and the completion-time distribution draw.
TEST(Report, PlanSimulationAndFitHtmlRenderInChromium) {
  REQUIRE_TOOLS(have("node") && have("chromium"), "node and chromium are required (scripts/bootstrap installs them)");
  auto root = std::filesystem::path(GPUWISE_SOURCE_DIR);
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_plan_html_{}", ::getpid());
  std::filesystem::create_directories(dir);
  // Each example with a text its report must show (the chart's title).
  struct Case {
    std::string name, arguments, title;
  };
  std::string examples = (root / "examples").string();
  for (const auto& [name, arguments, title] :
       {Case{"plan-spam-filter", "plan --no-simulate '" + examples + "/spam-filter.yaml'", "Cost against latency"},
        Case{"plan-pretrain-7b", "plan '" + examples + "/pretrain-7b.yaml'", "Time against cost per run"},
        Case{"simulate-spam-filter", "simulate --requests 20000 '" + examples + "/spam-filter.yaml'", "Latency CDF"},
        Case{"fit-llama-3.1-70b", "fit llama-3.1-70b", "Needed against usable memory"},
        Case{"scale-sd-alibaba", "scale '" + examples + "/sd-serving-alibaba.yaml'", "Replicas against demand"},
        Case{"scale-chat-azure-layouts", "scale '" + examples + "/chat-azure.yaml'", "Across 6 replica layouts"},
        Case{"fleet-shared-pool", "fleet '" + examples + "/fleet-shared-pool.yaml'", "GPUs busy through the week"},
        Case{"mix-week", "mix '" + examples + "/demand-week.csv' --on-demand 4 --reserved-1y 2.5 --reserved-3y 1.8 --spot 1.2",
             "Demand by how it is paid"},
        Case{"fleet-what-if", "fleet '" + examples + "/what-if-t4.yaml'", "Cost per month after each step"},
        Case{"train-spot", "train llama-3.2-1b --tokens 1e11 --accelerator H100 --count 8 --pricing spot --deadline-days 5 --runs 500",
             "Completion time of each simulated run"}}) {
    std::string report = (dir / (name + ".html")).string();
    ASSERT_EQ(std::system(fmt::format("'{}' {} --format html -o '{}' -q", GPUWISE_BINARY, arguments, report).c_str()), 0) << name;
    std::string screenshot = (std::filesystem::path(GPUWISE_BINARY).parent_path() / (name + ".png")).string();
    int status = std::system(fmt::format("cd '{}' && node test/render.mjs '{}' '{}' '{}' >'{}' 2>&1", (root / "web").string(),
                                         report, screenshot, title, (dir / "render.log").string())
                                 .c_str());
    std::ifstream log(dir / "render.log");
    std::string text((std::istreambuf_iterator<char>(log)), {});
    EXPECT_EQ(status, 0) << name << ": " << text;
  }
  std::filesystem::remove_all(dir);
}

// The audit's JSON validates against schemas/audit.schema.json, and a document missing a
// required field does not (so the check can fail).
TEST(Report, AuditJsonValidatesAgainstItsSchema) {
  REQUIRE_TOOLS(have("node"), "node is required (scripts/bootstrap installs it)");
  auto root = std::filesystem::path(GPUWISE_SOURCE_DIR);
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_schema_{}", ::getpid());
  write_fleet(dir);
  std::string json_path = (dir / "audit.json").string();
  ASSERT_EQ(std::system(fmt::format("'{}' audit '{}' --group-by namespace --format json -o '{}' -q", GPUWISE_BINARY,
                                    (dir / "fleet.prom").string(), json_path).c_str()), 0);
  auto validate = [&](const std::string& document) {
    return std::system(fmt::format("cd '{}' && node test/validate.mjs '{}' '{}' >'{}' 2>&1", (root / "web").string(),
                                   (root / "schemas" / "audit.schema.json").string(), document, (dir / "validate.log").string())
                           .c_str());
  };
  EXPECT_EQ(validate(json_path), 0);
  std::ifstream in(json_path);
  nlohmann::json document = nlohmann::json::parse(in);
  ASSERT_EQ(document["attribution"].size(), 2u);
  document.erase("summary");
  std::ofstream(dir / "broken.json") << document.dump();
  EXPECT_NE(validate((dir / "broken.json").string()), 0);
  std::filesystem::remove_all(dir);
}

// Every example's plan validates against schemas/plan.schema.json.
TEST(Report, PlanJsonValidatesAgainstItsSchema) {
  REQUIRE_TOOLS(have("node"), "node is required (scripts/bootstrap installs it)");
  auto root = std::filesystem::path(GPUWISE_SOURCE_DIR);
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_plan_schema_{}", ::getpid());
  std::filesystem::create_directories(dir);
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root / "examples")) {
    if (entry.path().extension() != ".yaml") continue;
    std::string out = (dir / (entry.path().stem().string() + ".json")).string();
    int status = std::system(fmt::format("'{}' plan '{}' --format json -o '{}' -q", GPUWISE_BINARY, entry.path().string(), out).c_str());
    ASSERT_TRUE(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3)) << entry.path();
    int valid = std::system(fmt::format("cd '{}' && node test/validate.mjs '{}' '{}' >'{}' 2>&1", (root / "web").string(),
                                        (root / "schemas" / "plan.schema.json").string(), out, (dir / "validate.log").string())
                                .c_str());
    std::ifstream log(dir / "validate.log");
    EXPECT_EQ(valid, 0) << entry.path() << ": " << std::string((std::istreambuf_iterator<char>(log)), {});
    ++checked;
  }
  EXPECT_GE(checked, 7);
  std::filesystem::remove_all(dir);
}

// The autoscaling report validates against schemas/scale.schema.json (a weekly profile, so
// weekend figures are numbers; a measured rate series, so they are null); a policy with an
// unknown name does not.
TEST(Report, ScaleJsonValidatesAgainstItsSchema) {
  REQUIRE_TOOLS(have("node"), "node is required (scripts/bootstrap installs it)");
  auto root = std::filesystem::path(GPUWISE_SOURCE_DIR);
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_scale_schema_{}", ::getpid());
  std::filesystem::create_directories(dir);
  auto validate = [&](const std::string& document) {
    return std::system(fmt::format("cd '{}' && node test/validate.mjs '{}' '{}' >'{}' 2>&1", (root / "web").string(),
                                   (root / "schemas" / "scale.schema.json").string(), document, (dir / "validate.log").string())
                           .c_str());
  };
  for (const char* example : {"sd-serving-alibaba", "dev-endpoint-weekdays", "chat-azure"}) {  // chat-azure: six layouts
    std::string out = (dir / (std::string(example) + ".json")).string();
    ASSERT_EQ(std::system(fmt::format("'{}' scale '{}' --format json -o '{}' -q", GPUWISE_BINARY,
                                      (root / "examples" / (std::string(example) + ".yaml")).string(), out).c_str()), 0) << example;
    int valid = validate(out);
    std::ifstream log(dir / "validate.log");
    EXPECT_EQ(valid, 0) << example << ": " << std::string((std::istreambuf_iterator<char>(log)), {});
    if (std::string(example) == "chat-azure") {  // the plan's layout, five others, and the cheapest across them
      std::ifstream in(out);
      nlohmann::json document = nlohmann::json::parse(in);
      const auto& service = document["services"][0];
      EXPECT_EQ(service["other_shapes"].size(), 5u);
      // The cheapest layout and policy that meet the SLO: never dearer than the plan's static pool.
      bool named = false;
      for (const auto& p : service["policies"]) named = named || p["name"] == service["recommended_shape"]["policy"];
      EXPECT_TRUE(named) << service["recommended_shape"];
      EXPECT_EQ(service["recommended_shape"]["tensor_parallel"], 1);
      EXPECT_LE(service["recommended_shape"]["usd_per_month"].get<double>(), service["policies"][0]["usd_per_month"].get<double>());
    }
    if (std::string(example) == "sd-serving-alibaba") {
      std::ifstream in(out);
      nlohmann::json document = nlohmann::json::parse(in);
      document["services"][0]["policies"][0]["name"] = "magic";
      std::ofstream(dir / "broken.json") << document.dump();
      EXPECT_NE(validate((dir / "broken.json").string()), 0);
    }
  }
  // The scheduled policy carries its schedule: 168 hours from Monday, asked whole minutes ahead.
  std::ifstream example(root / "examples" / "dev-endpoint-weekdays.yaml");
  std::ofstream(dir / "scheduled.yaml") << std::string((std::istreambuf_iterator<char>(example)), {})
                                        << "      policies: [static-peak, queue-depth, scheduled]\n";
  const std::string scheduled = (dir / "scheduled.json").string();
  ASSERT_EQ(std::system(fmt::format("'{}' scale '{}' --format json -o '{}' -q", GPUWISE_BINARY, (dir / "scheduled.yaml").string(),
                                    scheduled).c_str()), 0);
  EXPECT_EQ(validate(scheduled), 0);
  std::ifstream in(scheduled);
  const auto policies = nlohmann::json::parse(in)["services"][0]["policies"];
  ASSERT_EQ(policies.size(), 3u);
  EXPECT_FALSE(policies[1].contains("schedule"));
  ASSERT_TRUE(policies[2].contains("schedule")) << policies[2];
  EXPECT_EQ(policies[2]["schedule"]["replicas_by_hour"].size(), 168u);
  EXPECT_EQ(std::fmod(policies[2]["schedule"]["lead_s"].get<double>(), 60), 0);
  // A disaggregated deployment: its pools, scaled each on its own signal, as another layout.
  std::ifstream rag(root / "examples" / "rag-autoscaled-pools.yaml");
  std::ofstream(dir / "pools.yaml") << std::string((std::istreambuf_iterator<char>(rag)), {})
                                    << "    scaling: {policies: [static-peak, queue-depth, scheduled, pool-signals]}\n";
  const std::string pools = (dir / "pools.json").string();
  ASSERT_EQ(std::system(fmt::format("'{}' scale '{}' --hours 1 --format json -o '{}' -q", GPUWISE_BINARY, (dir / "pools.yaml").string(),
                                    pools).c_str()), 0);
  {
    std::ifstream log_in(dir / "validate.log");
    EXPECT_EQ(validate(pools), 0) << std::string((std::istreambuf_iterator<char>(log_in)), {});
  }
  std::ifstream pools_in(pools);
  const auto service = nlohmann::json::parse(pools_in)["services"][0];
  ASSERT_EQ(service["other_shapes"].size(), 1u);
  const auto& shape = service["other_shapes"][0];
  EXPECT_EQ(shape["replica"]["pools"].size(), 2u);
  for (const auto& policy : shape["policies"]) EXPECT_EQ(policy["pools"].size(), 2u) << policy["name"];
  EXPECT_EQ(shape["policies"][2]["pools"][1]["replicas_by_hour"].size(), 24u);
  EXPECT_EQ(shape["policies"][1]["series"][0]["pool_ready"].size(), 2u);
  std::filesystem::remove_all(dir);
}

// fit, simulate, train, catalog, mix, fleet and scale JSON validate against their schemas in several
// modes (inference, training with ZeRO, int4, a CNN; classic and LLM simulations, replicas across
// nodes simulated and left unscaled; on-demand and spot
// training; accelerators and offerings; a CSV and a spec's demand; a pool and a what-if), and a
// document with a required field removed does not.
TEST(Report, EveryOtherCommandsJsonValidatesAgainstItsSchema) {
  REQUIRE_TOOLS(have("node"), "node is required (scripts/bootstrap installs it)");
  auto root = std::filesystem::path(GPUWISE_SOURCE_DIR);
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuwise_more_schemas_{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::string examples = (root / "examples").string();
  struct Case {
    std::string schema, arguments;
  };
  auto validate = [&](const std::string& schema, const std::string& document) {
    int status = std::system(fmt::format("cd '{}' && node test/validate.mjs '{}' '{}' >'{}' 2>&1", (root / "web").string(),
                                         (root / "schemas" / (schema + ".schema.json")).string(), document, (dir / "log").string())
                                 .c_str());
    std::ifstream log(dir / "log");
    return std::make_pair(status, std::string((std::istreambuf_iterator<char>(log)), {}));
  };
  // Sliding-window layers in groups of their own (kv_layer_groups).
  const std::string windowed = (dir / "windowed.yaml").string();
  std::ofstream(windowed) << "models: {oss: {preset: gpt-oss-20b}}\nservices:\n  - name: long\n    model: oss\n"
                          << "    traffic: {rps: 2}\n    tokens: {input: 4000, output: 200}\n"
                          << "    slo: {ttft_p99_s: 5, tpot_p99_s: 0.1}\n"
                          << "    deployment: {replicas: 1, accelerator: L4, batching: continuous}\n";
  int n = 0;
  bool broken_checked = false;
  for (const auto& [schema, arguments] :
       {Case{"fit", "fit llama-3.1-8b"}, Case{"fit", "fit llama-3.1-70b --train --zero 3 --dp 64"},
        Case{"fit", "fit llama-3.1-405b --precision int4"}, Case{"fit", "fit resnet-50"},
        Case{"simulate", "simulate --requests 5000 '" + examples + "/spam-filter.yaml'"},
        Case{"simulate", "simulate --requests 3000 '" + examples + "/chat-azure.yaml'"},
        Case{"simulate", "simulate --requests 3000 --explain '" + examples + "/chat-azure.yaml'"},
        Case{"simulate", "simulate --requests 2000 '" + examples + "/llama-405b-multi-node.yaml'"},  // replicas across nodes
        Case{"simulate", "simulate --requests 300 '" + windowed + "'"},
        Case{"scale", "scale '" + examples + "/llama-405b-multi-node.yaml'"},                       // left at the plan's count
        Case{"train", "train llama-2-7b --tokens 50e9 --deadline-days 20"},
        Case{"train", "train llama-3.2-1b --tokens 1e11 --accelerator H100 --count 8 --pricing spot --deadline-days 5 --runs 200"},
        Case{"catalog", "catalog accelerators"}, Case{"catalog", "catalog offerings --accelerator H100"},
        Case{"mix", "mix '" + examples + "/demand-week.csv' --on-demand 4 --reserved-1y 2.5 --reserved-3y 1.8 --spot 1.2"},
        Case{"mix", "mix '" + examples + "/dev-endpoint-weekdays.yaml'"},
        Case{"fleet", "fleet '" + examples + "/fleet-shared-pool.yaml'"}, Case{"fleet", "fleet '" + examples + "/what-if-t4.yaml'"},
        Case{"fleet", "fleet '" + examples + "/fleet-models.yaml'"}, Case{"fleet", "fleet '" + examples + "/fleet-bucket-mix.yaml'"}}) {
    std::string out = (dir / fmt::format("{}-{}.json", schema, n++)).string();
    int status = std::system(fmt::format("'{}' {} --format json -o '{}' -q", GPUWISE_BINARY, arguments, out).c_str());
    ASSERT_TRUE(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3)) << arguments;
    auto [valid, log] = validate(schema, out);
    EXPECT_EQ(valid, 0) << arguments << ": " << log;
    if (schema == "train" && !broken_checked) {
      // The first training document, less a required field, does not validate.
      broken_checked = true;
      std::ifstream in(out);
      nlohmann::json document = nlohmann::json::parse(in);
      document.erase("gpu_hours");
      std::ofstream(dir / "broken.json") << document.dump();
      EXPECT_NE(validate("train", (dir / "broken.json").string()).first, 0);
    }
  }
  EXPECT_TRUE(broken_checked);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gw
