// The body of the telemetry fuzz targets (one per format, so each keeps its own corpus).
#pragma once

#include "audit/audit.h"
#include "fuzz_input.h"
#include "telemetry/aggregate.h"
#include "telemetry/readers.h"

namespace gw::fuzz {

inline int telemetry(const uint8_t* data, size_t size, TelemetryFormat format) {
  static const Catalog catalog = Catalog::embedded().value();
  std::string path = write_input(data, size, format == TelemetryFormat::prometheus_json ? "telemetry.json" : "telemetry.txt");
  ReadOptions options;
  options.format = format;
  options.host = "node";
  if (format == TelemetryFormat::long_csv) options.long_csv.label_columns = {"pod"};
  TelemetryAggregator aggregator;
  ReadStats stats;
  auto error = read_telemetry(path, options, [&](const TelemetrySample& s) { aggregator.add(s); }, stats);
  if (!error) {
    AuditOptions audit;
    audit.min_coverage_hours = 0;
    audit.group_by = "pod";
    (void)run_audit(aggregator, catalog, audit);
  }
  return 0;
}

}  // namespace gw::fuzz
