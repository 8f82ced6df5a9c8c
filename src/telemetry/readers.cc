#include "telemetry/readers.h"

#include "telemetry/format_readers.h"
#include "telemetry/reader_support.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <cstring>
#include <set>
#include <ctime>
#include <unordered_map>

#include "core/flat_index.h"
#include "core/limits.h"
#include "core/numbers.h"
#include "core/text.h"
#include "trace/request_trace.h"

namespace gw {

std::string_view metric_name(Metric metric) {
  switch (metric) {
    case Metric::gpu_util_pct: return "gpu_util_pct";
    case Metric::sm_active: return "sm_active";
    case Metric::tensor_active: return "tensor_active";
    case Metric::memory_used_bytes: return "memory_used_bytes";
    case Metric::memory_total_bytes: return "memory_total_bytes";
    case Metric::power_w: return "power_w";
    case Metric::cpu_util_pct: return "cpu_util_pct";
    case Metric::requests_per_s: return "requests_per_s";
    case Metric::cpu_iowait_pct: return "cpu_iowait_pct";
    case Metric::host_cpus: return "host_cpus";
    case Metric::dram_active: return "dram_active";
  }
  return "gpu_util_pct";
}

std::optional<MetricName> metric_by_name(std::string_view name) {
  constexpr double kMiBytes = 1024.0 * 1024.0;
  struct Entry {
    std::string_view name;
    Metric metric;
    double scale;
  };
  static constexpr Entry kNames[] = {
      {"gpu_util_pct", Metric::gpu_util_pct, 1}, {"duty_cycle", Metric::gpu_util_pct, 1}, {"gpu_util", Metric::gpu_util_pct, 1},
      {"DCGM_FI_DEV_GPU_UTIL", Metric::gpu_util_pct, 1}, {"utilization.gpu", Metric::gpu_util_pct, 1},
      {"sm_active", Metric::sm_active, 1}, {"DCGM_FI_PROF_SM_ACTIVE", Metric::sm_active, 1},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", Metric::sm_active, 1},
      {"tensor_active", Metric::tensor_active, 1}, {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", Metric::tensor_active, 1},
      {"dram_active", Metric::dram_active, 1}, {"DCGM_FI_PROF_DRAM_ACTIVE", Metric::dram_active, 1},
      {"memory_used_bytes", Metric::memory_used_bytes, 1}, {"memory_used", Metric::memory_used_bytes, 1},
      {"DCGM_FI_DEV_FB_USED", Metric::memory_used_bytes, kMiBytes}, {"memory.used", Metric::memory_used_bytes, kMiBytes},
      {"memory_total_bytes", Metric::memory_total_bytes, 1}, {"DCGM_FI_DEV_FB_TOTAL", Metric::memory_total_bytes, kMiBytes},
      {"memory.total", Metric::memory_total_bytes, kMiBytes},
      {"power_w", Metric::power_w, 1}, {"DCGM_FI_DEV_POWER_USAGE", Metric::power_w, 1}, {"power.draw", Metric::power_w, 1},
      {"cpu_util_pct", Metric::cpu_util_pct, 1}, {"cpu_iowait_pct", Metric::cpu_iowait_pct, 1},
      {"requests_per_s", Metric::requests_per_s, 1}, {"qps", Metric::requests_per_s, 1},
      {"host_cpus", Metric::host_cpus, 1},
  };
  for (const auto& e : kNames)
    if (e.name == name) return MetricName{e.metric, e.scale};
  return std::nullopt;
}

std::optional<TimestampUnit> parse_timestamp_unit(std::string_view text) {
  std::string name = to_lower(text);
  if (name.empty() || name == "auto") return TimestampUnit::automatic;
  if (name == "s" || name == "seconds") return TimestampUnit::seconds;
  if (name == "ms" || name == "milliseconds") return TimestampUnit::milliseconds;
  return std::nullopt;
}

std::optional<TelemetryFormat> parse_telemetry_format(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "auto" || name.empty()) return TelemetryFormat::automatic;
  if (name == "nvidia-smi") return TelemetryFormat::nvidia_smi;
  if (name == "dmon") return TelemetryFormat::dmon;
  if (name == "dcgm") return TelemetryFormat::dcgm;
  if (name == "prometheus-json") return TelemetryFormat::prometheus_json;
  if (name == "long-csv") return TelemetryFormat::long_csv;
  return std::nullopt;
}

using namespace reader_support;

namespace {

TelemetryFormat detect(const std::string& path, const std::string& first_line) {
  std::string lower = to_lower(first_line);
  if (path.size() > 5 && path.substr(path.size() - 5) == ".json") return TelemetryFormat::prometheus_json;
  if (!first_line.empty() && first_line[0] == '{') return TelemetryFormat::prometheus_json;
  if (lower.rfind("timestamp", 0) == 0 && lower.find("utilization") != std::string::npos) return TelemetryFormat::nvidia_smi;
  bool dmon_columns = lower.find(" sm") != std::string::npos || lower.find(" pwr") != std::string::npos;
  if ((lower.rfind("#date", 0) == 0 || lower.rfind("# gpu ", 0) == 0 || lower.rfind("#gpu ", 0) == 0) && dmon_columns)
    return TelemetryFormat::dmon;
  if (lower.rfind("# help", 0) == 0 || lower.rfind("# type", 0) == 0 || lower.rfind("dcgm_", 0) == 0 ||
      lower.rfind("node_", 0) == 0 || lower.rfind("instance:node_", 0) == 0 ||
      lower.rfind("# timestamp", 0) == 0)
    return TelemetryFormat::dcgm;
  return TelemetryFormat::long_csv;
}

// OpenMetrics text ends with '# EOF' (and carries timestamps in seconds).
bool ends_with_eof_marker(std::ifstream& in) {
  in.clear();
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size <= 0) {
    in.seekg(0);
    return false;
  }
  std::streamoff from = std::max<std::streamoff>(0, size - 64);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  in.clear();
  in.seekg(0);
  std::string_view view(tail);
  while (!view.empty() && (view.back() == '\n' || view.back() == '\r' || view.back() == ' ' || view.back() == '\t'))
    view.remove_suffix(1);
  return view.size() >= 5 && view.substr(view.size() - 5) == "# EOF";
}


}  // namespace

