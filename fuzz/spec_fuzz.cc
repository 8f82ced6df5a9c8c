// Workload specs typed in a hurry (YAML: anchors, aliases, odd types, deep nesting).
#include "fuzz_input.h"
#include "spec/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gw::parse_spec(std::string(gw::fuzz::as_text(data, size)), "spec.yaml");
  return 0;
}
