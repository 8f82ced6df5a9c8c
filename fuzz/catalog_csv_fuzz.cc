// Catalog CSVs edited by hand: accelerators, offerings, commitments and instance types. The
// first byte picks the table; the rest is the file.
#include "catalog/catalog.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const gw::Catalog base = gw::Catalog::embedded().value();
  gw::Catalog catalog = base;
  std::string_view text = gw::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: (void)catalog.add_accelerators_csv(text, "accelerators.csv"); break;
    case 1: (void)catalog.add_offerings_csv(text, "offerings.csv"); break;
    case 2: (void)catalog.add_commitments_csv(text, "commitments.csv"); break;
    default: (void)catalog.add_instance_types_csv(text, "instance_types.csv"); break;
  }
  // What the planners do with a catalog: select and sort.
  gw::OfferingFilter filter;
  (void)catalog.select(filter);
  return 0;
}
