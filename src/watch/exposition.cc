#include "watch/exposition.h"

#include <cctype>
#include <map>

#include <fmt/format.h>

namespace gw {

namespace {

constexpr double kHoursPerMonth = 730;

using LabelSet = std::vector<std::pair<std::string, std::string>>;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string render_labels(const LabelSet& labels) {
  if (labels.empty()) return {};
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i)
    out += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first, escape_label_value(labels[i].second));
  return out + "}";
}

// Numbers as Prometheus reads them: NaN and infinities spelt its way, integers without a point.
std::string number(double v) {
  if (v != v) return "NaN";
  if (v > 1e308) return "+Inf";
  if (v < -1e308) return "-Inf";
  return fmt::format("{}", v);
}

class Families {
 public:
  void family(const char* name, const char* type, const char* help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    name_ = name;
  }
  void sample(const LabelSet& labels, double value) { out_ += fmt::format("{}{} {}\n", name_, render_labels(labels), number(value)); }
  // A sample whose label text was rendered once for all the families it appears in.
  void sample_rendered(const std::string& labels, double value) { out_ += fmt::format("{}{} {}\n", name_, labels, number(value)); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
  std::string name_;
};

// An hour of the week (0: Monday 00:00 UTC) as the labels weekday ("1-Mon") and hour ("00"), after `labels`.
LabelSet hour_of_week(size_t h, LabelSet labels) {
  static const char* const kDays[] = {"1-Mon", "2-Tue", "3-Wed", "4-Thu", "5-Fri", "6-Sat", "7-Sun"};
  labels.insert(labels.begin(), {{"weekday", kDays[h / 24]}, {"hour", fmt::format("{:02d}", h % 24)}});
  return labels;
}

LabelSet with(LabelSet labels, std::string key, std::string value) {
  labels.emplace_back(std::move(key), std::move(value));
  return labels;
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";  // not special to the format, but a reader splitting lines on it would break
    } else {
      out += c;
    }
  }
  return out;
}

LabelSet gpu_labels(const SeriesReport& series) {
  LabelSet labels = {{"gpu", series.id}};
  // A label kept under its Kubernetes/Prometheus name, from the first of its spellings present.
  const std::pair<const char*, std::vector<const char*>> wanted[] = {
      {"hostname", {"hostname", "host", "node", "kubernetes_node"}},
      {"namespace", {"namespace", "exported_namespace"}},
      {"pod", {"pod", "exported_pod"}},
      {"container", {"container", "exported_container"}},
      {"team", {"team", "label_team"}},
      {"instance_type", {"instance_type", "node_kubernetes_io_instance_type"}},
  };
  for (const auto& [name, spellings] : wanted) {
    bool found = false;
    for (const char* spelling : spellings) {
      for (const auto& [key, value] : series.labels)
        if (lower(key) == spelling && !value.empty()) {
          labels.emplace_back(name, value);
          found = true;
          break;
        }
      if (found) break;
    }
  }
  if (!series.accelerator.empty()) labels.emplace_back("accelerator", series.accelerator);
  return labels;
}

std::string fleet_exposition(const AuditRun& run, const std::string& window, const std::string& group_by) {
  return fleet_exposition({{window, &run, true}}, group_by);
}

