// SkyPilot catalog CSVs (vms.csv of any cloud) imported against the embedded accelerators.
#include "catalog/skypilot_import.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const gw::Catalog catalog = gw::Catalog::embedded().value();
  static const char* clouds[] = {"aws", "gcp", "azure", "lambda", "runpod"};
  gw::SkypilotImportOptions options{"2026-11-30", "fuzz"};
  (void)gw::import_skypilot_csv(gw::fuzz::as_text(data + 1, size - 1), "vms.csv", clouds[data[0] % 5], catalog, options);
  return 0;
}
