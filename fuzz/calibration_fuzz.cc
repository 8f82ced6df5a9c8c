// Calibration inputs: measured latencies (`gpuwise calibrate`) and the efficiency factors it
// writes (`--calibration`); the first byte picks which. (The fit itself is a search over
// factors, too slow per input to fuzz; its inputs are validated by the reader.)
#include "catalog/catalog.h"
#include "fuzz_input.h"
#include "perf/efficiency.h"
#include "perf/measurement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const gw::Catalog catalog = gw::Catalog::embedded().value();
  if (data[0] % 2 == 0) {
    (void)gw::Calibration::load(gw::fuzz::write_input(data + 1, size - 1, "calibration.csv"));
    return 0;
  }
  (void)gw::read_measurements(gw::fuzz::as_text(data + 1, size - 1), "measurements.csv", catalog);
  return 0;
}
