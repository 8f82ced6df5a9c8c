#include "core/limits.h"

namespace gw {

InputLimits& input_limits() {
  static InputLimits limits;
  return limits;
}

}  // namespace gw
