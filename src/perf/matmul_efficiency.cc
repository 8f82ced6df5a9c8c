#include "perf/matmul_efficiency.h"

namespace gw {

std::optional<double> measured_matmul_share(std::string_view accelerator) {
  // github.com/stas00/ml-engineering, compute/accelerator/README.md, "Maximum Achievable Matmul
  // FLOPS comparison table", BF16, the v2 table (mamf-finder.py, mean of 100 iterations after 50
  // warm-up, the cache reset between them), as of 2025: A100 SXM 271.2 of 312 TFLOPS (torch
  // 2.6.0+cu126), H100 SXM 794.5 of 989 (2.7.0+cu126), MI300X 668.4 of 1300 (2.5.1, ROCm 6.3,
  // TunableOp), MI325X 784.9 of 1300 (2.6.0, ROCm 6.2.4, 1000 W, TunableOp). Parts the table
  // measured only in its older v1 method (Gaudi 2 and 3) or in another memory configuration
  // (GH200 141 GB) are left out: a share is compared only with shares measured the same way.
  if (accelerator == "A100-80GB") return 271.2 / 312;
  if (accelerator == "H100") return 794.5 / 989;
  if (accelerator == "MI300X") return 668.4 / 1300;
  if (accelerator == "MI325X") return 784.9 / 1300;
  return std::nullopt;
}

}  // namespace gw
