// What the push-down joins to the GPU series besides their own hours: each host's hourly CPU from
// node_exporter (by host name) and each pod's requests served per second from its serving
// engine's counter (by namespace and pod), kept in the store by the hour and added to a window's
// aggregates.
#pragma once

#include <cstddef>
#include <optional>

#include "telemetry/aggregate.h"
#include "telemetry/prometheus_api.h"
#include "telemetry/pushdown_store.h"

namespace gw::pushdown {

// A window of whole hours: its start (seconds since the epoch), first hour and length.
struct WindowHours {
  double start_s = 0;
  long long first_hour = 0;
  size_t hours = 0;
  // The window's hour an evaluation time closes (none outside the window).
  std::optional<size_t> index_of(double evaluation_s) const;
  long long hour(size_t index) const { return first_hour + static_cast<long long>(index); }
};

// A host CPU answer (busy %, iowait % or CPU count, by `instance`) into the store.
void store_host_answer(PushDownStore& store, Metric metric, const QueryResult& result, const WindowHours& window);
// The hosts' CPU in the window's hours, hour by hour, into the aggregates.
void add_host_hours(const PushDownStore& store, const WindowHours& window, TelemetryAggregator& aggregator);

// Requests served per second by (namespace, pod) into the store.
void store_served_answer(PushDownStore& store, const QueryResult& result, const WindowHours& window);
// Each pod's mean request rate over the window's hours it served in, shared by the pod's GPU
// series with samples in the window (their `namespace` and `pod` labels).
void add_served_requests(const PushDownStore& store, const WindowHours& window, TelemetryAggregator& aggregator);

}  // namespace gw::pushdown
