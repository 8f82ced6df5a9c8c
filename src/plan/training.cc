#include "plan/training.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "catalog/precision_support.h"
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

double recompute_flops_factor(Recompute recompute) {
  return recompute == Recompute::full ? 4.0 / 3.0 : recompute == Recompute::selective ? 1.03 : 1.0;
}

namespace {

// One direction of the device's NVLink/ICI, or its PCIe link when it has none.
double nvlink_bytes_per_s(const Accelerator& a) {
  if (a.interconnect_gb_per_s && *a.interconnect_gb_per_s > 0) return *a.interconnect_gb_per_s / 2 * 1e9;
  int gen = a.pcie_gen.value_or(4);
  return 16e9 * std::pow(2.0, std::clamp(gen, 3, 6) - 3);
}

bool fourth_generation_link(const Accelerator& a) {
  return a.interconnect == "nvlink4" || a.interconnect == "nvlink5" || a.interconnect == "ici";
}

// Fitted to NCCL all-reduce times measured on 2, 4 and 8 GPUs of a DGX A100 and a DGX H100, sizes
// 1 MiB to 64 MiB (Vidur 7d47513, data/profiles/vidur-7d47513/network/*_dgx/all_reduce.csv;
// copy and check in bench/profiles, src/plan/training_test.cc): t = latency + bus bytes /
// (efficiency x one-way link bandwidth). A100 (NVLink 3): 43-53 us, 163-171 GB/s of 300 (0.55);
// H100 (NVLink 4): 23-31 us, 316-358 GB/s of 450 (0.70-0.80; 0.78 at 8 GPUs).
double nvlink_bus_efficiency(const Accelerator& a) { return fourth_generation_link(a) ? 0.78 : 0.55; }
double nvlink_latency_s(const Accelerator& a) { return fourth_generation_link(a) ? 30e-6 : 50e-6; }

// Share of a node's NIC line rate NCCL reaches: ~80% over RDMA fabrics (EFA, InfiniBand, RoCE,
// GPUDirect-TCPX), ~50% over plain TCP sockets (NCCL's socket transport).
double network_efficiency(const TrainingHardware& hw) { return hw.fabric.empty() ? 0.5 : 0.8; }
double network_latency_s(const TrainingHardware& hw) { return hw.fabric.empty() ? 50e-6 : 10e-6; }

// Time a collective of `total_s` split into `buckets` (one per bucket of gradients or
// parameters, ready one after another over `window_s` of compute) adds to the step: the last
// bucket's share, or all that does not fit in the window.
double exposed_s(double total_s, double window_s, int buckets) {
  if (total_s <= 0) return 0;
  double n = std::max(1, buckets);
  return std::max(total_s / n, total_s - window_s * (n - 1) / n);
}

double model_flops_per_token(const ModelArch& arch, long long sequence) {
  ParamBreakdown p = count_params(arch);
  if (arch.kind == ModelKind::generic) return 3.0 * arch.flops_per_item;  // forward + 2x backward, per item
  double dense = p.active() - p.embedding + (arch.tied_embeddings ? p.embedding : 0);  // lookups are free
  // PaLM's count (Chowdhery et al. 2022, appendix B): 6N + 12 L h s.
  return 6.0 * dense + 12.0 * arch.num_layers * arch.q_dim() * static_cast<double>(sequence);
}

// Where the layout's ranks sit (Megatron's order: tensor-parallel ranks adjacent, then data-
// parallel, then pipeline stages): tp inside a node, as many data-parallel ranks as fit beside
// them, pipeline stages filling the rest.
struct Placement {
  bool ok = false;
  int devices_per_node = 1, nodes = 1, dp_in_node = 1, pp_in_node = 1;
  int dp_nodes = 1, pp_nodes = 1;  // nodes a data-parallel ring spans; pipeline segments across nodes
};

Placement place(const TrainingHardware& hw, int tp, int pp, int dp) {
  Placement p;
  p.devices_per_node = std::max(1, std::min(hw.devices_per_node, hw.count));
  p.nodes = (hw.count + p.devices_per_node - 1) / p.devices_per_node;
  const int g = p.devices_per_node;
  if (tp > g || g % tp != 0) return p;  // tensor parallelism stays inside a node
  int beside = g / tp;
  if (dp >= beside) {
    if (dp % beside != 0) return p;
    p.dp_in_node = beside;
    p.pp_in_node = 1;
  } else {
    if (beside % dp != 0 || pp % (beside / dp) != 0) return p;
    p.dp_in_node = dp;
    p.pp_in_node = beside / dp;
  }
  p.dp_nodes = dp / p.dp_in_node;
  p.pp_nodes = pp / p.pp_in_node;
  p.ok = true;
  return p;
}

}  // namespace

