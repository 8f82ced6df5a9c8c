// Measured request-rate series (traffic.rates in a spec), read as the spec reads them, with and
// without a row filter; when one parses, its first arrivals are drawn as `gpuwise scale` would.
#include "fuzz_input.h"
#include "sim/arrivals.h"
#include "trace/rate_series.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = gw::fuzz::as_text(data, size);
  gw::RateSeriesOptions plain;
  auto series = gw::parse_rate_series(text, "rates.csv", plain);
  gw::RateSeriesOptions filtered;
  filtered.timestamp_column = "timestamp_anon";
  filtered.rps_column = "value";
  filtered.where = {{"request_type", "API Requests"}};
  (void)gw::parse_rate_series(text, "rates.csv", filtered);
  if (series.ok()) {
    (void)series.value().rate_at(series.value().duration_s / 2);
    gw::ServiceSpec service;
    service.input_tokens.sample = {1};
    service.output_tokens.sample = {1};
    gw::ArrivalOptions options;
    options.process = "series";
    options.rates = series.value();
    gw::Rng rng(1);
    auto arrivals = gw::make_arrivals(options, service, rng);
    for (int i = 0; i < 1000; ++i)
      if (!arrivals->next()) break;
  }
  return 0;
}