std::string fleet_exposition(const std::vector<WindowAudit>& audits, const std::string& group_by) {
  Families f;
  // Each exported GPU's labels, rendered once per window: every per-GPU family repeats them.
  std::vector<std::vector<std::string>> labels(audits.size());
  for (size_t k = 0; k < audits.size(); ++k)
    if (audits[k].per_gpu)
      for (const auto& s : audits[k].run->report.series) labels[k].push_back(render_labels(with(gpu_labels(s), "window", audits[k].window)));
  auto each_gpu = [&](bool (*has)(const SeriesReport&), double (*value)(const SeriesReport&)) {
    for (size_t k = 0; k < audits.size(); ++k) {
      if (!audits[k].per_gpu) continue;
      const auto& series = audits[k].run->report.series;
      for (size_t i = 0; i < series.size(); ++i)
        if (has(series[i])) f.sample_rendered(labels[k][i], value(series[i]));
    }
  };
  auto always = [](const SeriesReport&) { return true; };
  auto measured = [](const SeriesReport& s) { return s.util_measured; };
  f.family("gpuwise_gpu_cost_usd_per_hour", "gauge", "What the GPU costs per hour, averaged over a 730-hour month (a scheduled job's share of it)");
  each_gpu(always, [](const SeriesReport& s) { return s.usd_per_month / kHoursPerMonth; });
  f.family("gpuwise_gpu_duty_cycle_ratio", "gauge", "Mean GPU duty cycle over the window (0-1)");
  each_gpu(measured, [](const SeriesReport& s) { return s.mean_util_pct / 100; });
  f.family("gpuwise_gpu_idle_ratio", "gauge", "Share of the window's samples with the GPU idle (duty cycle under 5%)");
  each_gpu(measured, [](const SeriesReport& s) { return s.idle_fraction; });
  f.family("gpuwise_gpu_idle_cost_usd_per_hour", "gauge", "Dollars per hour paid for the GPU while idle (cost per hour x idle share)");
  each_gpu(measured, [](const SeriesReport& s) { return s.usd_per_month / kHoursPerMonth * s.idle_fraction; });
  f.family("gpuwise_gpu_memory_peak_bytes", "gauge", "Peak GPU memory used over the window");
  each_gpu(always, [](const SeriesReport& s) { return s.peak_memory_bytes; });
  f.family("gpuwise_gpu_observed_seconds", "gauge", "Seconds of the window the GPU's samples cover (gaps excluded)");
  each_gpu(always, [](const SeriesReport& s) { return s.coverage_hours * 3600; });
  f.family("gpuwise_gpu_cost_per_1k_inferences_usd", "gauge", "Dollars per 1,000 requests served, where request metrics exist");
  each_gpu([](const SeriesReport& s) { return s.usd_per_1k_inferences.has_value(); },
           [](const SeriesReport& s) { return *s.usd_per_1k_inferences; });
  f.family("gpuwise_finding_recoverable_usd_per_month", "gauge", "Dollars a month the finding's move recovers");
  for (const auto& audit : audits) {
    if (!audit.per_gpu) continue;  // a finding is a GPU's
    for (const auto& x : audit.run->report.findings)
      if (x.kind != "healthy" && x.kind != "insufficient_data")
        f.sample({{"kind", x.kind}, {"scope", x.scope}, {"confidence", x.confidence}, {"window", audit.window}}, x.waste_usd_per_month);
  }
  f.family("gpuwise_findings", "gauge", "Findings of each kind");
  for (const auto& audit : audits) {
    std::map<std::string, int> kinds;
    for (const auto& x : audit.run->report.findings) ++kinds[x.kind];
    for (const auto& [kind, n] : kinds) f.sample({{"kind", kind}, {"window", audit.window}}, n);
  }
  if (!group_by.empty()) {
    f.family("gpuwise_group_cost_usd_per_hour", "gauge", "What each group's GPUs cost per hour (the --group-by label)");
    for (const auto& audit : audits)
      for (const auto& a : audit.run->report.attribution)
        f.sample({{"group_by", group_by}, {"group", a.group}, {"window", audit.window}}, a.usd_per_month / kHoursPerMonth);
    f.family("gpuwise_group_duty_cycle_ratio", "gauge", "Mean duty cycle of each group's GPUs");
    for (const auto& audit : audits)
      for (const auto& a : audit.run->report.attribution)
        f.sample({{"group_by", group_by}, {"group", a.group}, {"window", audit.window}}, a.mean_util_pct / 100);
  }
  // One sample per window of a fleet figure.
  auto each_window = [&](const char* name, const char* help, double (*value)(const AuditReport&)) {
    f.family(name, "gauge", help);
    for (const auto& audit : audits) f.sample({{"window", audit.window}}, value(audit.run->report));
  };
  each_window("gpuwise_fleet_cost_usd_per_hour", "What the fleet's GPUs cost per hour",
              [](const AuditReport& r) { return r.fleet_usd_per_month / kHoursPerMonth; });
  each_window("gpuwise_fleet_recoverable_usd_per_month", "Dollars a month the findings' moves recover, all together",
              [](const AuditReport& r) { return r.recoverable_usd_per_month; });
  each_window("gpuwise_fleet_duty_cycle_ratio", "Mean duty cycle over the fleet's GPUs", [](const AuditReport& r) { return r.mean_util_pct / 100; });
  each_window("gpuwise_fleet_idle_ratio", "Share of the fleet's samples with the GPU idle", [](const AuditReport& r) { return r.idle_sample_fraction; });
  // The fleet's duty cycle by hour of the week (UTC), over the GPUs with samples in that hour.
  f.family("gpuwise_fleet_duty_cycle_by_hour_of_week_ratio", "gauge", "Mean GPU duty cycle in each hour of the week (UTC, Monday 00 first)");
  for (const auto& audit : audits) {
    const AuditReport& r = audit.run->report;
    for (size_t h = 0; h < r.hour_of_week_util_pct.size(); ++h)
      if (r.hour_of_week_util_pct[h] >= 0) f.sample(hour_of_week(h, {{"window", audit.window}}), r.hour_of_week_util_pct[h] / 100);
  }
  // When GPUs sit idle: the share of samples idle and the dollars per hour idle GPUs cost, by
  // hour of the week, over the fleet and (with --group-by) each group.
  f.family("gpuwise_fleet_idle_by_hour_of_week_ratio", "gauge",
           "Share of the fleet's duty-cycle samples idle (under 5%) in each hour of the week (UTC, Monday 00 first)");
  for (const auto& audit : audits) {
    const AuditReport& r = audit.run->report;
    for (size_t h = 0; h < r.hour_of_week_idle_ratio.size(); ++h)
      if (r.hour_of_week_idle_ratio[h] >= 0) f.sample(hour_of_week(h, {{"window", audit.window}}), r.hour_of_week_idle_ratio[h]);
  }
  f.family("gpuwise_fleet_idle_cost_by_hour_of_week_usd_per_hour", "gauge",
           "Dollars per hour the fleet's idle GPUs cost in each hour of the week (hourly price x idle share then)");
  for (const auto& audit : audits) {
    const AuditReport& r = audit.run->report;
    for (size_t h = 0; h < r.hour_of_week_idle_usd_per_hour.size() && h < r.hour_of_week_idle_ratio.size(); ++h)
      if (r.hour_of_week_idle_ratio[h] >= 0) f.sample(hour_of_week(h, {{"window", audit.window}}), r.hour_of_week_idle_usd_per_hour[h]);
  }
  if (!group_by.empty()) {
    f.family("gpuwise_group_idle_by_hour_of_week_ratio", "gauge", "Share of each group's duty-cycle samples idle in each hour of the week");
    for (const auto& audit : audits)
      for (const auto& a : audit.run->report.attribution)
        for (size_t h = 0; h < a.hour_of_week_idle_ratio.size(); ++h)
          if (a.hour_of_week_idle_ratio[h] >= 0)
            f.sample(hour_of_week(h, {{"group_by", group_by}, {"group", a.group}, {"window", audit.window}}), a.hour_of_week_idle_ratio[h]);
  }
  each_window("gpuwise_fleet_gpus", "GPU series seen in the window", [](const AuditReport& r) { return static_cast<double>(r.gpus); });
  bool any_requests = false;
  for (const auto& audit : audits) any_requests = any_requests || audit.run->report.usd_per_1k_inferences.has_value();
  if (any_requests) {
    f.family("gpuwise_fleet_cost_per_1k_inferences_usd", "gauge", "Dollars per 1,000 requests over the fleet");
    for (const auto& audit : audits)
      if (audit.run->report.usd_per_1k_inferences) f.sample({{"window", audit.window}}, *audit.run->report.usd_per_1k_inferences);
  }
  return f.take();
}

