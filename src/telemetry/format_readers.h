// The readers of each telemetry format (internal to src/telemetry; read_telemetry in
// readers.h detects the format and calls one). Each hands every sample to `emit` and counts
// lines, samples and skips in `stats`.
#pragma once

#include <fstream>
#include <optional>
#include <string>

#include "core/error.h"
#include "telemetry/readers.h"

namespace gw::reader_support {

// nvidia-smi --query-gpu CSV, and nvidia-smi dmon's columns (read_nvidia_smi.cc).
std::optional<Error> read_nvidia_smi(std::ifstream& in, const std::string& path, const ReadOptions& o,
                                     const SampleHandler& emit, ReadStats& stats);
std::optional<Error> read_dmon(std::ifstream& in, const std::string& path, const ReadOptions& o, const SampleHandler& emit,
                               ReadStats& stats);
// Prometheus text exposition (dcgm-exporter, node_exporter), timestamps in seconds_per_unit
// (read_prometheus_text.cc).
std::optional<Error> read_dcgm(std::ifstream& in, const std::string& path, double seconds_per_unit, const SampleHandler& emit,
                               ReadStats& stats);
// A Prometheus HTTP API query_range answer saved as JSON (read_prometheus_json.cc).
std::optional<Error> read_prometheus_json(const std::string& path, const SampleHandler& emit, ReadStats& stats);
// Long CSV: a time, a series, a metric and a value column (read_long_csv.cc).
std::optional<Error> read_long_csv(std::ifstream& in, const std::string& path, const LongCsvMapping& m,
                                   const SampleHandler& emit, ReadStats& stats);

}  // namespace gw::reader_support
