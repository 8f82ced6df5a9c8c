#include "catalog/precision_support.h"

namespace gw {

std::string nvidia_architecture(const Accelerator& a) {
  if (a.vendor != "nvidia") return "";
  if (a.peak(Precision::fp8)) return "Ada/Hopper/Blackwell";
  if (a.peak(Precision::bf16)) return "Ampere";
  if (a.peak(Precision::int4)) return "Turing";  // int4 tensor cores came with Turing
  return "Pascal/Volta";
}

std::optional<std::string> unsupported_precision(const Accelerator& a, Precision weights) {
  const std::string arch = nvidia_architecture(a);
  const std::string on = arch.empty() ? a.name : arch;
  if (a.vendor == "nvidia") {
    const bool ampere_or_newer = arch == "Ampere" || arch == "Ada/Hopper/Blackwell";
    const bool volta_or_older = arch == "Pascal/Volta";
    switch (weights) {
      case Precision::fp8:
        // W8A8 needs fp8 tensor cores (Ada, Hopper); weight-only fp8 runs in Marlin (Ampere+).
        if (!ampere_or_newer)
          return on + " has no fp8 kernels: fp8 W8A8 needs Ada, Hopper or newer, weight-only fp8 (Marlin) Ampere";
        break;
      case Precision::int8:
        if (volta_or_older) return on + " has no int8 W8A8 kernels: they need Turing or newer";
        break;
      case Precision::int4:
        // GPTQ kernels run from Volta; nothing older.
        if (volta_or_older && !a.peak(Precision::fp16).value_or(0))
          return on + " has no 4-bit weight kernels: GPTQ needs Volta or newer";
        break;
      case Precision::fp4:
        if (!a.peak(Precision::fp4)) return on + " has no fp4 tensor cores (Blackwell)";
        break;
      default: break;
    }
  } else if (a.vendor == "amd") {
    if (weights == Precision::int8) return "AMD GPUs have no int8 W8A8 kernels in vLLM (fp8 W8A8 runs on MI300)";
    if (weights == Precision::int4) return "AMD GPUs have no AWQ/GPTQ 4-bit kernels in vLLM (fp8 W8A8 runs on MI300)";
    if (weights == Precision::fp8 && !a.peak(Precision::fp8)) return on + " has no fp8 tensor cores";
  }
  return std::nullopt;
}

std::string precision_note(const Accelerator& a, Precision weights) {
  const std::string arch = nvidia_architecture(a);
  if (arch.empty()) return "";
  if (weights == Precision::bf16 && !a.peak(Precision::bf16))
    return arch + " has no bf16 tensor cores: the weights run as fp16, same size";
  if (weights == Precision::fp8 && arch == "Ampere")
    return "Ampere has no fp8 tensor cores: fp8 weights run weight-only (Marlin W8A16), 16-bit compute";
  return "";
}

}  // namespace gw