std::string health_exposition(const WatchHealth& h, size_t series) {
  Families f;
  f.family("gpuwise_watch_last_success_timestamp_seconds", "gauge", "When the last refresh succeeded (0: none yet)");
  f.sample({}, h.last_success_s);
  f.family("gpuwise_watch_data_age_seconds", "gauge", "Age of the values served: seconds since the last successful refresh");
  f.sample({}, h.last_success_s > 0 ? h.now_s - h.last_success_s : -1);
  f.family("gpuwise_watch_refresh_duration_seconds", "gauge", "How long the last successful refresh took");
  f.sample({}, h.last_refresh_seconds);
  f.family("gpuwise_watch_refreshes_total", "counter", "Refreshes by result");
  f.sample({{"result", "success"}}, static_cast<double>(h.refreshes_ok));
  f.sample({{"result", "failure"}}, static_cast<double>(h.refreshes_failed));
  f.family("gpuwise_watch_partial_answer", "gauge", "1 when the last answer from Prometheus was partial");
  f.sample({}, h.partial ? 1 : 0);
  f.family("gpuwise_watch_missing_ratio", "gauge", "Share of the GPU-hours asked for that the last answer lacked");
  f.sample({}, h.missing_fraction);
  f.family("gpuwise_watch_series", "gauge", "GPU series kept from the last refresh");
  f.sample({}, static_cast<double>(series));
  f.family("gpuwise_watch_hourly_answers_kept", "gauge", "Series-hours of Prometheus' answers kept between refreshes (not asked again)");
  f.sample({}, static_cast<double>(h.hours_kept));
  f.family("gpuwise_watch_asked_span_seconds", "gauge",
           "Span of the windows the last refresh asked Prometheus for: the hours new or not settled since the refresh before");
  f.sample({}, 3600.0 * h.hours_asked);
  f.family("gpuwise_watch_window_seconds", "gauge", "The primary window each refresh audits (per-GPU figures, findings, page)");
  f.sample({}, h.window_s);
  f.family("gpuwise_watch_prometheus_queries_total", "counter", "Queries sent to Prometheus");
  f.sample({}, static_cast<double>(h.prometheus_queries));
  f.family("gpuwise_watch_prometheus_retries_total", "counter", "Queries to Prometheus retried");
  f.sample({}, static_cast<double>(h.prometheus_retries));
  return f.take();
}

std::string watch_exposition(const AuditRun* run, const std::string& window, const std::string& group_by, const WatchHealth& health) {
  return (run ? fleet_exposition(*run, window, group_by) : std::string()) + health_exposition(health, run ? run->report.series.size() : 0);
}

}  // namespace gw
