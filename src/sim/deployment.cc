#include "sim/deployment.h"

#include "perf/layer_operators.h"

#include <cmath>
#include <fmt/format.h>

#include "model/memory.h"
#include "model/presets.h"
#include "perf/step_time.h"

namespace gw {

namespace {

// One direction of a PCIe x16 link: 8, 16, 32 GT/s per lane for gen 3, 4, 5 with 128b/130b
// coding (PCI-SIG base specifications 3.0, 4.0, 5.0), 15.75, 31.5, 63 GB/s; gen 6 doubles gen 5.
double pcie_x16_bytes_per_s(int generation) {
  double gt_per_s = generation <= 3 ? 8 : generation == 4 ? 16 : generation == 5 ? 32 : 64;
  return gt_per_s * 1e9 * 16 * 128.0 / 130.0 / 8;
}

// The link a prefill replica sends KV over, per GPU (one direction). InfiniBand, EFA and RoCE:
// 400 Gb/s per GPU (a ConnectX-7 per H100 in NVIDIA's DGX H100 datasheet; p5.48xlarge's 3,200 Gbps
// of EFA over 8 GPUs, AWS EC2 accelerated instance specifications; read 2026-12-04); NVLink: the
// accelerator's interconnect from the catalog, half its bidirectional aggregate (prefill and
// decode replicas in one NVLink domain); TCP: 100 Gb/s for the node, over its 8 GPUs.
double kv_link_gbps_per_gpu(const DisaggregationSpec& d, const Accelerator& a) {
  if (d.gbps_per_gpu) return *d.gbps_per_gpu;
  if (d.link == "nvlink" && a.interconnect_gb_per_s) return *a.interconnect_gb_per_s * 8 / 2;
  if (d.link == "tcp") return 100.0 / 8;
  return 400;
}

}  // namespace

Result<std::vector<ReplicaConfig>> build_replicas(const Catalog& catalog, const ModelSpec& model,
                                                  const ServiceSpec& service, const Deployment& deployment,
                                                  const ReplicaBuildOptions& options) {
  const ModelArch& arch = model.arch;
  const bool llm = arch.kind == ModelKind::decoder;
  auto batching = parse_sim_batching(deployment.batching.empty() ? (llm ? "continuous" : "dynamic") : deployment.batching);
  if (!batching) return Error{"", deployment.line, "deployment.batching", "unknown batching"};
  std::vector<ReplicaConfig> replicas;
  for (const auto& group : deployment.groups) {
    auto named = catalog.accelerator_named(group.accelerator);
    if (!named.ok()) return Error{"", deployment.line, "deployment.accelerator", named.error().message};
    const Accelerator* accelerator = named.value();
    if (arch.kind != ModelKind::generic && arch.num_heads % group.tensor_parallel != 0)
      return Error{"", deployment.line, "deployment.tp",
                   fmt::format("{} attention heads are not divisible by tp {}", arch.num_heads, group.tensor_parallel)};
    const int pp = std::max(1, group.pipeline_parallel);
    if (pp > 1 && deployment.speculative)
      return Error{"", deployment.line, "deployment.pp", "speculative decoding beside pipeline parallelism is not simulated"};
    ReplicaConfig c;
    c.name = fmt::format("{} tp{}{}", accelerator->name, group.tensor_parallel, pp > 1 ? fmt::format(" pp{}", pp) : "");
    c.batching = *batching;
    c.max_batch = deployment.max_batch > 0 ? deployment.max_batch : (llm ? 256 : 32);
    c.max_queue_delay_s = deployment.max_queue_delay_s;
    c.batch_timeout_s = deployment.batch_timeout_s;
    c.token_budget = deployment.token_budget;
    c.scheduler = deployment.scheduler.empty()
                      ? (deployment.chunked_prefill ? LlmScheduler::vllm_v1 : LlmScheduler::vllm_v0)
                      : *parse_llm_scheduler(deployment.scheduler);
    c.preemption = *parse_preemption(deployment.preemption);
    c.prefix_caching = deployment.prefix_cache == "off"  ? PrefixCaching::off
                       : deployment.prefix_cache == "kv" ? PrefixCaching::in_kv
                                                         : PrefixCaching::own_room;
    c.prefix_room_tokens = deployment.prefix_cache_tokens;
    // vLLM v0's block manager keeps 1% free at admission (watermark=0.01); V1 has no watermark.
    c.watermark_fraction = deployment.watermark_fraction.value_or(c.scheduler == LlmScheduler::vllm_v1 ? 0.0 : 0.01);
    const double usable_fraction = deployment.gpu_memory_utilization.value_or(options.usable_fraction);
    const double overhead_gib = deployment.overhead_gib.value_or(options.overhead_gib);
    PerfSetup setup;
    setup.accelerator = accelerator;
    setup.tensor_parallel = group.tensor_parallel;
    setup.weight_precision = model.precision;
    setup.weight_format = model.weight_format;
    setup.kv_precision = model.precision == Precision::fp8 ? Precision::fp8 : Precision::bf16;
    setup.efficiency = efficiency_for(*accelerator, options.calibration);
    use_layer_operators(setup, options.calibration);
    InferenceMemoryOptions memory;
    memory.weight_precision = model.precision;
    memory.weight_format = model.weight_format;
    memory.kv_precision = setup.kv_precision;
    memory.tensor_parallel = group.tensor_parallel;
    memory.pipeline_parallel = pp;
    memory.overhead_gib = overhead_gib;
    memory.prefill_chunk_tokens = deployment.token_budget;
    if (llm) {
      memory.batch = c.max_batch;
      memory.context = deployment.token_budget;
      MemoryEstimate e = estimate_inference(arch, memory);
      double free = accelerator->memory_bytes() * usable_fraction - e.weights_bytes - e.activation_bytes -
                    e.overhead_bytes;
      if (free <= 0)
        return Error{"", deployment.line, "deployment.accelerator",
                     fmt::format("{} does not fit on {} x {} ({:.1f} GiB of weights per device)", arch.name,
                                 group.tensor_parallel * pp, accelerator->name, e.weights_bytes / (1u << 30))};
      c.llm = std::make_shared<LlmStepModel>(arch, setup);
      c.block_tokens = 16;
      double kv_bytes_per_token = c.llm->kv_bytes_per_token();
      if (const auto& sp = deployment.speculative) {
        c.speculative.tokens = sp->tokens;
        c.speculative.acceptance = sp->acceptance;
        if (sp->method == "draft") {
          // The draft runs beside the model on the same devices and layout: its weights and its
          // own KV for every token come out of the cache.
          auto draft_arch = load_preset(sp->draft_model);
          if (!draft_arch.ok())
            return Error{"", sp->line, "deployment.speculative.draft_model", draft_arch.error().message};
          MemoryEstimate d = estimate_inference(draft_arch.value(), memory);
          free -= d.weights_bytes;
          // The step model keeps a pointer to its architecture: the replica owns it.
          c.speculative.draft_arch = std::make_shared<const ModelArch>(draft_arch.value());
          auto draft = std::make_shared<LlmStepModel>(*c.speculative.draft_arch, setup);
          kv_bytes_per_token += draft->kv_bytes_per_token();
          c.speculative.draft = std::move(draft);
          if (free <= 0)
            return Error{"", sp->line, "deployment.speculative.draft_model",
                         fmt::format("{} and its draft {} leave no room for a KV cache on {} x {}", arch.name,
                                     draft_arch.value().name, group.tensor_parallel, accelerator->name)};
        } else if (sp->method == "eagle" || sp->method == "mtp") {
          // One proposal: one decoder layer on the model's last hidden state (EAGLE's head, an MTP
          // module), its LM-head pass not counted.
          c.speculative.head_share = 1.0 / std::max(1, arch.num_layers);
        }
      }
      // Pipeline stages: a device holds its stage's layers of every token's KV, and the
      // replica's blocks are shared out evenly among its pp micro-batch lanes (below).
      const double stage_share = std::ceil(static_cast<double>(std::max(1, arch.num_layers)) / pp) / std::max(1, arch.num_layers);
      // Sliding-window layers keep only their window's blocks (vLLM V1's hybrid allocator), so
      // blocks are counted per layer group where vLLM runs it; not beside a draft model, whose KV
      // is in every block here.
      if (!c.speculative.draft && hybrid_kv_cache_manager(accelerator->vendor, deployment.disaggregation.has_value()))
        c.kv_groups = kv_layer_groups(arch, c.block_tokens);
      const int groups = c.kv_groups.groups();
      c.kv_blocks = static_cast<long long>(free / (kv_bytes_per_token * stage_share * pp * c.block_tokens)) * groups;
      // Speculative decoding writes k proposed tokens per sequence before verifying them (vLLM's
      // lookahead slots): a full batch's worth is set aside.
      if (deployment.speculative)
        c.kv_blocks = std::max(0LL, c.kv_blocks - (static_cast<long long>(c.max_batch) * deployment.speculative->tokens + c.block_tokens - 1) /
                                                      c.block_tokens * groups);
      if (const auto& dis = deployment.disaggregation) {
        c.role = group.role == "prefill" ? ReplicaRole::prefill : group.role == "decode" ? ReplicaRole::decode : ReplicaRole::both;
        if (c.role != ReplicaRole::both) c.name += " " + group.role;
        c.kv_bytes_per_token_replica = c.llm->kv_bytes_per_token() * group.tensor_parallel;
        c.layers = std::max(1, arch.num_layers);
        c.kv_link_bytes_per_s = kv_link_gbps_per_gpu(*dis, *accelerator) * 1e9 / 8 * group.tensor_parallel;
        if (dis->pulled_between_steps()) {
          c.kv_pulled_between_steps = true;
          c.kv_pull_call_s = kEngineWorkerCallS;
        }
      }
      c.max_sequence_tokens = arch.max_position_embeddings > 0 ? arch.max_position_embeddings : 4096;
      c.swap_bytes_per_s = pcie_x16_bytes_per_s(accelerator->pcie_gen.value_or(4));
      if (c.batching == SimBatching::none) c.max_batch = 1;
    } else if (model.measured) {
      if (catalog.find_accelerator(model.measured->accelerator) != accelerator)
        return Error{"", deployment.line, "deployment.accelerator",
                     "the model's service times were measured on " + model.measured->accelerator};
      MeasuredServiceTime measured = *model.measured;
      // The measured times are means; the distribution around them is the user's to choose
      // (exponential for checking against M/M/c, lognormal with a cv for real jitter).
      c.batch_time = [measured](int batch, Rng& rng) {
        double mean = measured.at(batch);
        if (measured.distribution == "exponential") return rng.exponential(mean);
        if (measured.distribution == "lognormal") {
          double sigma2 = std::log(1 + measured.cv * measured.cv);
          return mean * std::exp(std::sqrt(sigma2) * rng.normal() - sigma2 / 2);
        }
        return mean;
      };
    } else {
      memory.batch = c.max_batch;
      memory.context = std::max(1.0, service.input_tokens.mean());
      if (estimate_inference(arch, memory).total_bytes_per_device > accelerator->memory_bytes() * usable_fraction)
        return Error{"", deployment.line, "deployment.max_batch",
                     fmt::format("a batch of {} does not fit on {}", c.max_batch, accelerator->name)};
      // One pass per batch size, computed once.
      std::vector<double> times(static_cast<size_t>(c.max_batch) + 1);
      for (int b = 1; b <= c.max_batch; ++b)
        times[static_cast<size_t>(b)] = item_step(arch, setup, b, service.input_tokens.mean()).time_s;
      c.batch_time = [times](int batch, Rng&) { return times[static_cast<size_t>(std::clamp<int>(batch, 1, static_cast<int>(times.size()) - 1))]; };
    }
    if (pp == 1) {
      for (int i = 0; i < group.count; ++i) replicas.push_back(c);
      continue;
    }
    // A replica of pp stages runs pp micro-batches at once, each through every stage in turn,
    // with its own scheduler, as vLLM V0's virtual engines do (the engine adds a request to the
    // one with the fewest unfinished). Their KV: each its equal share under vllm-v0
    // (vllm/core/scheduler.py divides num_gpu_blocks by pipeline_parallel_size), else one pool
    // (vLLM V1's one KV cache manager; DistServe's decoding scheduler, one BlockManager over its
    // pp batches; deployment.pipeline_kv chooses). A micro-batch's step crosses all the
    // layers, one stage after another: the whole model's step at its batch, a stage taking its
    // share when free (the simulation holds each stage for one micro-batch at a time, so lanes
    // whose batches differ step at the larger one's pace). Not counted: the activations handed
    // between stages (hidden size x 2 B per token, over NVLink). The engine's host time per
    // sequence (a calibration's excess over the GPU's step) is paid once per micro-batch, not at
    // every stage: DistServe's engine detokenizes and streams each token once, and a stage's
    // worker only turns its inputs into C++ vectors. Each lane is a replica here.
    c.pipeline_lanes = pp;
    c.lanes_share_kv = deployment.pipeline_kv.empty() ? c.scheduler != LlmScheduler::vllm_v0 : deployment.pipeline_kv == "shared";
    for (int i = 0; i < group.count; ++i)
      for (int lane = 0; lane < pp; ++lane) {
        ReplicaConfig l = c;
        l.name = group.count > 1 ? fmt::format("{} #{} lane {}/{}", c.name, i + 1, lane + 1, pp)
                                 : fmt::format("{} lane {}/{}", c.name, lane + 1, pp);
        replicas.push_back(std::move(l));
      }
  }
  if (replicas.empty()) return Error{"", deployment.line, "deployment.replicas", "no replicas"};
  return replicas;
}

ArrivalOptions arrival_options(const ServiceSpec& service, double rate_rps) {
  ArrivalOptions o;
  o.process = service.arrivals.process;
  o.rate_rps = rate_rps;
  o.cv = service.arrivals.cv;
  o.profile = service.traffic.profile;
  o.mmpp_high_rps = service.arrivals.mmpp_high_rps;
  o.mmpp_low_rps = service.arrivals.mmpp_low_rps;
  o.mmpp_high_mean_s = service.arrivals.mmpp_high_mean_s;
  o.mmpp_low_mean_s = service.arrivals.mmpp_low_mean_s;
  o.trace_path = service.traffic.trace_path;
  o.time_scale = service.arrivals.time_scale;
  if (o.process == "curve") o.rate_rps = service.traffic.average_rps;
  o.rates = service.traffic.rates;
  return o;
}

}  // namespace gw
