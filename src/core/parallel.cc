#include "core/parallel.h"

#include <algorithm>

namespace gw {

int worker_count(int jobs, size_t pieces) {
  if (jobs <= 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(std::min<size_t>(static_cast<size_t>(jobs), std::max<size_t>(pieces, 1)));
}

}  // namespace gw
