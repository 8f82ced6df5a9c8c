// The Prometheus text format: dcgm-exporter and node_exporter scrapes, OpenMetrics.
#include "telemetry/format_readers.h"
#include "telemetry/reader_support.h"

namespace gw::reader_support {

std::vector<std::pair<std::string, std::string>> parse_label_block(std::string_view block) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos < block.size()) {
    size_t eq = block.find('=', pos);
    if (eq == std::string_view::npos) break;
    std::string key(trim(block.substr(pos, eq - pos)));
    size_t q = block.find('"', eq);
    if (q == std::string_view::npos) break;
    std::string value;
    size_t i = q + 1;
    for (; i < block.size() && block[i] != '"'; ++i) {
      if (block[i] == '\\' && i + 1 < block.size()) {
        ++i;
        value += block[i] == 'n' ? '\n' : block[i];
      } else {
        value += block[i];
      }
    }
    if (i >= block.size()) break;  // unterminated value
    out.emplace_back(std::move(key), std::move(value));
    pos = i + 1;
    while (pos < block.size() && (block[pos] == ',' || block[pos] == ' ')) ++pos;
  }
  return out;
}

namespace {

// Host CPU from node_exporter: per-CPU idle and iowait counters become rates between
// consecutive samples (as PromQL's rate would), emitted as the host's busy and iowait
// percentages; the recording rule instance:node_cpu_utilisation:rate5m passes through.
class HostCpuRates {
 public:
  void add(std::string_view block, Metric metric, double time_s, double value, const SampleHandler& emit, ReadStats& stats) {
    Series& series = resolve(block, metric);
    switch (series.kind) {
      case Kind::no_host: stats.skip("host CPU sample without an instance or hostname label"); return;
      case Kind::other_mode: stats.skip("node_cpu_seconds_total in a mode other than idle or iowait"); return;
      case Kind::rule:  // the recording rule, already a ratio x 100
        emit({series.id, series.labels, metric, time_s, std::clamp(value, 0.0, 100.0)});
        ++stats.samples;
        return;
      case Kind::idle:
      case Kind::iowait: break;
    }
    series.host->last_s = std::max(series.host->last_s, time_s);
    Counter& c = series.counter;
    if (c.time_s >= 0) {
      double dt = time_s - c.time_s;
      if (dt <= 0) {
        stats.skip("counter sample not after the previous one");
        return;
      }
      if (value < c.value) {
        stats.skip("counter reset");
      } else {
        double rate = std::clamp((value - c.value) / dt, 0.0, 1.0);
        bool idle = series.kind == Kind::idle;
        emit({series.id, series.labels, idle ? Metric::cpu_util_pct : Metric::cpu_iowait_pct, time_s,
              idle ? 100 * (1 - rate) : 100 * rate});
        ++stats.samples;
      }
    }
    c.time_s = time_s;
    c.value = value;
  }
  // The number of CPUs of each host, once its samples are all in.
  void finish(const SampleHandler& emit, ReadStats& stats) {
    for (const auto& [host, h] : hosts_) {
      emit({h.id, h.labels, Metric::host_cpus, h.last_s, static_cast<double>(h.cpus.size())});
      ++stats.samples;
    }
  }

 private:
  enum class Kind { no_host, other_mode, rule, idle, iowait };
  struct Counter {
    double time_s = -1, value = 0;
  };
  struct Host {
    const std::string* id = nullptr;
    const Labels* labels = nullptr;
    double last_s = 0;
    std::set<std::string> cpus;
  };
  struct Series {
    Kind kind = Kind::no_host;
    const std::string* id = nullptr;
    const Labels* labels = nullptr;
    Host* host = nullptr;  // std::map nodes stay put
    Counter counter;
  };

  // A label block is parsed the first time it is seen; its counter lives with it.
  Series& resolve(std::string_view block, Metric metric) {
    auto& by_block = metric == Metric::cpu_util_pct ? rules_ : counters_;
    if (auto it = by_block.find(block); it != by_block.end()) return it->second;
    if (by_block.size() >= input_limits().max_series)  // each block is a node_exporter series
      throw SeriesLimitExceeded(fmt::format("more than {} telemetry series (raise the limit with --max-series)",
                                            input_limits().max_series));
    std::string host, cpu, mode;
    for (auto& [key, label] : parse_label_block(block)) {
      if (key == "instance" && host.empty()) host = instance_host(label);
      else if (key == "hostname" || key == "Hostname" || key == "nodename") host = label;
      else if (key == "cpu") cpu = label;
      else if (key == "mode") mode = label;
    }
    Series series;
    if (host.empty()) {
      series.kind = Kind::no_host;
    } else {
      std::tie(series.id, series.labels) = table().intern(Labels{{"hostname", host}});
      if (metric == Metric::cpu_util_pct) {
        series.kind = Kind::rule;
      } else if (mode != "idle" && mode != "iowait") {
        series.kind = Kind::other_mode;
      } else {
        series.kind = mode == "idle" ? Kind::idle : Kind::iowait;
        Host& h = hosts_[host];
        h.id = series.id;
        h.labels = series.labels;
        h.cpus.insert(cpu);
        series.host = &h;
      }
    }
    return by_block.emplace(std::string(block), series).first->second;
  }

