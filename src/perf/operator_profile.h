// Step times from measured operator profiles in Vidur's format (microsoft/vidur
// `data/profiling/`: per-operator medians in ms by tokens in the step, FlashAttention prefill
// and decode by chunk, batch and KV length, NCCL all-reduce by message size), composed as Vidur
// composes them: per layer the projections, MLP, norms, rotary, add, attention and two
// tensor-parallel all-reduces; times the layers. Values between profiled points are
// interpolated linearly; beyond the last point, extrapolated from the last two.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/model_arch.h"
#include "perf/step_model.h"

namespace gw {

struct OperatorProfileOptions {
  std::string mlp_csv;          // compute/<device>/<model>/mlp.csv
  std::string attention_csv;    // compute/<device>/<model>/attention.csv
  std::string all_reduce_csv;   // network/<node>/all_reduce.csv; may be empty when tensor_parallel is 1
  int tensor_parallel = 1;
  int block_tokens = 16;        // attention rows profiled with this KV block size
  int num_layers = 0;
  int embedding_dim = 0;        // hidden size: all-reduce messages are tokens x this x 2 bytes
  double kv_bytes_per_token = 0;  // per device
  // Vidur's defaults (commit 7d47513, BaseExecutionTimePredictorConfig).
  double nccl_launch_overhead_ms = 0.02;
  double decode_batching_overhead = 0.1;
  double prefill_batching_overhead = 0.1;
  int kv_granularity = 64;      // KV lengths rounded up to this before lookup
};

// The files of a profile folder laid out as Vidur's data/profiling (compute/<device>/<model>/,
// network/<node>/) for one device, model and tensor-parallel degree; the layers, hidden size and
// KV bytes per token (fp16, per device) from the model's architecture.
OperatorProfileOptions vidur_profile_options(const std::string& dir, const std::string& device, const std::string& node,
                                             const std::string& model, const ModelArch& arch, int tensor_parallel);

class ProfiledStepTimer final : public LlmStepTimer {
 public:
  // Errors: a file missing or unreadable, a column missing, no rows for the tensor-parallel
  // degree or block size asked for.
  static Result<std::shared_ptr<ProfiledStepTimer>> load(const OperatorProfileOptions& options);

  // A prompt's attention is looked up by an equivalent chunk: sqrt(2 x attended pairs), as
  // Vidur aggregates chunks (root of the sum of squares).
  double step_time_s(double decode_sequences, double context_sum, double prefill_tokens, double prefill_attended,
                     double sampled_sequences) const override;
  double kv_bytes_per_token() const override { return options_.kv_bytes_per_token; }

  // One layer's per-token operators at this many tokens, ms (for tests and reports).
  double per_token_ms(double tokens) const;

 private:
  struct Curve {  // y(x), x ascending
    std::vector<double> x, y;
    double at(double x) const;
  };
  struct Surface {  // y(a, b): a curve over b for each profiled a
    std::vector<double> a;
    std::vector<Curve> curves;
    double at(double a, double b) const;
  };
  OperatorProfileOptions options_;
  Curve per_token_;      // sum of the per-token operators of one layer, ms
  Curve all_reduce_;     // by tokens, ms
  Surface decode_;       // batch, KV length -> ms
  Surface prefill_;      // chunk, KV length -> ms
};

}  // namespace gw
