// Spot availability traces (SkyPilot spot-traces JSON), read as `train --spot-trace` reads them.
#include "fuzz_input.h"
#include "plan/spot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gw::load_spot_trace(gw::fuzz::write_input(data, size, "spot.json"));
  return 0;
}
