// Request traces: Azure CSV, generic CSV, JSON Lines (the first byte picks the format), streamed
// and summarized as the planner does.
#include "fuzz_input.h"
#include "trace/request_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const gw::TraceFormat formats[] = {gw::TraceFormat::automatic, gw::TraceFormat::azure, gw::TraceFormat::csv,
                                            gw::TraceFormat::jsonl};
  gw::TraceFormat format = formats[data[0] % 4];
  std::string path = gw::fuzz::write_input(data + 1, size - 1, "trace.csv");
  long long n = 0;
  (void)gw::read_trace(path, format, [&](const gw::TraceRequest&) { ++n; });
  (void)gw::summarize_trace(path, format);
  return 0;
}