// A value no device can report: skipped and counted, never averaged. Ratios get 0.1% of slack
// for rounding in the exporters.
const char* outside_physical_range(const TelemetrySample& s) {
  switch (s.metric) {
    case Metric::gpu_util_pct:
      return s.value < 0 || s.value > 100 ? "out of range: utilization outside 0-100%" : nullptr;
    case Metric::sm_active:
    case Metric::tensor_active:
    case Metric::dram_active:
      return s.value < -1e-3 || s.value > 1.001 ? "out of range: activity ratio outside 0-1" : nullptr;
    case Metric::memory_used_bytes:
    case Metric::memory_total_bytes: return s.value < 0 ? "out of range: negative memory" : nullptr;
    case Metric::power_w: return s.value < 0 ? "out of range: negative power" : nullptr;
    case Metric::cpu_util_pct:
    case Metric::cpu_iowait_pct:
      return s.value < 0 || s.value > 100.001 ? "out of range: CPU utilization outside 0-100%" : nullptr;
    case Metric::requests_per_s: return s.value < 0 ? "out of range: negative request rate" : nullptr;
    case Metric::host_cpus: return s.value < 0 ? "out of range: negative CPU count" : nullptr;
  }
  return nullptr;
}

std::string canonical_label_key(std::string_view key) {
  if (key == "Hostname") return "hostname";
  if (key == "UUID") return "uuid";
  if (key == "modelName" || key == "model_name" || key == "gpu_model") return "model";
  if (key == "node.kubernetes.io/instance-type" || key == "node_kubernetes_io_instance_type" ||
      key == "label_node_kubernetes_io_instance_type" || key == "beta_kubernetes_io_instance_type" ||
      key == "label_beta_kubernetes_io_instance_type" || key == "instance-type" || key == "instance_type")
    return "instance_type";
  return std::string(key);
}

bool identifies_series(std::string_view key) {
  for (const char* kept : {"gpu", "uuid", "hostname", "pod", "namespace", "container", "model", "GPU_I_ID", "job", "team",
                           "instance_type"})
    if (key == kept) return true;
  return false;
}

