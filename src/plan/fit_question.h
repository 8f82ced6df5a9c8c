// The fit question (`gpuwise fit MODEL`): the memory a model needs per device, term by term, and
// on every accelerator in the catalog the fewest devices that hold it, the cheapest offering
// that provides them and the largest batch and context that fit there.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/serving_defaults.h"
#include "model/model_arch.h"
#include "plan/fit.h"

namespace gw {

// What `gpuwise fit` takes, as its options say it; errors name the option ("--context").
struct FitOptions {
  bool train = false;
  std::string precision;  // empty: the checkpoint's (ModelArch::serving_precision), bf16 for training
  std::string kv_precision;       // empty: bf16 (fp32 with fp32 weights)
  long long batch = 1;
  long long context = 0;          // 0: min(4096, the model's maximum)
  int tp = 0, pp = 0, dp = 1, zero = 0;  // tp, pp 0: searched
  std::string optimizer = "adamw", recompute = "none", pricing = "on-demand";
  bool sequence_parallel = false, no_flash = false, offload = false;
  double overhead_gib = kRuntimeOverheadGib, usable_fraction = kUsableMemoryFraction;
  int quant_group_size = 128;
  long long prefill_chunk = kActivationPeakTokens;
  int max_devices = 64;
  std::vector<std::string> clouds, regions, accelerators;  // comma lists allowed in each entry
  std::string geo;
};

struct FitResult {
  ModelArch arch;
  FitOptions options;
  FitRequest request;
  int tensor_parallel = 1, pipeline_parallel = 1;
  long long context_tokens = 0;
  MemoryEstimate estimate;              // at the requested (or tp1 pp1) layout
  std::vector<AcceleratorFit> fits;     // one per accelerator, fitting first, cheapest first
  int fitting = 0;                      // how many fit
  // `gpuwise fit`'s exit status: 0 fits somewhere, 3 nowhere.
  int exit_code() const { return fitting > 0 ? 0 : 3; }
};

// An Error for options the question cannot take. Points into `catalog`.
Result<FitResult> fit_question(const Catalog& catalog, const ModelArch& arch, const FitOptions& options);

}  // namespace gw
