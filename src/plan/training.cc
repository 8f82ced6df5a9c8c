#include "plan/training.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "perf/step_time.h"

namespace gw {

double training_compute_efficiency(const Accelerator& accelerator, const Calibration* calibration, double hidden_size) {
  // Training GEMMs reach a larger share of peak the wider the model: Megatron-LM's achieved
  // TFLOP/s per A100 rise from 44% of peak at h = 2304 to 52% at h = 25600 (Narayanan et al.
  // 2021, Table 1). Modelled as the family's compute factor x 1.03 x h / (h + 800), which is the
  // factor itself at h ~ 4,000 and ~1.0x-1.03x of it for the widest models.
  double base = efficiency_for(accelerator, calibration).compute;
  // CNN training (small convolutions, normalization, data loading) reaches about a quarter of
  // tensor-core peak: ResNet-50 v1.5 with AMP trains at ~1,300 images/s on a V100 (NVIDIA
  // DeepLearningExamples), 3 x 8.2 GFLOPs each, 26% of 125 TFLOPS.
  if (hidden_size <= 0) return base * 0.45;
  return base * 1.03 * hidden_size / (hidden_size + 800.0);
}

namespace {

double nvlink_bytes_per_s(const Accelerator& a) {
  if (a.interconnect_gb_per_s && *a.interconnect_gb_per_s > 0) return *a.interconnect_gb_per_s / 2 * 1e9;
  int gen = a.pcie_gen.value_or(4);
  return 16e9 * std::pow(2.0, std::clamp(gen, 3, 6) - 3);
}

double model_flops_per_token(const ModelArch& arch, long long sequence) {
  ParamBreakdown p = count_params(arch);
  if (arch.kind == ModelKind::generic) return 3.0 * arch.flops_per_item;  // forward + 2x backward, per item
  double dense = p.active() - p.embedding + (arch.tied_embeddings ? p.embedding : 0);  // lookups are free
  // PaLM's count (Chowdhery et al. 2022, appendix B): 6N + 12 L h s.
  return 6.0 * dense + 12.0 * arch.num_layers * arch.q_dim() * static_cast<double>(sequence);
}

}  // namespace

TrainingEstimate estimate_training_layout(const TrainingJob& job, const TrainingHardware& hw, const TrainingLayout& layout,
                                          const Calibration* calibration, double usable_fraction) {
  TrainingEstimate e;
  e.layout = layout;
  const ModelArch& arch = *job.arch;
  const Accelerator& a = *hw.accelerator;
  const int tp = layout.tensor_parallel, pp = layout.pipeline_parallel, dp = layout.data_parallel;
  if (tp * pp * dp != hw.count) {
    e.reason = "layout does not use the devices";
    return e;
  }
  TrainingMemoryOptions memory;
  memory.precision = job.precision;
  memory.optimizer = job.optimizer;
  memory.zero_stage = layout.zero_stage;
  memory.data_parallel = dp;
  memory.tensor_parallel = tp;
  memory.pipeline_parallel = pp;
  memory.sequence_parallel = tp > 1;
  memory.recompute = layout.recompute;
  memory.micro_batch = layout.micro_batch;
  memory.sequence_length = arch.kind == ModelKind::generic ? 1 : job.sequence_length;
  MemoryEstimate m = estimate_training(arch, memory);
  e.memory_bytes_per_device = m.total_bytes_per_device;
  e.checkpoint_bytes = m.params * (precision_bytes(job.precision) + 4.0 + (job.optimizer == Optimizer::adamw ? 8.0 : 2.0));
  if (m.total_bytes_per_device > a.memory_bytes() * usable_fraction) {
    e.reason = fmt::format("needs {:.1f} GiB per device", m.total_bytes_per_device / (1u << 30));
    return e;
  }
  const double tokens_per_item = arch.kind == ModelKind::generic ? 1.0 : static_cast<double>(job.sequence_length);
  const double step_tokens = std::max(job.global_batch_tokens, tokens_per_item * layout.micro_batch * dp);
  const int micro_batches = std::max(1, static_cast<int>(std::round(step_tokens / (tokens_per_item * layout.micro_batch * dp))));
  e.layout.micro_batches = micro_batches;

  // Compute: model FLOPs plus recomputation (a full forward again, or the attention core).
  double model_flops = model_flops_per_token(arch, job.sequence_length);
  double recompute_factor = layout.recompute == Recompute::full ? 4.0 / 3.0 : layout.recompute == Recompute::selective ? 1.03 : 1.0;
  double peak = compute_peak_tflops(a, job.precision == Precision::fp32 ? Precision::tf32 : Precision::bf16) * 1e12;
  double efficiency = training_compute_efficiency(a, calibration, arch.kind == ModelKind::generic ? 0 : arch.hidden_size);
  double tokens_per_device = step_tokens / hw.count;
  e.compute_s = tokens_per_device * model_flops * recompute_factor / (peak * efficiency);

  const double act_bytes = precision_bytes(job.precision) >= 4 ? 4.0 : 2.0;
  const double network_efficiency = hw.fabric.empty() ? 0.5 : 0.8;
  if (arch.kind != ModelKind::generic && tp > 1) {
    // Four all-reduces (or reduce-scatter/all-gather pairs) per layer per micro-batch over NVLink.
    double bytes = static_cast<double>(layout.micro_batch) * job.sequence_length * arch.hidden_size * act_bytes;
    double per = 2.0 * (tp - 1) / tp * bytes / (nvlink_bytes_per_s(a) * 0.7) + 10e-6;
    double layers_here = std::ceil(static_cast<double>(arch.num_layers) / pp);
    e.tp_comm_s = 4.0 * layers_here * micro_batches * per;
  }
  // Interleaved 1F1B (Narayanan et al. 2021, sec. 2.2.2) with up to 4 model chunks per device:
  // the bubble is (p - 1) / (m x v).
  double layers_per_stage = std::ceil(static_cast<double>(arch.num_layers) / pp);
  double chunks = std::clamp(std::floor(layers_per_stage), 1.0, 4.0);
  e.bubble_s = pp > 1 ? (e.compute_s + e.tp_comm_s) * (pp - 1) / (static_cast<double>(micro_batches) * chunks) : 0;

  // Data parallel: reduce the gradients (ZeRO-3 also gathers the parameters: 1.5x the volume),
  // inside a node over NVLink, across nodes over the instance network; overlapped with most of
  // the backward pass.
  if (dp > 1) {
    double grad_bytes = m.params / (tp * pp) * act_bytes * (layout.zero_stage >= 3 ? 1.5 : 1.0);
    int per_node = std::max(1, hw.devices_per_node / (tp * pp));
    int dp_in_node = std::min(dp, per_node);
    int nodes = (dp + dp_in_node - 1) / dp_in_node;
    double intra = dp_in_node > 1 ? 2.0 * (dp_in_node - 1) / dp_in_node * grad_bytes / (nvlink_bytes_per_s(a) * 0.7) : 0;
    double node_bytes_per_s = hw.node_network_gbps / 8 * 1e9 * network_efficiency;
    if (hw.cross_zone) node_bytes_per_s *= 0.5;
    double inter = nodes > 1 ? 2.0 * (nodes - 1) / nodes * grad_bytes / node_bytes_per_s : 0;
    e.dp_comm_s = intra + inter;
    double backward = e.compute_s * 2.0 / 3.0;
    e.dp_exposed_s = std::max(0.0, e.dp_comm_s - 0.8 * backward);
    if (nodes > 1 && hw.fabric.empty())
      e.warnings.push_back(fmt::format("no EFA/InfiniBand-class fabric between the {} nodes: gradients cross a {:.0f} Gbps "
                                       "TCP network", nodes, hw.node_network_gbps));
    if (hw.cross_zone) e.warnings.push_back("nodes in different zones: the network is slower and billed for traffic");
  }
  // The optimizer step streams master weights and state (memory-bound).
  double optimizer_s = (m.master_weight_bytes + m.optimizer_bytes + m.weights_bytes) * 2.0 / (a.memory_gb_per_s * 1e9 * 0.8);
  e.step_time_s = e.compute_s + e.tp_comm_s + e.bubble_s + e.dp_exposed_s + optimizer_s;
  e.tokens_per_s = step_tokens / e.step_time_s;
  e.time_s = job.tokens / e.tokens_per_s;
  e.gpu_hours = e.time_s / 3600.0 * hw.count;
  e.mfu = model_flops * e.tokens_per_s / (peak * hw.count);
  double network = e.tp_comm_s + e.dp_exposed_s;
  e.bound = network > 0.25 * e.step_time_s ? "network" : "compute";
  if (e.bound == "network")
    e.warnings.push_back(fmt::format("network-bound: communication is {:.0f}% of each step", network / e.step_time_s * 100));
  e.feasible = true;
  return e;
}

TrainingEstimate estimate_training_run(const TrainingJob& job, const TrainingHardware& hw, const Calibration* calibration,
                                       double usable_fraction) {
  TrainingEstimate best;
  best.reason = "no layout fits in memory";
  const ModelArch& arch = *job.arch;
  int heads = arch.kind == ModelKind::generic ? 1 : arch.num_heads;
  int layers = arch.kind == ModelKind::generic ? 1 : arch.num_layers;
  for (int tp = 1; tp <= std::min(8, hw.devices_per_node); tp *= 2) {
    if (heads % tp != 0 || hw.count % tp != 0) continue;
    if (arch.kind == ModelKind::generic && tp > 1) continue;
    for (int pp = 1; pp <= layers && tp * pp <= hw.count; pp *= 2) {
      if (hw.count % (tp * pp) != 0) continue;
      int dp = hw.count / (tp * pp);
      for (int zero : {1, 3}) {
        for (Recompute recompute : {Recompute::none, Recompute::selective, Recompute::full}) {
          for (int micro : {1, 2, 4}) {
            if (dp == 1 && zero == 3) continue;  // ZeRO needs data parallelism
            TrainingLayout layout{tp, pp, dp, dp > 1 ? zero : 0, recompute, micro, 1};
            TrainingEstimate e = estimate_training_layout(job, hw, layout, calibration, usable_fraction);
            if (!e.feasible && micro > 1) break;  // larger micro-batches need more memory still
            if (e.feasible && (!best.feasible || e.time_s < best.time_s)) {
              best = e;
            } else if (!best.feasible && !e.reason.empty()) {
              best.reason = e.reason;
            }
          }
        }
      }
    }
  }
  return best;
}

}  // namespace gw
