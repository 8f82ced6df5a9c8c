// Which weight precisions an accelerator can serve with, by architecture, for the engine gpuwise
// assumes (vLLM on NVIDIA and AMD GPUs): a precision with no kernel there is refused with the
// reason; one that runs another way than asked (bf16 as fp16 before Ampere, fp8 weight-only
// before Ada) is flagged. Other accelerators (TPU, Gaudi, Trainium) run their own engines and are
// not judged here.
#pragma once

#include <optional>
#include <string>

#include "catalog/accelerator.h"
#include "core/precision.h"

namespace gw {

// NVIDIA architecture from the catalog's tensor-core peaks: fp8 -> "Ada/Hopper/Blackwell",
// bf16 -> "Ampere", int4 -> "Turing", else "Pascal/Volta"; "" for other vendors.
std::string nvidia_architecture(const Accelerator& accelerator);

// Why these weights cannot be served on the accelerator, or nullopt when they can; the reason
// names the architecture, not the part ("Turing has no fp8 kernels: ..."), so parts group.
std::optional<std::string> unsupported_precision(const Accelerator& accelerator, Precision weights);
// How they run when not as asked ("bf16 runs as fp16 ..."), or "".
std::string precision_note(const Accelerator& accelerator, Precision weights);

// The source of the rules above.
inline constexpr const char* kPrecisionSupportSource =
    "vLLM 0.9.2 'Supported Hardware' for quantization kernels "
    "(https://docs.vllm.ai/en/v0.9.2/features/quantization/supported_hardware.html, read 2026-12-01)";

}  // namespace gw