// "[::1]:9100" -> [::1]; a bare host stays as it is.
std::string instance_host(std::string_view instance) {
  size_t colon = instance.rfind(':');
  if (colon != std::string_view::npos && (instance.front() != '[' || (colon > 0 && instance[colon - 1] == ']')))
    instance = instance.substr(0, colon);
  return std::string(instance);
}

std::optional<Error> read_telemetry(const std::string& path, const ReadOptions& o, const SampleHandler& emit, ReadStats& stats) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path, 0, "", "cannot read the telemetry file"};
  TelemetryFormat format = o.format;
  if (format == TelemetryFormat::automatic) {
    std::string first;
    std::getline(in, first);
    if (auto problem = encoding_problem(first)) return Error{path, 1, "", *problem + ": not telemetry"};
    format = detect(path, first);
    in.clear();
    in.seekg(0);
  }
  // One check for every format: a time about 3,000 years from 1970 is garbage, and would
  // overflow the hour-of-week arithmetic downstream.
  double first_s = 1e300, last_s = -1e300;
  long long timed = 0;
  const SampleHandler checked = [&](const TelemetrySample& s) {
    if (std::abs(s.time_s) > 1e11) {
      stats.skip("timestamp out of range");
      --stats.samples;  // readers count every sample they hand over
      return;
    }
    first_s = std::min(first_s, s.time_s);
    last_s = std::max(last_s, s.time_s);
    ++timed;
    if (const char* reason = outside_physical_range(s)) {
      stats.skip(reason);
      --stats.samples;
      TelemetrySample flagged = s;
      flagged.in_range = false;
      emit(flagged);  // its timestamp still tells when the series was scraped
      return;
    }
    emit(s);
  };
  TimestampUnit unit = o.timestamp_unit;
  bool openmetrics = false;
  if (format == TelemetryFormat::dcgm && unit == TimestampUnit::automatic) {
    openmetrics = ends_with_eof_marker(in);
    unit = openmetrics ? TimestampUnit::seconds : TimestampUnit::milliseconds;
  }
  std::optional<Error> error;
  try {
    switch (format) {
      case TelemetryFormat::nvidia_smi: error = read_nvidia_smi(in, path, o, checked, stats); break;
      case TelemetryFormat::dmon: error = read_dmon(in, path, o, checked, stats); break;
      case TelemetryFormat::dcgm:
        error = read_dcgm(in, path, unit == TimestampUnit::seconds ? 1.0 : 1e-3, checked, stats);
        break;
      case TelemetryFormat::prometheus_json: error = read_prometheus_json(path, checked, stats); break;
      default: error = read_long_csv(in, path, o.long_csv, checked, stats); break;
    }
  } catch (const SeriesLimitExceeded& e) {
    return Error{path, static_cast<int>(std::min<long long>(stats.lines, 1 << 30)), "", e.what()};
  }
  if (error) return error;
  // Times that make no sense for telemetry name the likely unit mistake instead of a quiet $0.
  if (timed > 0) {
    const double now_s = static_cast<double>(std::time(nullptr));
    std::string hint = format == TelemetryFormat::dcgm
                           ? (unit == TimestampUnit::seconds ? " (read as seconds" + std::string(openmetrics ? ", OpenMetrics" : "") +
                                                                   "; --timestamp-unit ms if they are milliseconds)"
                                                             : " (read as milliseconds, the Prometheus text format; "
                                                               "--timestamp-unit s if they are seconds, as in OpenMetrics)")
                           : "";
    if (last_s > now_s + 86400)
      stats.warnings.push_back(fmt::format("{}: samples lie in the future (up to {:.0f} days ahead){}", path,
                                           (last_s - now_s) / 86400, hint));
    else if (last_s - first_s > 10 * 365.25 * 86400)
      stats.warnings.push_back(fmt::format("{}: samples span {:.0f} years{}", path, (last_s - first_s) / (365.25 * 86400), hint));
    else if (timed >= 100 && last_s - first_s < 60)
      stats.warnings.push_back(fmt::format("{}: {} samples span only {:.1f} seconds{}", path, timed, last_s - first_s, hint));
    else if (format == TelemetryFormat::dcgm && last_s > 0 && last_s < 3.2e8 && first_s > 0)
      stats.warnings.push_back(fmt::format("{}: samples fall in the 1970s{}", path, hint));
  }
  return std::nullopt;
}

}  // namespace gw
