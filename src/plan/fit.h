// VRAM-first fit across the catalog: for every accelerator, the fewest devices that hold the
// model (and the tensor/pipeline split that implies), the cheapest offering that provides them,
// and the largest batch and context that fit there.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/serving_defaults.h"
#include "catalog/catalog.h"
#include "model/memory.h"

namespace gw {

enum class FitMode { inference, training };

struct FitRequest {
  FitMode mode = FitMode::inference;
  InferenceMemoryOptions inference;
  TrainingMemoryOptions training;
  double usable_fraction = kUsableMemoryFraction;  // of device memory
  Pricing pricing = Pricing::on_demand;
  OfferingFilter offering_filter;    // clouds, regions, geo for choosing offerings
  int max_devices = 64;              // per model replica (training: tp x pp x dp)
  bool parallelism_fixed = false;    // the user chose tp and pp: do not search
  std::vector<std::string> accelerators;  // empty: every accelerator in the catalog
};

struct AcceleratorFit {
  const Accelerator* accelerator = nullptr;
  bool fits = false;
  int count = 0;             // devices per replica
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int data_parallel = 1;
  double total_bytes_per_device = 0;
  double usable_bytes_per_device = 0;
  const Offering* offering = nullptr;  // cheapest offering that provides count devices
  int instances = 0;
  std::optional<double> usd_per_hour;  // for all instances
  long long max_batch = 0;             // at the requested context (training: micro-batch)
  long long max_context = 0;           // at the requested batch (training: sequence length)
  std::string reason;                  // why it does not fit, when it does not
  bool precision_unsupported = false;  // no kernels for the weights' precision (the reason says which)
  std::string precision_note;          // why refused, or how the weights run when not as asked (no part name)
  // Does not fit, but needs at most 5% more than is usable: what would make it fit.
  bool near_miss = false;
  double short_by_bytes = 0;
  std::vector<std::string> would_fit_with;  // "context <= 3,712 tokens", "fp8 KV cache", "2 devices (tp2 pp1)"
};

// A near miss needs at most this share more than the usable memory.
inline constexpr double kNearMissShare = 0.05;

// The memory estimate for one layout.
MemoryEstimate estimate_for(const ModelArch& arch, const FitRequest& request, int tp, int pp);

// One row per accelerator, fitting ones first, cheapest first.
std::vector<AcceleratorFit> fit_accelerators(const Catalog& catalog, const ModelArch& arch,
                                             const FitRequest& request);

}  // namespace gw