double critical_batch_tokens(const ModelArch& arch, double tokens, long long sequence_length) {
  if (arch.kind == ModelKind::generic) return 256;
  const double compute_flops = model_flops_per_token(arch, sequence_length) * std::max(tokens, 1.0);
  const double batch = 0.2920 * std::pow(compute_flops, 0.3271);
  const double sequence = static_cast<double>(std::max(1LL, sequence_length));
  return std::max(1.0, std::round(batch / sequence)) * sequence;
}

double global_batch_tokens_of(const TrainingJob& job) {
  return job.global_batch_tokens > 0 ? job.global_batch_tokens : critical_batch_tokens(*job.arch, job.tokens, job.sequence_length);
}

double data_parallel_bytes_per_rank(double shard_bytes, int ranks, int zero_stage, int micro_batches) {
  if (ranks <= 1 || shard_bytes <= 0) return 0;
  double ring = static_cast<double>(ranks - 1) / ranks;
  if (zero_stage >= 3) return 3.0 * ring * shard_bytes * std::max(1, micro_batches);
  return 2.0 * ring * shard_bytes;
}

double intra_node_collective_s(const Accelerator& a, double bus_bytes) {
  if (bus_bytes <= 0) return 0;
  return nvlink_latency_s(a) + bus_bytes / (nvlink_bytes_per_s(a) * nvlink_bus_efficiency(a));
}

namespace {

// Training's FP8 GEMMs (thousands of tokens per micro-batch, the widest layers) reach more of
// the FP8 peak than the prefill GEMMs the 8-bit factor was set from: 1.31x that factor, fitted
// on the fit half of bench/training_measurements.csv (NVIDIA's published H100/B200 FP8
// throughputs; the held-out half checks it). On an H100 at h = 8192: ~0.49 of FP8 peak.
double fp8_training_gemm_flops_per_s(const Accelerator& a, const Calibration* calibration, double width) {
  const double training_fp8_gain = 1.31;
  double scale = width > 0 ? 1.03 * width / (width + 800.0) : 0.45;
  return compute_peak_tflops(a, Precision::fp8) * 1e12 *
         std::min(1.0, efficiency_for(a, calibration).compute_8bit * training_fp8_gain) * scale;
}

// What the data-parallel reduction of one step works with.
struct DataParallelStep {
  double shard_bytes = 0;     // one tensor- and pipeline-parallel shard's gradients
  int reduce_ranks = 1;       // data- x context-parallel ranks
  int micro_batches = 1;
  double layers_here = 1;     // layers per pipeline stage
  double forward_per_micro_s = 0, backward_per_micro_s = 0;
  double node_bytes_per_s = 0;
};

// Data parallel, hierarchical as NCCL runs it: reduce inside the node over NVLink, across
// nodes over the network, where each node carries one ring for every tensor- and pipeline-
// parallel shard it holds (tp x stages in the node), all at once.
void add_data_parallel_time(TrainingEstimate& e, const TrainingHardware& hw, const TrainingLayout& layout,
                            const Placement& placement, const DataParallelStep& step) {
  const Accelerator& a = *hw.accelerator;
  e.dp_rank_bytes = data_parallel_bytes_per_rank(step.shard_bytes, step.reduce_ranks, layout.zero_stage, step.micro_batches);
  double intra = placement.dp_in_node > 1
                     ? intra_node_collective_s(a, data_parallel_bytes_per_rank(step.shard_bytes, placement.dp_in_node,
                                                                               layout.zero_stage, step.micro_batches))
                     : 0.0;
  double inter = 0;
  if (placement.dp_nodes > 1) {
    e.dp_node_bytes = static_cast<double>(layout.tensor_parallel) * placement.pp_in_node *
                      data_parallel_bytes_per_rank(step.shard_bytes, placement.dp_nodes, layout.zero_stage, step.micro_batches);
    inter = e.dp_node_bytes / step.node_bytes_per_s + 2.0 * std::log2(placement.dp_nodes) * network_latency_s(hw);
  }
  e.dp_comm_s = std::max(intra, inter);  // pipelined bucket by bucket: the slower level sets the pace
  // Buckets of ~25 MB or a layer, whichever is more: their collectives start as the backward
  // pass reaches them. ZeRO-0 reduces in the last micro-batch's backward; ZeRO-1/2 reduce-
  // scatter there and all-gather the new parameters during the next step's first forward;
  // ZeRO-3 gathers in every forward and backward and reduce-scatters every micro-batch.
  int buckets = static_cast<int>(std::clamp(std::ceil(step.shard_bytes / 25e6), 1.0, std::max(1.0, step.layers_here)));
  if (layout.zero_stage >= 3) {
    double per_micro = e.dp_comm_s / step.micro_batches;
    e.dp_exposed_s = step.micro_batches * (exposed_s(per_micro / 3, step.forward_per_micro_s, buckets) +
                                      exposed_s(per_micro * 2 / 3, step.backward_per_micro_s, buckets));
  } else if (layout.zero_stage >= 1) {
    e.dp_exposed_s = exposed_s(e.dp_comm_s / 2, step.backward_per_micro_s, buckets) +
                     exposed_s(e.dp_comm_s / 2, step.forward_per_micro_s, buckets);
  } else {
    e.dp_exposed_s = exposed_s(e.dp_comm_s, step.backward_per_micro_s, buckets);
  }
  if (placement.dp_nodes > 1 && hw.fabric.empty())
    e.warnings.push_back(fmt::format("no EFA/InfiniBand-class fabric between the {} nodes: gradients cross a {:.0f} Gbps "
                                     "TCP network", placement.nodes, hw.node_network_gbps));
}

}  // namespace

