// Which weight precisions an accelerator runs, by family and engine, read from one table
// (catalog/precision_support.csv, each row with its source): a precision with no kernel there
// is refused with the reason; one that runs another way than asked (bf16 as fp16 before Ampere,
// fp8 weight-only on Ampere, fp16 as bf16 on TPUs) is flagged. fit, perf, plan, fleet and train
// all ask here, so one part is never refused by one command and planned by another.
#pragma once

#include <optional>
#include <string>

#include "catalog/accelerator.h"
#include "core/precision.h"

namespace gw {

// The engines the table speaks for: serving (vLLM and its GPU/TPU/Gaudi backends) and
// training (Megatron-LM with Transformer Engine, MaxText on TPUs).
enum class PrecisionEngine { serving, training };

// NVIDIA architecture from the catalog's tensor-core peaks: fp8 -> "Ada/Hopper/Blackwell",
// bf16 -> "Ampere", int4 -> "Turing", else "Pascal/Volta"; "" for other vendors.
std::string nvidia_architecture(const Accelerator& accelerator);
// The table's family of a part: nvidia-ampere, amd-instinct, google-tpu, intel-gaudi, ...
std::string accelerator_family(const Accelerator& accelerator);

struct PrecisionSupport {
  enum class Level { runs, runs_as, none };
  Level level = Level::runs;
  std::string note;    // why refused, or how it runs when not as asked; "" when it runs as asked
  std::string source;  // the row's source, "" when no row speaks (16/32-bit floats)
};

// A format's own row (awq) speaks before its precision's (int4).
PrecisionSupport precision_support(const Accelerator& accelerator, Precision weights,
                                   PrecisionEngine engine = PrecisionEngine::serving, WeightFormat format = WeightFormat::plain);

// Why these weights cannot be served (or trained) on the accelerator, or nullopt when they can;
// the reason names the family ("Turing has no fp8 kernels: ..."), so parts group.
std::optional<std::string> unsupported_precision(const Accelerator& accelerator, Precision weights,
                                                 PrecisionEngine engine = PrecisionEngine::serving,
                                                 WeightFormat format = WeightFormat::plain);
// How they run when not as asked ("Ampere has no fp8 tensor cores: ..."), or "".
std::string precision_note(const Accelerator& accelerator, Precision weights,
                           PrecisionEngine engine = PrecisionEngine::serving, WeightFormat format = WeightFormat::plain);

// The source of the serving rules, for a plan's assumptions.
inline constexpr const char* kPrecisionSupportSource =
    "catalog/precision_support.csv: vLLM 0.9.2 'Supported Hardware' for quantization kernels "
    "(https://docs.vllm.ai/en/v0.9.2/features/quantization/supported_hardware.html, read 2026-12-01; "
    "Gaudi from v0.11.2's table, read 2026-12-04)";
// The source of the rules for weights in `format`: MXFP4's rows come from vLLM's gpt-oss recipe.
inline std::string precision_support_source(WeightFormat format) {
  if (format == WeightFormat::mxfp4)
    return "catalog/precision_support.csv: vLLM's gpt-oss recipe for MXFP4 "
           "(https://github.com/vllm-project/recipes/blob/main/OpenAI/GPT-OSS.md, read 2026-12-07)";
  return kPrecisionSupportSource;
}

}  // namespace gw
