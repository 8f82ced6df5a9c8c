#include "telemetry/prometheus_client.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <httplib.h>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/numbers.h"

namespace gw {

std::optional<double> parse_duration_s(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  double unit = 1;
  char last = text.back();
  if (last == 'd') unit = 86400;
  else if (last == 'h') unit = 3600;
  else if (last == 'm') unit = 60;
  else if (last == 's') unit = 1;
  if (last == 'd' || last == 'h' || last == 'm' || last == 's') text.remove_suffix(1);
  auto value = parse_finite_double(text);
  if (!value || *value <= 0) return std::nullopt;
  return *value * unit;
}

namespace {

struct Url {
  std::string scheme_host_port;
  std::string base_path;
};

std::optional<Url> split_url(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return std::nullopt;
  size_t path = url.find('/', scheme + 3);
  Url u;
  u.scheme_host_port = path == std::string::npos ? url : url.substr(0, path);
  u.base_path = path == std::string::npos ? "" : url.substr(path);
  while (!u.base_path.empty() && u.base_path.back() == '/') u.base_path.pop_back();
  return u;
}

// One range query, retried with exponential backoff on connection errors, timeouts and 5xx.
Result<nlohmann::json> range_query(httplib::Client& client, const Url& url, const std::string& query, double start,
                                   double end, double step, const PrometheusQueryOptions& o, PrometheusStats& stats) {
  httplib::Params params{{"query", query}, {"start", fmt::format("{:.3f}", start)}, {"end", fmt::format("{:.3f}", end)},
                         {"step", fmt::format("{:.0f}", step)}};
  std::string last_error;
  for (int attempt = 0; attempt <= o.retries; ++attempt) {
    if (attempt > 0) {
      ++stats.retries;
      std::this_thread::sleep_for(std::chrono::milliseconds(200 * (1 << (attempt - 1))));
    }
    ++stats.queries;
    auto response = client.Post((url.base_path + "/api/v1/query_range").c_str(), params);
    if (!response) {
      last_error = fmt::format("cannot reach Prometheus ({})", httplib::to_string(response.error()));
      continue;
    }
    if (response->status >= 500) {
      last_error = fmt::format("HTTP {} from Prometheus", response->status);
      continue;
    }
    nlohmann::json body;
    try {
      body = nlohmann::json::parse(response->body);
    } catch (const std::exception&) {
      last_error = fmt::format("HTTP {}: the response is not JSON (truncated?)", response->status);
      continue;
    }
    if (response->status >= 400 || body.value("status", "") != "success")
      return Error{o.url, 0, "query", fmt::format("Prometheus refused the query (HTTP {}): {}", response->status,
                                                  body.value("error", response->body.substr(0, 200)))};
    return body;
  }
  return Error{o.url, 0, "", last_error + fmt::format(" after {} tries", o.retries + 1)};
}

std::string series_id(const nlohmann::json& metric, Labels& labels) {
  labels.clear();
  for (const auto& [k, v] : metric.items()) {
    if (k == "__name__" || !v.is_string()) continue;
    std::string key = k == "Hostname" ? "hostname" : k == "UUID" ? "uuid" : k == "modelName" ? "model" : k;
    if (key == "gpu" || key == "uuid" || key == "hostname" || key == "pod" || key == "namespace" || key == "container" ||
        key == "model" || key == "GPU_I_ID" || key == "job" || key == "team")
      labels.emplace_back(key, v.get<std::string>());
  }
  std::sort(labels.begin(), labels.end());
  std::string id;
  for (const auto& [k, v] : labels) id += (id.empty() ? "" : ",") + k + "=" + v;
  return id;
}

}  // namespace

std::optional<Error> audit_from_prometheus(const PrometheusQueryOptions& o, TelemetryAggregator& aggregator,
                                           PrometheusStats& stats) {
  auto url = split_url(o.url);
  if (!url) return Error{o.url, 0, "--prometheus", "expected a URL like http://localhost:9090"};
  httplib::Client client(url->scheme_host_port);
  client.set_connection_timeout(static_cast<time_t>(std::ceil(std::min(o.timeout_s, 10.0))));
  client.set_read_timeout(static_cast<time_t>(std::ceil(o.timeout_s)));
  double end = o.end_s > 0 ? o.end_s : static_cast<double>(std::time(nullptr));
  // Hour boundaries, so server-side windows match the hours of the week.
  end = std::floor(end / 3600) * 3600;
  double start = end - std::ceil(o.range_s / 3600) * 3600;
  const double step = 3600;
  std::string sel = o.selector.empty() ? "" : "{" + o.selector + "}";
  std::string util = "DCGM_FI_DEV_GPU_UTIL" + sel, memory = "DCGM_FI_DEV_FB_USED" + sel;
  struct Query {
    std::string name, promql;
  };
  // Evaluated at the end of each hour over the hour before it.
  const Query queries[] = {
      {"mean", "avg_over_time(" + util + "[1h])"},
      {"count", "count_over_time(" + util + "[1h])"},
      // The share of the hour below 5%, sampled each minute (each raw sample held until the next).
      {"idle_share", "avg_over_time((" + util + " < bool 5)[1h:1m])"},
      {"first", "min_over_time(timestamp(" + util + ")[1h:1m])"},
      {"last", "max_over_time(timestamp(" + util + ")[1h:1m])"},
      {"mem_max", "max_over_time(" + memory + "[1h]) * 1048576"},
      {"mem_p95", "quantile_over_time(0.95, " + memory + "[1h]) * 1048576"},
  };
  // series -> hour -> name -> value
  std::map<std::string, std::pair<Labels, std::map<double, std::map<std::string, double>>>> data;
  const double chunk = step * o.max_points_per_query;
  for (const auto& q : queries) {
    for (double from = start + step; from <= end; from += chunk) {
      double to = std::min(end, from + chunk - step);
      auto body = range_query(client, *url, q.promql, from, to, step, o, stats);
      if (!body.ok()) {
        // A refused query, or a server that never answered the first query: stop here.
        if (body.error().field == "query" || (stats.queries <= o.retries + 1 && body.error().message.rfind("cannot reach", 0) == 0))
          return body.error();
        stats.partial = true;
        stats.warnings += body.error().message + "; ";
        continue;
      }
      for (const auto& series : body.value()["data"]["result"]) {
        Labels labels;
        std::string id = series_id(series["metric"], labels);
        auto& entry = data[id];
        entry.first = labels;
        for (const auto& point : series["values"]) {
          auto value = parse_finite_double(point[1].get<std::string>());
          if (value) entry.second[point[0].get<double>() - step][q.name] = *value;
        }
      }
    }
  }
  // Host CPU from node_exporter, one series per instance, joined to the GPUs by host name.
  const Query host_queries[] = {
      // A counter's rate over the hour is its mean rate in that hour.
      {"cpu", "100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode=\"idle\"}[1h])))"},
      {"iowait", "100 * avg by (instance) (rate(node_cpu_seconds_total{mode=\"iowait\"}[1h]))"},
      {"cpus", "count by (instance) (node_cpu_seconds_total{mode=\"idle\"})"},
  };
  for (const auto& q : host_queries) {
    if (data.empty()) break;
    for (double from = start + step; from <= end; from += chunk) {
      double to = std::min(end, from + chunk - step);
      auto body = range_query(client, *url, q.promql, from, to, step, o, stats);
      if (!body.ok()) {
        stats.partial = true;
        stats.warnings += body.error().message + "; ";
        continue;
      }
      for (const auto& series : body.value()["data"]["result"]) {
        std::string instance = series["metric"].value("instance", "");
        if (instance.empty()) continue;
        Labels labels{{"hostname", instance_host(instance)}};
        std::string id = "hostname=" + labels[0].second;
        Metric metric = q.name == "cpu" ? Metric::cpu_util_pct : q.name == "iowait" ? Metric::cpu_iowait_pct : Metric::host_cpus;
        for (const auto& point : series["values"]) {
          auto value = parse_finite_double(point[1].get<std::string>());
          if (value) aggregator.add_mean(id, labels, metric, *value, 1);
        }
      }
    }
  }
  if (data.empty() && stats.partial) return Error{o.url, 0, "", stats.warnings.substr(0, stats.warnings.find(';'))};
  if (data.empty())
    return Error{o.url, 0, "", "Prometheus has no DCGM_FI_DEV_GPU_UTIL or DCGM_FI_DEV_FB_USED series in the range"};
  for (const auto& [id, entry] : data) {
    for (const auto& hour_values : entry.second) {
      const double hour = hour_values.first;
      const auto& values = hour_values.second;  // a named variable: lambdas may not capture bindings before clang 16
      TelemetryAggregator::HourSummary h;
      h.hour_start_s = hour;
      auto get = [&](const char* key) -> std::optional<double> {
        auto it = values.find(key);
        return it == values.end() ? std::nullopt : std::optional<double>(it->second);
      };
      h.samples = get("count").value_or(0);
      h.util_mean = get("mean").value_or(0);
      h.idle_samples = get("idle_share").value_or(0) * h.samples;
      h.first_s = get("first").value_or(hour);
      h.last_s = get("last").value_or(hour + step);
      h.memory_max = get("mem_max");
      h.memory_p95 = get("mem_p95");
      aggregator.add_hour(id, entry.first, h);
    }
  }
  return std::nullopt;
}

}  // namespace gw