  std::map<std::string, Host> hosts_;
  std::unordered_map<std::string, Series, ViewHash, std::equal_to<>> counters_, rules_;
};

}  // namespace

// Prometheus text: name{labels} value [timestamp_ms]; "# timestamp: <s>" lines set the time of
// untimestamped samples (scrapes saved one after another).
std::optional<Error> read_dcgm(std::ifstream& in, const std::string& path, double seconds_per_unit, const SampleHandler& emit,
                               ReadStats& stats) {
  LineReader lines(in);
  std::string_view view;
  int number = 0;
  std::optional<double> scrape_time;
  bool any_metric = false;
  // Series by the raw label block, so labels are parsed once per series.
  std::unordered_map<std::string, std::pair<const std::string*, const Labels*>, ViewHash, std::equal_to<>> known;
  HostCpuRates hosts;
  while (lines.next(view)) {
    ++number;
    ++stats.lines;
    view = trim(view);
    if (view.empty()) continue;
    if (view.front() == '#') {
      if (view.rfind("# timestamp:", 0) == 0) scrape_time = parse_finite_double(view.substr(12));
      continue;
    }
    size_t brace = view.find('{');
    size_t space = view.find(' ');
    size_t name_end = std::min(brace, space);
    if (name_end == std::string_view::npos) {
      stats.skip("not a sample line");
      continue;
    }
    std::string_view name = view.substr(0, name_end);
    std::optional<Metric> metric;
    double scale = 1;
    if (name == "DCGM_FI_DEV_GPU_UTIL") {
      metric = Metric::gpu_util_pct;  // the commonest line, as metric_by_name has it, without the search
    } else if (name.rfind("DCGM_FI_", 0) == 0) {
      if (auto known = metric_by_name(name)) {
        metric = known->metric;
        scale = known->scale;
      }
    } else if (name == "node_cpu_seconds_total") metric = Metric::cpu_iowait_pct;  // idle or iowait: HostCpuRates sorts it out
    else if (name == "instance:node_cpu_utilisation:rate5m") { metric = Metric::cpu_util_pct; scale = 100; }
    if (!metric && !any_metric && number > 50)
      return Error{path, number, "", "not dcgm-exporter or node_exporter output: no DCGM_ or node CPU metrics"};
    if (!metric) {
      stats.skip("metric not used by the audit");
      continue;
    }
    any_metric = true;
    std::string_view block;
    size_t rest = name_end;
    if (brace != std::string_view::npos && brace == name_end) {
      size_t close = view.find('}', brace);
      if (close == std::string_view::npos) {
        stats.skip("unterminated labels");
        continue;
      }
      block = view.substr(brace + 1, close - brace - 1);
      rest = close + 1;
    }
    std::string_view fields = trim(view.substr(rest));
    size_t gap = fields.find(' ');
    std::string_view value_text = fields.substr(0, gap);
    auto value = parse_decimal(value_text);
    if (!value) {
      bool special = value_text == "NaN" || value_text == "+Inf" || value_text == "-Inf" || value_text == "Inf";
      stats.skip(value_text.empty() ? "no value" : special ? "NaN or infinite value" : "value not a number");
      continue;
    }
    std::optional<double> t = scrape_time;
    if (gap != std::string_view::npos) {
      auto stamp = parse_finite_double(fields.substr(gap + 1));
      t = stamp ? std::optional<double>(*stamp * seconds_per_unit) : std::nullopt;
    }
    if (!t) {
      stats.skip("no timestamp (add one per sample or '# timestamp: <s>' per scrape)");
      continue;
    }
    if (*metric == Metric::cpu_util_pct || *metric == Metric::cpu_iowait_pct) {
      hosts.add(block, *metric, *t, *value * scale, emit, stats);
      continue;
    }
    auto it = known.find(block);
    if (it == known.end()) {
      Labels labels;
      for (auto& [key, label] : parse_label_block(block)) {
        std::string canonical = canonical_label_key(key);
        if (identifies_series(canonical)) labels.emplace_back(std::move(canonical), std::move(label));
      }
      it = known.emplace(std::string(block), table().intern(std::move(labels))).first;
    }
    // DCGM's blank sentinels (int64 values from 0x7ffffff0..., int32 2147483632...) mean "not supported".
    if (*value >= 9.2e18 || (*value >= 2147483632.0 && *value <= 2147483647.0)) {
      stats.skip("DCGM 'not supported' sentinel");
      continue;
    }
    emit({it->second.first, it->second.second, *metric, *t, *value * scale});
    ++stats.samples;
  }
  hosts.finish(emit, stats);
  if (!any_metric) return Error{path, 0, "", "not dcgm-exporter or node_exporter output: no DCGM_ or node CPU metrics"};
  return std::nullopt;
}

}  // namespace gw::reader_support
