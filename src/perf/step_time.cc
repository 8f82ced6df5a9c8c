#include "perf/step_time.h"

#include <algorithm>
#include <cmath>

#include "model/memory.h"
#include "perf/layer_operators.h"
#include "perf/mla_layer.h"

namespace gw {

namespace {

// Interconnect bandwidth per direction in bytes/s, and the latency of one all-reduce. PCIe x16
// per direction: gen3 16, gen4 32, gen5 64, gen6 128 GB/s (PCI-SIG).
void link(const Accelerator& a, double& bytes_per_s, double& latency_s) {
  if (a.interconnect_gb_per_s && *a.interconnect_gb_per_s > 0) {
    bytes_per_s = *a.interconnect_gb_per_s / 2 * 1e9;
    latency_s = 10e-6;
  } else {
    int gen = a.pcie_gen.value_or(4);
    bytes_per_s = 16e9 * std::pow(2.0, std::clamp(gen, 3, 6) - 3);
    latency_s = 25e-6;
  }
}

struct LayerShape {
  double attention_params_per_layer;  // device share
  double dense_mlp_params_per_layer;
  double expert_params_per_expert;    // one routed expert (device share)
  double moe_layers;
  double dense_layers;
};

double distinct_experts(const ModelArch& arch, double tokens) {
  // Expected experts hit when tokens each pick k of E at random.
  double e = arch.num_experts, k = arch.experts_per_token;
  return e * (1.0 - std::pow(1.0 - k / e, std::max(tokens, 0.0)));
}

// A routed expert's MLP: the layer's dimensions at the experts' width.
LayerDims routed_expert_dims(const ModelArch& arch, LayerDims dims) {
  dims.ffn = arch.moe_intermediate_size > 0 ? arch.moe_intermediate_size : arch.intermediate_size;
  return dims;
}

double weight_element_bytes(Precision precision, WeightFormat format = WeightFormat::plain) {
  if (precision == Precision::int4 || precision == Precision::fp4) return quantized_weight_bits(precision, format) / 8;
  if (precision == Precision::tf32) return 4;
  return precision_bytes(precision);
}

// MXFP4 on a MoE model quantizes its routed experts only: attention, shared experts, dense
// layers and the router stay bf16 (gpt-oss's checkpoints).
bool experts_only_quantized(const ModelArch& arch, const PerfSetup& setup) {
  return quantizes_experts_only(setup.weight_format, arch.is_moe());
}

// Bytes per weight of the layer matrices outside the routed experts.
double dense_weight_element_bytes(const ModelArch& arch, const PerfSetup& setup) {
  return experts_only_quantized(arch, setup) ? 2.0 : weight_element_bytes(setup.weight_precision, setup.weight_format);
}

StepTime finish(const ModelArch& arch, const PerfSetup& setup, double flops, double bytes, double network_bytes,
                int all_reduces) {
  const Accelerator& a = *setup.accelerator;
  StepTime t;
  t.flops = flops;
  t.bytes = bytes;
  bool eight_bit = compute_peak_tflops(a, setup.weight_precision) > compute_peak_tflops(a, Precision::bf16) * 1.01;
  double efficiency = eight_bit ? setup.efficiency.compute_8bit : setup.efficiency.compute;
  t.compute_s = flops / (compute_peak_tflops(a, setup.weight_precision) * 1e12 * efficiency);
  t.memory_s = bytes / (a.memory_gb_per_s * 1e9 * setup.efficiency.memory);
  if (setup.tensor_parallel > 1 && all_reduces > 0) {
    double bandwidth, latency;
    link(a, bandwidth, latency);
    double tp = setup.tensor_parallel;
    t.network_s = all_reduces * latency +
                  2.0 * (tp - 1) / tp * network_bytes / (bandwidth * setup.efficiency.network);
  }
  int layers = arch.kind == ModelKind::generic ? 50 : arch.num_layers;  // ~50 layers for a CNN
  t.overhead_s = layers * setup.efficiency.overhead_per_layer_s;
  double core = std::max(t.compute_s, t.memory_s);
  t.time_s = t.overhead_s + core + t.network_s;
  t.bound = t.network_s > core ? "network" : t.compute_s >= t.memory_s ? "compute" : "memory";
  return t;
}

}  // namespace

double compute_peak_tflops(const Accelerator& a, Precision weight_precision) {
  auto sixteen = a.peak(Precision::bf16) ? a.peak(Precision::bf16) : a.peak(Precision::fp16);
  std::optional<double> peak;
  switch (weight_precision) {
    case Precision::fp8: peak = a.peak(Precision::fp8) ? a.peak(Precision::fp8) : sixteen; break;
    case Precision::int8: peak = a.peak(Precision::int8) ? a.peak(Precision::int8) : sixteen; break;
    case Precision::fp4: peak = a.peak(Precision::fp4) ? a.peak(Precision::fp4) : sixteen; break;
    case Precision::fp32:
    case Precision::tf32: peak = a.peak(Precision::tf32) ? a.peak(Precision::tf32) : a.peak(Precision::fp32); break;
    default: peak = sixteen; break;
  }
  if (!peak) peak = a.peak(Precision::fp32);
  return peak.value_or(1.0);
}

bool uses_layer_operators(const ModelArch& arch, const PerfSetup& setup) {
  Precision w = setup.weight_precision;
  bool by_operator = w == Precision::bf16 || w == Precision::fp16 || w == Precision::fp8 || w == Precision::int8 ||
                     w == Precision::int4 || w == Precision::fp4;
  return setup.layer_operators && by_operator && arch.kind == ModelKind::decoder;
}

double layers_by_operator_s(const ModelArch& arch, const PerfSetup& setup, double tokens, int* measured, int* roofline) {
  const LayerOperatorModel& model = *setup.layer_operators;
  const std::string& device = setup.operator_device;
  const GemmPrecision precision = layer_gemm_precision(setup);  // the routed experts' on a MoE model
  // Everything but the routed experts: 16-bit where only the experts are quantized.
  const GemmPrecision dense_precision = experts_only_quantized(arch, setup) ? GemmPrecision{} : precision;
  const LayerDims dims = layer_dims(arch, setup.tensor_parallel);
  auto count = [&](const LayerOperatorModel::LayerTime& t) {
    if (measured) *measured += t.measured_operators;
    if (roofline) *roofline += t.roofline_operators;
  };
  if (measured) *measured = 0;
  if (roofline) *roofline = 0;
  if (!arch.is_moe() && !arch.mla) {
    auto layer = model.layer_time(device, dims, tokens, nullptr, precision);
    count(layer);
    return layer.time_s * arch.num_layers;
  }
  std::array<bool, kLayerOperators> attention_side{}, mlp_side{};
  for (int i = 0; i < kLayerOperators; ++i) {
    auto op = static_cast<LayerOperator>(i);
    bool mlp = op == LayerOperator::mlp_up_proj || op == LayerOperator::mlp_act || op == LayerOperator::mlp_down_proj;
    attention_side[i] = !mlp;
    mlp_side[i] = mlp;
  }
  double attention_s = 0;
  if (arch.mla) {
    attention_s = mla_attention_side_s(arch, setup, tokens, dense_precision, measured, roofline);
  } else {
    auto attention = model.layer_time(device, dims, tokens, &attention_side, dense_precision);
    count(attention);
    attention_s = attention.time_s;
  }
  if (!arch.is_moe()) {
    auto mlp = model.layer_time(device, dims, tokens, &mlp_side, precision);
    count(mlp);
    return (attention_s + mlp.time_s) * arch.num_layers;
  }
  // Routed experts: every expert some token picked, each at its share of the routed rows (as
  // measured or by the roofline), in one fused kernel per matrix (vLLM's fused_moe,
  // TensorRT-LLM's grouped GEMM): the GEMMs' launch is paid once, not once per expert, and one
  // activation runs over every routed row.
  const LayerDims expert = routed_expert_dims(arch, dims);
  const double hit = std::max(1.0, distinct_experts(arch, tokens));
  const double routed_rows = tokens * arch.experts_per_token;
  const OperatorRoofline& fitted = model.roofline(device);
  std::array<bool, kLayerOperators> gemms{}, act{};
  gemms[static_cast<size_t>(LayerOperator::mlp_up_proj)] = gemms[static_cast<size_t>(LayerOperator::mlp_down_proj)] = true;
  act[static_cast<size_t>(LayerOperator::mlp_act)] = true;
  auto per_expert = model.layer_time(device, expert, routed_rows / hit, &gemms, precision);
  count(per_expert);
  auto activation = model.layer_time(device, expert, routed_rows, &act, precision);
  count(activation);
  double moe_mlp_s = std::max(per_expert.time_s, hit * per_expert.time_s - (hit - 1) * 2 * fitted.gemm_launch_s) +
                     activation.time_s;
  if (arch.num_shared_experts > 0) {
    LayerDims shared = dims;
    shared.ffn = arch.shared_expert_intermediate_size > 0 ? arch.shared_expert_intermediate_size
                                                          : arch.num_shared_experts * expert.ffn;
    moe_mlp_s += model.layer_time(device, shared, tokens, &mlp_side, dense_precision).time_s;
  }
  OperatorShape router;  // every device scores every expert (16-bit)
  router.n = arch.num_experts;
  router.k = arch.hidden_size;
  moe_mlp_s += fitted.gemm_time_s(router, tokens);
  // Dispatch and combine: each token's hidden state is copied once per expert it is routed to
  // (read once, written k times) and the experts' outputs summed back (read k times, written
  // once), 16-bit, on every device in full: tensor parallelism splits the experts' matrices,
  // not the tokens. Two elementwise kernels at the residual add's fitted rate.
  OperatorShape moves;
  moves.bytes_per_token = 2.0 * arch.hidden_size * (1 + arch.experts_per_token);
  moe_mlp_s += 2 * fitted.time_s(LayerOperator::add, moves, tokens, arch.hidden_size);
  int moe_layers = 0;
  for (int layer = 0; layer < arch.num_layers; ++layer) moe_layers += arch.is_moe_layer(layer);
  double dense_mlp_s =
      moe_layers < arch.num_layers ? model.layer_time(device, dims, tokens, &mlp_side, dense_precision).time_s : 0.0;
  return attention_s * arch.num_layers + moe_mlp_s * moe_layers + dense_mlp_s * (arch.num_layers - moe_layers);
}

GemmPrecision layer_gemm_precision(const PerfSetup& setup) {
  GemmPrecision p = gemm_precision(*setup.accelerator, setup.weight_precision, setup.efficiency.operator_compute_8bit_scale);
  if (setup.weight_format == WeightFormat::mxfp4) p.weight_bytes = weight_element_bytes(setup.weight_precision, setup.weight_format);
  return p;
}

double layer_weight_bytes(const ModelArch& arch, const PerfSetup& setup) {
  ParamBreakdown p = count_params(arch);
  return (p.attention + p.mlp_dense) * dense_weight_element_bytes(arch, setup) / std::max(1, setup.tensor_parallel);
}

double expert_weight_element_bytes(const PerfSetup& setup) {
  return weight_element_bytes(setup.weight_precision, setup.weight_format);
}

StepTime llm_step(const ModelArch& arch, const PerfSetup& setup, double decode_sequences, double context_tokens,
                  double prefill_tokens, double prefill_sequences, double prefill_context) {
  const double tp = std::max(1, setup.tensor_parallel);
  ParamBreakdown p = count_params(arch);
  const double h = arch.hidden_size;
  const double tokens = decode_sequences + prefill_tokens;
  const double sequences_sampled = decode_sequences + prefill_sequences;
  const double w = dense_weight_element_bytes(arch, setup), w_expert = expert_weight_element_bytes(setup);
  const double high = setup.weight_precision == Precision::fp32 ? 4.0 : 2.0;

  // FLOPs: every token through every active layer matrix; the output head only for the tokens
  // that are sampled; attention over each token's context (causal within a prompt).
  double layer_active = p.attention + p.mlp_dense + p.mlp_shared + p.experts_active;
  double head = static_cast<double>(arch.vocab_size) * h;
  double flops = 2.0 * layer_active * tokens + 2.0 * head * sequences_sampled;
  double attention_width = arch.mla ? arch.num_heads * (arch.qk_nope_head_dim + arch.qk_rope_head_dim + arch.v_head_dim)
                                    : 2.0 * arch.q_dim();
  double window = arch.sliding_window ? *arch.sliding_window : 1e18;
  double sliding_share = 0;
  for (int layer = 0; layer < arch.num_layers; ++layer) sliding_share += arch.is_sliding_layer(layer);
  sliding_share /= std::max(1, arch.num_layers);
  auto attended = [&](double context) {
    return sliding_share * std::min(context, window) + (1 - sliding_share) * context;
  };
  double prefill_attended = prefill_sequences > 0 ? prefill_tokens * attended(prefill_context) / 2.0 : 0.0;
  flops += 2.0 * attention_width * arch.num_layers * (decode_sequences * attended(context_tokens) + prefill_attended);
  flops /= tp;

  // Bytes: the device's weights once per step (MoE: only the experts some token routed to),
  // the KV cache of every decoding sequence, and the new tokens' KV written.
  InferenceMemoryOptions kv_options;
  kv_options.tensor_parallel = setup.tensor_parallel;
  kv_options.kv_precision = setup.kv_precision;
  kv_options.batch = 1;
  kv_options.context = 1;
  double kv_per_token = estimate_inference(arch, kv_options).kv_cache_bytes_per_token;
  double weights = (p.attention + p.mlp_dense + p.mlp_shared) * w / tp + head * high / tp;
  if (arch.is_moe()) {
    int moe_layers = 0;
    for (int layer = 0; layer < arch.num_layers; ++layer) moe_layers += arch.is_moe_layer(layer);
    double per_expert_layer = p.mlp_experts / std::max(1, moe_layers) / arch.num_experts;
    weights += moe_layers * distinct_experts(arch, tokens) * per_expert_layer * w_expert / tp;
  }
  double bytes = weights + decode_sequences * attended(context_tokens) * kv_per_token + tokens * kv_per_token;

  // Two all-reduces per layer (after attention and after the MLP) of the step's activations.
  double network_bytes = 2.0 * arch.num_layers * tokens * h * 2.0;
  if (!uses_layer_operators(arch, setup)) return finish(arch, setup, flops, bytes, network_bytes, 2 * arch.num_layers);

  // By operator: the layers' per-token operators from measured tables or the fitted roofline,
  // attention by the roofline fitted to attention kernels' profiles, the output head as a GEMM;
  // the new tokens' KV writes by the whole-step roofline; the collectives as above.
  const LayerOperatorModel& model = *setup.layer_operators;  // NOLINT: checked by uses_layer_operators
  const OperatorRoofline& roofline = model.roofline(setup.operator_device);
  StepTime t = finish(arch, setup, 0, tokens * kv_per_token, network_bytes, 2 * arch.num_layers);
  LayerDims dims = layer_dims(arch, setup.tensor_parallel);
  if (tokens > 0) t.layer_operators_s = layers_by_operator_s(arch, setup, tokens, &t.measured_operators, &t.roofline_operators);
  const double layers = arch.num_layers;
  const double decode_kv_tokens = decode_sequences * attended(context_tokens);
  double decode_attention_s =
      setup.decode_attention_per_query_head
          ? layers * roofline.attention.decode_per_query_head_time_s(
                         decode_sequences, decode_kv_tokens, kv_per_token / layers,
                         precision_bytes(setup.kv_precision), dims.query_heads_per_kv_head(), roofline.bandwidth_bytes_per_s,
                         measured_l2_read_bytes_per_s(setup.accelerator->name))
          : layers * roofline.attention.decode_time_s(decode_sequences, decode_kv_tokens, kv_per_token / layers,
                                                      roofline.bandwidth_bytes_per_s);
  double prefill_attention_s =
      layers * roofline.attention.prefill_time_s(prefill_tokens, prefill_attended, arch.q_dim() / tp, roofline.peak_flops);
  t.attention_s = decode_attention_s + prefill_attention_s;
  if (sequences_sampled > 0) t.head_s = roofline.gemm_time_s(head_shape(arch, setup.tensor_parallel), sequences_sampled);
  t.overhead_s = layers * roofline.gemm_launch_s;
  t.flops = flops;
  t.bytes = bytes;
  double rest = std::max(t.compute_s, t.memory_s);
  t.time_s = t.layer_operators_s + t.attention_s + t.head_s + t.overhead_s + rest + t.network_s;
  // Whether the layers' largest GEMM runs compute-bound: the MLP's, or an expert's at its share.
  LayerDims mlp_dims = dims;
  double mlp_tokens = tokens;
  if (arch.is_moe()) {
    mlp_dims = routed_expert_dims(arch, dims);
    mlp_tokens = tokens * arch.experts_per_token / std::max(1.0, distinct_experts(arch, tokens));
  }
  bool layers_compute_bound = roofline.gemm_compute_bound(operator_shape(LayerOperator::mlp_up_proj, mlp_dims), mlp_tokens,
                                                          layer_gemm_precision(setup));
  double largest = std::max({t.layer_operators_s, t.attention_s, t.head_s, t.network_s});
  t.bound = largest == t.network_s          ? "network"
            : largest == t.layer_operators_s ? (layers_compute_bound ? "compute" : "memory")
            : largest == t.attention_s       ? (decode_attention_s >= prefill_attention_s ? "memory" : "compute")
                                             : "memory";  // the head: its matrix read for a few tokens
  return t;
}

OperatorShape head_shape(const ModelArch& arch, int tensor_parallel) {
  OperatorShape s;
  s.n = static_cast<double>(arch.vocab_size) / std::max(1, tensor_parallel);
  s.k = arch.hidden_size;
  return s;
}

StepTime prefill_step(const ModelArch& arch, const PerfSetup& setup, double batch, double prompt_tokens) {
  return llm_step(arch, setup, 0, 0, batch * prompt_tokens, batch, prompt_tokens);
}

StepTime decode_step(const ModelArch& arch, const PerfSetup& setup, double batch, double context_tokens) {
  return llm_step(arch, setup, batch, context_tokens, 0, 0, 0);
}

StepTime item_step(const ModelArch& arch, const PerfSetup& setup, double batch, double tokens_per_item) {
  const double tp = std::max(1, setup.tensor_parallel);
  ParamBreakdown p = count_params(arch);
  const double w = weight_element_bytes(setup.weight_precision, setup.weight_format);
  double act = setup.weight_precision == Precision::fp32 ? 4.0 : 2.0;
  if (arch.kind == ModelKind::generic) {
    double flops = batch * arch.flops_per_item / tp;
    double bytes = p.total() * w / tp + batch * arch.activation_bytes_per_item * act / 2.0 * 2.0;
    return finish(arch, setup, flops, bytes, 0, 0);
  }
  // Encoders: every token through every layer, attention over the whole sequence.
  double tokens = batch * tokens_per_item;
  double flops = 2.0 * p.quantizable() * tokens + 4.0 * arch.q_dim() * arch.num_layers * tokens * tokens_per_item;
  flops /= tp;
  double bytes = p.total() * w / tp + tokens * arch.hidden_size * act * 4.0 * arch.num_layers;
  double network_bytes = 2.0 * arch.num_layers * tokens * arch.hidden_size * 2.0;
  return finish(arch, setup, flops, bytes, network_bytes, 2 * arch.num_layers);
}

}  // namespace gw
