// Streaming readers for GPU telemetry: nvidia-smi --query-gpu CSV (with or without units and
// header, [N/A], YYYY/MM/DD timestamps), nvidia-smi dmon (-o DT, '-' for missing), dcgm-exporter
// scrapes in the Prometheus text format (Hostname or hostname, DCGM's "not supported"
// sentinels as missing, DCGM_FI_DEV_* in percent and DCGM_FI_PROF_* as ratios), Prometheus
// range-query JSON, and a long CSV (timestamp, series, value and label columns, mapped by
// name) that reads the Alibaba GenAI telemetry. Host CPU comes from node_exporter in the same
// text format (node_cpu_seconds_total counters turned into rates, or the node-mixin recording
// rule instance:node_cpu_utilisation:rate5m), as series labelled hostname=<instance host>. Memory is bounded by the number of series;
// every skipped row is counted with its reason.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace gw {

enum class Metric {
  gpu_util_pct, sm_active, tensor_active, memory_used_bytes, memory_total_bytes, power_w, cpu_util_pct, requests_per_s,
  cpu_iowait_pct,  // host: share of CPU time waiting on I/O
  host_cpus,       // host: number of logical CPUs
  dram_active      // share of cycles the device memory interface is busy (DCGM_FI_PROF_DRAM_ACTIVE)
};
inline constexpr int kMetricCount = 11;
std::string_view metric_name(Metric metric);

// One vocabulary for every reader (long CSV, dcgm-exporter text, Prometheus JSON): gpuwise's own
// names, DCGM's field names (FB_* in MiB, PROF_* ratios, power in W) and nvidia-smi's query
// names (memory.* in MiB); the scale turns the value into the metric's unit.
struct MetricName {
  Metric metric;
  double scale = 1;
};
std::optional<MetricName> metric_by_name(std::string_view name);

using Labels = std::vector<std::pair<std::string, std::string>>;  // sorted by key

struct TelemetrySample {
  const std::string* series = nullptr;  // stable id: the labels joined
  const Labels* labels = nullptr;
  Metric metric = Metric::gpu_util_pct;
  double time_s = 0;
  double value = 0;
  // False for a value outside the metric's physical range (a utilization of 250%): counted as
  // skipped, never averaged, but its timestamp still shows the series was being scraped.
  bool in_range = true;
};

using SampleHandler = std::function<void(const TelemetrySample&)>;

struct ReadStats {
  long long lines = 0;
  long long samples = 0;
  std::map<std::string, long long> skipped;  // reason -> count
  void skip(const std::string& reason) { ++skipped[reason]; }
  std::vector<std::string> warnings;         // likely unit mistakes: said, never a silent zero
};

enum class TelemetryFormat { automatic, nvidia_smi, dmon, dcgm, prometheus_json, long_csv };
std::optional<TelemetryFormat> parse_telemetry_format(std::string_view text);

struct LongCsvMapping {
  std::string timestamp = "timestamp", series = "series", metric = "metric", value = "value";
  std::string fixed_metric;  // when the file holds one metric and has no metric column
  std::vector<std::string> label_columns;  // further columns kept as labels (default: none)
};

// Units of explicit sample timestamps in Prometheus-style text: the exposition format's
// milliseconds, or OpenMetrics' seconds (detected by its closing '# EOF' line).
enum class TimestampUnit { automatic, seconds, milliseconds };
std::optional<TimestampUnit> parse_timestamp_unit(std::string_view text);

struct ReadOptions {
  TelemetryFormat format = TelemetryFormat::automatic;
  std::string host;          // label for files without one (nvidia-smi, dmon)
  LongCsvMapping long_csv;
  TimestampUnit timestamp_unit = TimestampUnit::automatic;
};

// Why a value is no measurement (a utilization of 250%, negative power), or nullptr.
const char* outside_physical_range(const TelemetrySample& sample);

// A label key as gpuwise names it: Hostname -> hostname, UUID -> uuid, modelName (and a long
// CSV's model_name, gpu_model) -> model, Kubernetes' node.kubernetes.io/instance-type in its
// Prometheus and CSV spellings -> instance_type; other keys as they are.
std::string canonical_label_key(std::string_view key);
// Whether a (canonical) label is part of a GPU series' id in DCGM data and PromQL answers.
bool identifies_series(std::string_view canonical_key);

// The host of a Prometheus instance label: "node-a:9100" -> node-a.
std::string instance_host(std::string_view instance);

// Reads one file, calling on_sample for every sample in file order. A file that is not
// telemetry of the given (or detected) format is an error naming the file and line.
std::optional<Error> read_telemetry(const std::string& path, const ReadOptions& options, const SampleHandler& on_sample,
                                    ReadStats& stats);

}  // namespace gw