TrainingEstimate estimate_training_layout(const TrainingJob& job, const TrainingHardware& hw, const TrainingLayout& layout,
                                          const Calibration* calibration, double usable_fraction) {
  TrainingEstimate e;
  e.layout = layout;
  const ModelArch& arch = *job.arch;
  const Accelerator& a = *hw.accelerator;
  const int tp = layout.tensor_parallel, pp = layout.pipeline_parallel, dp = layout.data_parallel;
  const int cp = std::max(1, layout.context_parallel);
  if (tp * pp * dp * cp != hw.count) {
    e.reason = "layout does not use the devices";
    return e;
  }
  // Context-parallel ranks split each sequence and otherwise act as data-parallel ones: their
  // gradients are reduced and their optimizer state sharded together.
  const int reduce_ranks = dp * cp;
  const Placement placement = place(hw, tp, pp, reduce_ranks);
  if (!placement.ok) {
    e.reason = fmt::format("tp{} pp{} dp{} does not map onto nodes of {} devices", tp, pp, dp, hw.devices_per_node);
    return e;
  }
  e.nodes = placement.nodes;
  // The global batch is the batch run: data-parallel ranks x micro-batch x micro-batches of whole
  // sequences, at most 5% below what was asked (never above: a bigger batch flatters throughput
  // and changes the training recipe).
  const double tokens_per_item = arch.kind == ModelKind::generic ? 1.0 : static_cast<double>(job.sequence_length);
  const double asked_tokens = global_batch_tokens_of(job);
  const double batch_items = std::max(1.0, std::floor(asked_tokens / tokens_per_item + 1e-9));
  const double items_per_pass = static_cast<double>(layout.micro_batch) * dp;
  if (items_per_pass > batch_items) {
    e.reason = fmt::format("{} data-parallel ranks x micro-batch {} take {:.0f} sequences per step, more than the global batch of {:.0f}",
                           dp, layout.micro_batch, items_per_pass, batch_items);
    return e;
  }
  const int micro_batches = static_cast<int>(std::floor(batch_items / items_per_pass));
  const double step_tokens = micro_batches * items_per_pass * tokens_per_item;
  if (step_tokens < 0.95 * batch_items * tokens_per_item) {
    e.reason = fmt::format("{} data-parallel ranks x micro-batch {} divide the global batch of {:.0f} sequences only into {:.0f} "
                           "({:.1f}% less)", dp, layout.micro_batch, batch_items, micro_batches * items_per_pass,
                           (1 - micro_batches * items_per_pass / batch_items) * 100);
    return e;
  }
  e.global_batch_tokens = step_tokens;
  if (auto why = unsupported_precision(a, job.precision, PrecisionEngine::training)) {
    e.reason = *why;
    return e;
  }
  TrainingMemoryOptions memory;
  memory.precision = job.precision;
  memory.optimizer = job.optimizer;
  memory.zero_stage = layout.zero_stage;
  memory.data_parallel = reduce_ranks;
  memory.tensor_parallel = tp;
  memory.pipeline_parallel = pp;
  memory.sequence_parallel = tp > 1;
  memory.recompute = layout.recompute;
  memory.micro_batch = layout.micro_batch;
  memory.sequence_length = arch.kind == ModelKind::generic ? 1 : std::max(1LL, job.sequence_length / cp);
  MemoryEstimate m = estimate_training(arch, memory);
  e.memory_bytes_per_device = m.total_bytes_per_device;
  const double weight_bytes = job.precision == Precision::fp32 ? 4.0 : 2.0;  // bf16 weights under FP8 too
  e.checkpoint_bytes = m.params * (weight_bytes + 4.0 + (job.optimizer == Optimizer::adamw ? 8.0 : 2.0));
  if (m.total_bytes_per_device > a.memory_bytes() * usable_fraction) {
    e.reason = fmt::format("needs {:.1f} GiB per device", m.total_bytes_per_device / (1u << 30));
    return e;
  }
  e.layout.micro_batches = micro_batches;
  const double layers_here = arch.kind == ModelKind::generic ? 1.0 : std::ceil(static_cast<double>(arch.num_layers) / pp);

  // Compute: the GEMMs at the precision's rate, attention's score and context products (which
  // flash attention runs in bf16 also under FP8) at the 16-bit rate; recomputation redoes a
  // forward pass (full) or the attention core (selective).
  const double model_flops = model_flops_per_token(arch, job.sequence_length);
  const double attention_flops =
      arch.kind == ModelKind::generic ? 0.0 : 12.0 * arch.num_layers * arch.q_dim() * static_cast<double>(job.sequence_length);
  const double recompute_factor = recompute_flops_factor(layout.recompute);
  const double peak16 = compute_peak_tflops(a, job.precision == Precision::fp32 ? Precision::tf32 : Precision::bf16) * 1e12;
  const double width = arch.kind == ModelKind::generic ? 0 : arch.hidden_size;
  const double efficiency16 = training_compute_efficiency(a, calibration, width);
  const double gemm_rate = job.precision == Precision::fp8 ? fp8_training_gemm_flops_per_s(a, calibration, width)
                                                           : peak16 * efficiency16;
  const double tokens_per_device = step_tokens / hw.count;
  e.compute_s = tokens_per_device * recompute_factor *
                ((model_flops - attention_flops) / gemm_rate + attention_flops / (peak16 * efficiency16));
  // Of that, the backward pass: 2/3 of the model's work plus the recomputed forward.
  const double backward_share = (2.0 / 3.0 + (recompute_factor - 1.0)) / recompute_factor;
  const double backward_per_micro_s = e.compute_s * backward_share / micro_batches;
  const double forward_per_micro_s = e.compute_s * (1 - backward_share) / micro_batches;

  const double act_bytes = job.precision == Precision::fp32 ? 4.0 : 2.0;
  const double local_sequence = static_cast<double>(job.sequence_length) / cp;
  double node_bytes_per_s = hw.node_network_gbps / 8 * 1e9 * network_efficiency(hw);
  if (hw.cross_zone) node_bytes_per_s *= 0.5;
  e.network_bytes_per_s = node_bytes_per_s;
  if (arch.kind != ModelKind::generic && tp > 1) {
    // Two all-reduces (or all-gather/reduce-scatter pairs with sequence parallelism) per layer
    // in forward, two in backward, two more when the forward is recomputed; not overlapped.
    double bytes = static_cast<double>(layout.micro_batch) * local_sequence * arch.hidden_size * act_bytes;
    double per = intra_node_collective_s(a, 2.0 * (tp - 1) / tp * bytes);
    double collectives = layout.recompute == Recompute::full ? 6.0 : 4.0;
    e.tp_comm_s = collectives * layers_here * micro_batches * per;
  }
  // Interleaved 1F1B (Narayanan et al. 2021, sec. 2.2.2) with up to 4 model chunks per device:
  // the bubble is (p - 1) / (m x v).
  const double chunks = pp > 1 ? std::clamp(std::floor(layers_here), 1.0, 4.0) : 1.0;
  if (pp > 1 && arch.kind != ModelKind::generic) {
    // Each micro-batch sends its activations forward and their gradients back at every chunk
    // boundary; tensor-parallel ranks send 1/tp each (scatter-gather). Across nodes, every
    // tensor- and data-parallel rank of the node sends through the same NICs.
    double bytes = static_cast<double>(layout.micro_batch) * local_sequence * arch.hidden_size * act_bytes / tp;
    double per = placement.pp_nodes > 1
                     ? network_latency_s(hw) + bytes * tp * placement.dp_in_node / node_bytes_per_s
                     : nvlink_latency_s(a) + bytes / (nvlink_bytes_per_s(a) * nvlink_bus_efficiency(a));
    e.pp_comm_s = 2.0 * chunks * micro_batches * per;
  }
  e.bubble_s = pp > 1 ? (e.compute_s + e.tp_comm_s + e.pp_comm_s) * (pp - 1) / (static_cast<double>(micro_batches) * chunks) : 0;

  if (cp > 1 && arch.kind != ModelKind::generic) {
    // Ring attention passes each rank's keys and values around the cp ranks in forward and their
    // gradients back in backward, overlapped with the attention blocks it feeds: only what the
    // attention compute cannot hide counts. The ring stays inside a node when tp x cp fits.
    double kv = static_cast<double>(layout.micro_batch) * local_sequence * 2.0 * arch.kv_dim() * act_bytes / tp;
    double ring = 3.0 * (cp - 1) * kv;  // forward once, backward twice (values and gradients)
    bool across = tp * cp > placement.devices_per_node;
    double ring_s = across ? ring * tp * placement.dp_in_node / node_bytes_per_s
                           : ring / (nvlink_bytes_per_s(a) * nvlink_bus_efficiency(a));
    double attention_s = tokens_per_device * recompute_factor * attention_flops / (peak16 * efficiency16) / micro_batches;
    e.cp_comm_s = micro_batches * layers_here * std::max(0.0, ring_s - attention_s / std::max(1.0, static_cast<double>(arch.num_layers)));
  }
  if (reduce_ranks > 1) {
    DataParallelStep step{m.params / (tp * pp) * act_bytes, reduce_ranks, micro_batches, layers_here, forward_per_micro_s,
                          backward_per_micro_s, node_bytes_per_s};
    add_data_parallel_time(e, hw, layout, placement, step);
  }
  if (hw.cross_zone && placement.nodes > 1)
    e.warnings.push_back("nodes in different zones: half the network bandwidth, and the traffic is billed");
  // The optimizer step streams master weights and state (memory-bound).
  e.optimizer_s = (m.master_weight_bytes + m.optimizer_bytes + m.weights_bytes) * 2.0 / (a.memory_gb_per_s * 1e9 * 0.8);
  e.step_time_s = e.compute_s + e.tp_comm_s + e.cp_comm_s + e.pp_comm_s + e.bubble_s + e.dp_exposed_s + e.optimizer_s;
  e.tokens_per_s = step_tokens / e.step_time_s;
  e.time_s = job.tokens / e.tokens_per_s;
  e.gpu_hours = e.time_s / 3600.0 * hw.count;
  e.mfu = model_flops * e.tokens_per_s / (peak16 * hw.count);
  double network = e.tp_comm_s + e.cp_comm_s + e.pp_comm_s + e.dp_exposed_s;
  e.bound = network > 0.25 * e.step_time_s ? "network" : "compute";
  if (e.bound == "network")
    e.warnings.push_back(fmt::format("network-bound: communication is {:.0f}% of each step", network / e.step_time_s * 100));
  e.feasible = true;
  return e;
}

