#include "plan/cold_start.h"

#include "model/memory.h"

namespace gw {

namespace {

// Model load bandwidth by where the weights come from. Typical figures, not measurements: set
// scaling.model_load_gbps from a measured cold start.
double default_load_gbps(const std::string& source) {
  if (source == "image") return 0.5;       // registry pull and layer decompression
  if (source == "node-cache") return 4.0;  // local NVMe
  return 1.0;                              // object storage, parallel ranged reads
}

}  // namespace

ColdStart cold_start(const ModelSpec& model, const ScalingSpec& scaling) {
  ColdStart c;
  InferenceMemoryOptions memory;
  memory.weight_precision = model.precision;
  memory.weight_format = model.weight_format;
  c.weights_gib = estimate_inference(model.arch, memory).weights_bytes / (1024.0 * 1024 * 1024);
  c.load_gbps = scaling.model_load_gbps > 0 ? scaling.model_load_gbps : default_load_gbps(scaling.model_source);
  c.model_load_s = c.weights_gib * 1.073741824 / c.load_gbps;
  c.warm_start_s = scaling.container_start_s + c.model_load_s;
  c.start_s = scaling.node_provisioning_s + c.warm_start_s;
  return c;
}

}  // namespace gw
