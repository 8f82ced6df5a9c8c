// How long a new replica takes to serve: node provisioning + container start + weights over the
// load bandwidth of where they come from (the spec's scaling section).
#pragma once

#include "spec/spec.h"

namespace gw {

struct ColdStart {
  double weights_gib = 0, load_gbps = 0, model_load_s = 0, warm_start_s = 0, start_s = 0;
};

ColdStart cold_start(const ModelSpec& model, const ScalingSpec& scaling);

}  // namespace gw