namespace {

std::string layout_text(const TrainingLayout& l) {
  return fmt::format("tp{} pp{} dp{} ZeRO-{} recompute {} micro-batch {}", l.tensor_parallel, l.pipeline_parallel,
                     l.data_parallel, l.zero_stage, recompute_name(l.recompute), l.micro_batch);
}

// Which part of the step made `worse` slower than `better`.
std::string why_slower(const TrainingEstimate& worse, const TrainingEstimate& better) {
  std::pair<double, const char*> parts[] = {
      {worse.compute_s - better.compute_s, "compute (recomputation or GEMM rate)"},
      {worse.tp_comm_s - better.tp_comm_s, "tensor-parallel collectives"},
      {worse.cp_comm_s - better.cp_comm_s, "context-parallel ring"},
      {worse.pp_comm_s - better.pp_comm_s, "pipeline sends"},
      {worse.bubble_s - better.bubble_s, "pipeline bubble"},
      {worse.dp_exposed_s - better.dp_exposed_s, "exposed data-parallel traffic"},
      {worse.optimizer_s - better.optimizer_s, "optimizer step"}};
  auto most = std::max_element(std::begin(parts), std::end(parts),
                               [](const auto& x, const auto& y) { return x.first < y.first; });
  return fmt::format("{:+.2f} s of {}", most->first, most->second);
}

}  // namespace

