#include "gpuwise/gpuwise.h"

namespace gpuwise {

// GPUWISE_VERSION comes from the CMake project's version, for this file only.
const char* version() { return GPUWISE_VERSION; }

}  // namespace gpuwise
