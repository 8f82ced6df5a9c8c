// The Prometheus client against a local fault-injecting server: down, slow (timeouts), 5xx,
// 4xx with an error body, truncated bodies, answers over the server's point limit or over our
// size limit (split by time range), warnings of partial data, and malformed points.
#include <atomic>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <thread>

#include "telemetry/prometheus_client.h"

namespace gw {
namespace {

constexpr double kEnd = 1714564800;  // an hour boundary
constexpr double kStep = 3600;

// A valid range-query answer for one GPU: 50% busy, 60 samples an hour, 40 GiB used.
std::string good_answer(const httplib::Request& request, const std::string& extra_label = "") {
  double start = std::stod(request.get_param_value("start")), end = std::stod(request.get_param_value("end"));
  std::string query = request.get_param_value("query");
  // No CPU series, and no hour holds an impossible value.
  if (query.find("node_cpu") != std::string::npos || query.find("> 100") != std::string::npos)
    return R"({"status":"success","data":{"resultType":"matrix","result":[]}})";
  std::string values;
  for (double t = start; t <= end + 1e-6; t += kStep) {
    double value = query.find(" < 5)") != std::string::npos            ? 0  // idle minutes
                   : query.rfind("count_over_time", 0) == 0             ? 60  // samples, fresh minutes
                   : query.find("FB_USED") != std::string::npos ? 40.0 * 1024 * 1024 * 1024
                                                                 : 50;
    values += fmt::format("{}[{:.0f},\"{}\"]", values.empty() ? "" : ",", t, value);
  }
  return fmt::format(R"({{"status":"success","data":{{"resultType":"matrix","result":[{{"metric":{{"gpu":"0","Hostname":"n1"{}}},"values":[{}]}}]}}}})",
                     extra_label, values);
}

double points_of(const httplib::Request& request) {
  return std::floor((std::stod(request.get_param_value("end")) - std::stod(request.get_param_value("start"))) / kStep) + 1;
}

class FaultServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&, int call)>;
  explicit FaultServer(Handler handler) : handler_(std::move(handler)) {
    server_.Get("/api/v1/query_range", [this](const httplib::Request& q, httplib::Response& r) { handler_(q, r, calls_++); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FaultServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return fmt::format("http://127.0.0.1:{}", port_); }
  int calls() const { return calls_; }

 private:
  Handler handler_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> calls_{0};
};

struct Run {
  std::optional<Error> error;
  PrometheusStats stats;
  TelemetryAggregator aggregator;
  double hours() const {
    double n = 0;
    for (const auto& [id, a] : aggregator.series())
      if (a.util_samples > 0) n += static_cast<double>(a.util_samples) / 60;
    return n;
  }
};

Run audit(const std::string& url, std::function<void(PrometheusQueryOptions&)> tweak = {}) {
  Run run;
  PrometheusQueryOptions o;
  o.url = url;
  o.range_s = 48 * 3600;
  o.end_s = kEnd;
  o.retries = 2;
  o.backoff_s = 0.01;
  o.timeout_s = 1;
  if (tweak) tweak(o);
  run.error = audit_from_prometheus(o, run.aggregator, run.stats);
  return run;
}

TEST(PrometheusFaults, HealthyServerGivesEveryHour) {
  FaultServer server([](const httplib::Request& q, httplib::Response& r, int) { r.set_content(good_answer(q), "application/json"); });
  auto run = audit(server.url());
  ASSERT_FALSE(run.error) << run.error->to_string();
  EXPECT_DOUBLE_EQ(run.hours(), 48);
  EXPECT_FALSE(run.stats.partial);
}

// A server that wants credentials: refused without them, the token or password never in the
// error; a bearer token and basic auth each sent as the header the server checks.
TEST(PrometheusFaults, CredentialsAreSentAndNeverShown) {
  auto guarded = [](std::string expected) {
    return [expected](const httplib::Request& q, httplib::Response& r, int) {
      if (q.get_header_value("Authorization") != expected) {
        r.status = 401;
        r.set_content("unauthorized", "text/plain");
        return;
      }
      r.set_content(good_answer(q), "application/json");
    };
  };
  FaultServer bearer(guarded("Bearer t0ken-secret"));
  auto refused = audit(bearer.url(), [](PrometheusQueryOptions& o) { o.credentials.bearer_token = "wrong-secret"; });
  ASSERT_TRUE(refused.error);
  EXPECT_NE(refused.error->to_string().find("401"), std::string::npos) << refused.error->to_string();
  EXPECT_EQ(refused.error->to_string().find("wrong-secret"), std::string::npos) << refused.error->to_string();
  auto with_token = audit(bearer.url(), [](PrometheusQueryOptions& o) { o.credentials.bearer_token = "t0ken-secret"; });
  ASSERT_FALSE(with_token.error) << with_token.error->to_string();
  EXPECT_DOUBLE_EQ(with_token.hours(), 48);
  FaultServer basic(guarded("Basic b3BzOnBhOnNz"));  // ops:pa:ss
  auto with_password = audit(basic.url(), [](PrometheusQueryOptions& o) {
    o.credentials.basic_user = "ops";
    o.credentials.basic_password = "pa:ss";
  });
  ASSERT_FALSE(with_password.error) << with_password.error->to_string();
  EXPECT_DOUBLE_EQ(with_password.hours(), 48);
}

TEST(PrometheusFaults, DownIsAClearErrorAfterBoundedRetries) {
  int port = 0;
  {
    FaultServer gone([](const httplib::Request&, httplib::Response&, int) {});
    port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
  }  // stopped: nothing listens there now
  auto run = audit(fmt::format("http://127.0.0.1:{}", port));
  ASSERT_TRUE(run.error);
  EXPECT_NE(run.error->message.find("cannot reach Prometheus"), std::string::npos) << run.error->message;
  EXPECT_NE(run.error->message.find("after 3 tries"), std::string::npos) << run.error->message;
  EXPECT_EQ(run.stats.queries, 3);
}

TEST(PrometheusFaults, SlowAnswersTimeOutAndAreRetried) {
  FaultServer server([](const httplib::Request& q, httplib::Response& r, int call) {
    if (call < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the 1 s timeout
    r.set_content(good_answer(q), "application/json");
  });
  auto run = audit(server.url());
  ASSERT_FALSE(run.error) << run.error->to_string();
  EXPECT_GE(run.stats.retries, 2);
  EXPECT_DOUBLE_EQ(run.hours(), 48);
  EXPECT_FALSE(run.stats.partial);
}

TEST(PrometheusFaults, ServerErrorsAreRetriedThenFlaggedPartial) {
  // 503 twice, then fine: retried, complete.
  FaultServer flaky([](const httplib::Request& q, httplib::Response& r, int call) {
    if (call < 2) {
      r.status = 503;
      r.set_content("overloaded", "text/plain");
      return;
    }
    r.set_content(good_answer(q), "application/json");
  });
  auto run = audit(flaky.url());
  ASSERT_FALSE(run.error) << run.error->to_string();
  EXPECT_EQ(run.stats.retries, 2);
  EXPECT_FALSE(run.stats.partial);
  // One chunk of the day before always fails: the rest arrives, flagged partial.
  FaultServer broken([](const httplib::Request& q, httplib::Response& r, int) {
    if (std::stod(q.get_param_value("start")) < kEnd - 24 * 3600) {
      r.status = 500;
      return;
    }
    r.set_content(good_answer(q), "application/json");
  });
  auto partial = audit(broken.url(), [](PrometheusQueryOptions& o) { o.max_points_per_query = 24; });
  ASSERT_FALSE(partial.error) << partial.error->to_string();
  EXPECT_TRUE(partial.stats.partial);
  EXPECT_GT(partial.stats.failed_chunks, 0);
  EXPECT_DOUBLE_EQ(partial.hours(), 24);
  EXPECT_NE(partial.stats.warnings.find("HTTP 500"), std::string::npos) << partial.stats.warnings;
}

TEST(PrometheusFaults, RefusedQueryShowsTheServersMessage) {
  FaultServer server([](const httplib::Request&, httplib::Response& r, int) {
    r.status = 400;
    r.set_content(R"({"status":"error","errorType":"bad_data","error":"1:22: parse error: unexpected <op:=>"})", "application/json");
  });
  auto run = audit(server.url(), [](PrometheusQueryOptions& o) { o.selector = "namespace=="; });
  ASSERT_TRUE(run.error);
  EXPECT_NE(run.error->message.find("refused the query (HTTP 400): 1:22: parse error"), std::string::npos) << run.error->message;
  EXPECT_EQ(run.stats.retries, 0);  // a bad query is not retried
}

TEST(PrometheusFaults, TruncatedBodiesAreRetried) {
  // Each request's first answer is cut in half (requests run concurrently: keyed, not by call order).
  std::mutex seen_mutex;
  std::set<std::string> seen;
  FaultServer server([&](const httplib::Request& q, httplib::Response& r, int) {
    std::string body = good_answer(q);
    std::lock_guard<std::mutex> lock(seen_mutex);
    bool first = seen.insert(q.get_param_value("query") + "@" + q.get_param_value("start")).second;
    r.set_content(first ? body.substr(0, body.size() / 2) : body, "application/json");
  });
  auto run = audit(server.url());
  ASSERT_FALSE(run.error) << run.error->to_string();
  EXPECT_GT(run.stats.retries, 0);
  EXPECT_DOUBLE_EQ(run.hours(), 48);
  EXPECT_FALSE(run.stats.partial);
}

TEST(PrometheusFaults, TooManyPointsSplitsTheRange) {
  // As Prometheus answers a range over its resolution limit (11,000 points; 10 here).
  FaultServer server([](const httplib::Request& q, httplib::Response& r, int) {
    if (points_of(q) > 10) {
      r.status = 400;
      r.set_content(R"j({"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 10 points per timeseries. Try decreasing the query resolution (?step=XX)"})j",
                    "application/json");
      return;
    }
    r.set_content(good_answer(q), "application/json");
  });
  auto run = audit(server.url());
  ASSERT_FALSE(run.error) << run.error->to_string();
  EXPECT_GT(run.stats.splits, 0);
  EXPECT_DOUBLE_EQ(run.hours(), 48);
  EXPECT_FALSE(run.stats.partial);
}

TEST(PrometheusFaults, AnswersOverTheSizeLimitAreSplit) {
  std::string padding(3000, 'x');  // 48 points exceed 4 KiB, 24 do not
  FaultServer server([&](const httplib::Request& q, httplib::Response& r, int) {
    r.set_content(good_answer(q, ",\"pad\":\"" + padding + "\""), "application/json");
  });
  auto run = audit(server.url(), [](PrometheusQueryOptions& o) { o.max_response_bytes = 4096; });
  ASSERT_FALSE(run.error) << run.error->to_string();
  EXPECT_GT(run.stats.splits, 0);
  EXPECT_DOUBLE_EQ(run.hours(), 48);
}

TEST(PrometheusFaults, WarningsAndMalformedPointsAreReported) {
  FaultServer server([](const httplib::Request& q, httplib::Response& r, int) {
    std::string body = good_answer(q);
    body.pop_back();  // the closing brace: add warnings, as Thanos does when a store is down
    body += R"(,"warnings":["store eu-1 unavailable: partial response"]})";
    // One point whose value is a number, not a string: malformed.
    size_t at = body.find("\"values\":[");
    body.insert(at + 10, "[1714500000,5],");
    r.set_content(body, "application/json");
  });
  auto run = audit(server.url());
  ASSERT_FALSE(run.error) << run.error->to_string();
  EXPECT_TRUE(run.stats.partial);
  EXPECT_NE(run.stats.warnings.find("store eu-1 unavailable"), std::string::npos);
  EXPECT_GT(run.stats.malformed, 0);
  EXPECT_DOUBLE_EQ(run.hours(), 48);
}

// The command line: a partial answer is the report's first line (with the hours missing and
// their share), in Markdown its title, and exit code 4 unless --allow-partial.
TEST(PrometheusFaults, PartialAnswersAreSaidFirstAndExitFour) {
  const double now = static_cast<double>(std::time(nullptr));
  FaultServer broken([now](const httplib::Request& q, httplib::Response& r, int) {
    if (std::stod(q.get_param_value("start")) < std::ceil(now / kStep) * kStep - 24 * kStep) {  // the first of two days
      r.status = 500;
      return;
    }
    r.set_content(good_answer(q), "application/json");
  });
  auto out = std::filesystem::temp_directory_path() / fmt::format("gpuwise_partial_{}", ::getpid());
  auto audit_cli = [&](const std::string& extra) {
    std::string command = fmt::format("'{}' audit --prometheus {} --range 48h --max-points-per-query 24 --prometheus-retries 0 "
                                      "--accelerator A100-80GB --min-coverage-hours 0 -q {} >'{}' 2>/dev/null",
                                      GPUWISE_BINARY, broken.url(), extra, out.string());
    int status = std::system(command.c_str());
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return std::pair{WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
  };
  auto [code, text] = audit_cli("");
  EXPECT_EQ(code, 4);
  EXPECT_EQ(text.rfind("PARTIAL: Prometheus did not answer for ", 0), 0u) << text;
  EXPECT_NE(text.find("50.0% of the GPU-hours asked for are missing"), std::string::npos) << text;
  auto [allowed, allowed_text] = audit_cli("--allow-partial");
  EXPECT_EQ(allowed, 0);
  EXPECT_EQ(allowed_text.rfind("PARTIAL: ", 0), 0u);
  auto [md_code, markdown] = audit_cli("--format md");
  EXPECT_EQ(md_code, 4);
  EXPECT_EQ(markdown.rfind("# PARTIAL DATA: ", 0), 0u) << markdown.substr(0, 200);
  auto [json_code, json_text] = audit_cli("--format json");
  EXPECT_EQ(json_code, 4);
  auto json = nlohmann::json::parse(json_text);
  EXPECT_TRUE(json["summary"]["partial"].get<bool>());
  EXPECT_NEAR(json["summary"]["partial_missing_fraction"].get<double>(), 0.5, 1e-9);
  EXPECT_EQ(json["summary"]["partial_ranges"].size(), 1u);
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace gw