TrainingEstimate estimate_training_run(const TrainingJob& job, const TrainingHardware& hw, const Calibration* calibration,
                                       double usable_fraction) {
  TrainingEstimate best, second;
  best.reason = "no layout fits in memory";
  const ModelArch& arch = *job.arch;
  int heads = arch.kind == ModelKind::generic ? 1 : arch.num_heads;
  int layers = arch.kind == ModelKind::generic ? 1 : arch.num_layers;
  std::vector<Recompute> recomputes = {Recompute::none, Recompute::selective, Recompute::full};
  if (job.recompute) recomputes = {*job.recompute};
  for (int tp = 1; tp <= std::min(8, hw.devices_per_node); tp *= 2) {
    if (heads % tp != 0 || hw.count % tp != 0) continue;
    if (arch.kind == ModelKind::generic && tp > 1) continue;
    for (int pp = 1; pp <= layers && tp * pp <= hw.count; pp *= 2) {
      if (hw.count % (tp * pp) != 0) continue;
      int dp = hw.count / (tp * pp);
      std::vector<int> zeros = {0, 1, 2, 3};
      if (job.zero_stage) zeros = {*job.zero_stage};
      for (int zero : zeros) {
        if (dp == 1 && zero > 0 && !job.zero_stage) continue;  // ZeRO shards over data parallelism
        for (Recompute recompute : recomputes) {
          for (int micro : {1, 2, 4, 8}) {
            TrainingLayout layout{tp, pp, dp, zero, recompute, micro, 1};
            TrainingEstimate e = estimate_training_layout(job, hw, layout, calibration, usable_fraction);
            if (!e.feasible && micro > 1) break;  // larger micro-batches need more memory still
            if (e.feasible && (!best.feasible || e.time_s < best.time_s)) {
              if (best.feasible) second = best;
              best = e;
            } else if (e.feasible && (!second.feasible || e.time_s < second.time_s)) {
              second = e;
            } else if (!best.feasible && !e.reason.empty()) {
              best.reason = e.reason;
            }
          }
        }
      }
    }
  }
  if (best.feasible && second.feasible)
    best.runner_up = fmt::format("{}: step {:.2f} s ({:+.1f}%), {}", layout_text(second.layout), second.step_time_s,
                                 (second.step_time_s / best.step_time_s - 1) * 100, why_slower(second, best));
  return best;
}

}  // namespace gw
