// Hugging Face config.json files, then what fit does with the model: counts and memory.
#include "fuzz_input.h"
#include "model/hf_config.h"
#include "model/memory.h"
#include "model/model_arch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto arch = gw::parse_model_config(gw::fuzz::as_text(data, size), "config.json");
  if (!arch.ok()) return 0;
  (void)gw::count_params(arch.value());
  (void)gw::estimate_inference(arch.value(), gw::InferenceMemoryOptions{});
  (void)gw::estimate_training(arch.value(), gw::TrainingMemoryOptions{});
  return 0;
}
