// Telemetry as exported by half-broken agents: the long-csv reader, then the aggregation and
// the audit over whatever it read.
#include "telemetry_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return gw::fuzz::telemetry(data, size, gw::TelemetryFormat::long_csv);
}
