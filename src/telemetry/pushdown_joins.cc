#include "telemetry/pushdown_joins.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gw::pushdown {

namespace {

std::pair<std::string, std::string> namespace_and_pod(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::pair<std::string, std::string> out;
  for (const auto& [key, value] : labels) {
    if (key == "namespace") out.first = value;
    if (key == "pod") out.second = value;
  }
  return out;
}

bool has_samples(const SeriesHours& series, const WindowHours& window) {
  for (size_t i = 0; i < window.hours; ++i)
    if (const HourValues* h = series.run.find(window.hour(i)); h && (*h)[kCount] >= 1) return true;
  return false;
}

}  // namespace

std::optional<size_t> WindowHours::index_of(double evaluation_s) const {
  double index = std::round((evaluation_s - 3600 - start_s) / 3600);
  if (index < 0 || index >= static_cast<double>(hours)) return std::nullopt;  // not an hour asked for
  return static_cast<size_t>(index);
}

void store_host_answer(PushDownStore& store, Metric metric, const QueryResult& result, const WindowHours& window) {
  for (const auto& series : result.series) {
    auto instance = std::find_if(series.metric.begin(), series.metric.end(), [](const auto& kv) { return kv.first == "instance"; });
    if (instance == series.metric.end()) continue;
    Labels labels{{"hostname", instance_host(instance->second)}};
    HostHours& host = store.hosts["hostname=" + labels[0].second];
    host.labels = labels;
    for (const auto& [t, value] : series.points) {
      auto i = window.index_of(t);
      if (!i) continue;
      HostHour& h = host.run.at(window.hour(*i));
      (metric == Metric::cpu_util_pct ? h.cpu_pct : metric == Metric::cpu_iowait_pct ? h.iowait_pct : h.cpus) = value;
    }
  }
}

void add_host_hours(const PushDownStore& store, const WindowHours& window, TelemetryAggregator& aggregator) {
  for (const auto& [id, host] : store.hosts)
    for (auto [metric, field] : {std::pair{Metric::cpu_util_pct, &HostHour::cpu_pct}, std::pair{Metric::cpu_iowait_pct, &HostHour::iowait_pct},
                                 std::pair{Metric::host_cpus, &HostHour::cpus}})
      for (size_t i = 0; i < window.hours; ++i)
        if (const HostHour* h = host.run.find(window.hour(i)); h && !std::isnan(h->*field))
          aggregator.add_mean(id, host.labels, metric, h->*field, 1);
}

void store_served_answer(PushDownStore& store, const QueryResult& result, const WindowHours& window) {
  for (const auto& series : result.series) {
    auto key = namespace_and_pod(series.metric);
    if (key.second.empty()) continue;  // not a pod's: nothing to join it to
    auto& run = store.served[key];
    for (const auto& [t, value] : series.points)
      if (auto i = window.index_of(t); i && value >= 0) run.at(window.hour(*i)).per_s = value;
  }
}

void add_served_requests(const PushDownStore& store, const WindowHours& window, TelemetryAggregator& aggregator) {
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<const std::string*, const Labels*>>> gpus;  // by (namespace, pod)
  for (const auto& [id, series] : store.series) {
    auto key = namespace_and_pod(series.labels);
    if (!key.second.empty() && has_samples(series, window)) gpus[key].emplace_back(&id, &series.labels);
  }
  for (const auto& [key, run] : store.served) {
    auto found = gpus.find(key);
    if (found == gpus.end()) continue;
    double sum = 0, hours = 0;
    for (size_t i = 0; i < window.hours; ++i)
      if (const ServedHour* h = run.find(window.hour(i)); h && !std::isnan(h->per_s)) {
        sum += h->per_s;
        ++hours;
      }
    if (hours == 0) continue;
    const double per_gpu = sum / hours / static_cast<double>(found->second.size());
    for (const auto& [id, labels] : found->second) aggregator.add_mean(*id, *labels, Metric::requests_per_s, per_gpu, hours);
  }
}

}  // namespace gw::pushdown
