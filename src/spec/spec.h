// The workload spec every planning command reads (YAML): constraints, models, real-time
// services with traffic and SLOs. Errors name the file, line and key; unknown keys are errors
// with a suggestion.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/serving_defaults.h"
#include "catalog/offering.h"
#include "core/error.h"
#include "core/precision.h"
#include "model/memory.h"
#include "model/model_arch.h"
#include "trace/rate_series.h"
#include "trace/request_trace.h"

namespace gw {

// A distribution of token counts (or items): a fixed value, or an empirical sample.
struct TokenDistribution {
  std::vector<double> sample;  // sorted; one value for a fixed count
  double mean() const;
  double quantile(double q) const;
};

enum class Batching { none, dynamic, continuous, automatic };
std::string_view batching_name(Batching batching);

struct Slo {
  std::optional<double> latency_p99_s;  // classic models: end-to-end
  std::optional<double> latency_p50_s;
  std::optional<double> ttft_p99_s;     // LLMs: time to first token
  std::optional<double> tpot_p99_s;     // LLMs: time per output token
  std::optional<double> e2e_p99_s;      // LLMs: whole response
};

// How long a client waits for its request to start before it gives up, by default: the read
// timeout an ingress or load balancer puts in front of a server, which cuts a request whose
// first byte (a streamed first token) has not come back. ingress-nginx proxy-read-timeout
// 60 s (kubernetes.github.io/ingress-nginx, ConfigMap reference) and the Elastic Load
// Balancing idle timeout 60 s (docs.aws.amazon.com/elasticloadbalancing); read 2026-12-02.
inline constexpr double kDefaultClientTimeoutS = 60;

// Prompts that share prefixes, for prefix caching (traffic.prefix): a system prompt in front of
// every request, and conversations of `turns` requests, each turn's prompt carrying the turns
// before it (their prompts and answers) with the service's input tokens as its new part; a
// turn comes think_time_s (exponential mean) after the one before at the earliest. Chain
// hashes per block_tokens-token block, vLLM's block.
struct PrefixShape {
  double system_prompt_tokens = 0;
  int turns = 1;
  double think_time_s = 60;
  int block_tokens = 16;
  bool given() const { return system_prompt_tokens > 0 || turns > 1; }
};

struct Traffic {
  PrefixShape prefix;
  double average_rps = 0;
  double peak_rps = 0;
  std::vector<double> profile;  // 24 or 168 hourly factors of the average; empty when flat
  std::string timezone = "UTC";  // the clock the profile's hours are in (IANA name; KEDA cron triggers use it)
  std::string trace_path;       // when driven by a trace
  std::optional<TraceSummary> trace;
  std::optional<RateSeries> rates;  // when driven by a measured rate series
  // Clients give up on a request not started this long after it arrived (traffic.client_timeout_s;
  // 0: `none`, they wait for ever).
  double client_timeout_s = kDefaultClientTimeoutS;
  bool client_timeout_given = false;
};

// The timeout when the spec does not give one: kDefaultClientTimeoutS, or twice the longest time
// the SLO allows a request (latency, end to end or to the first token) where that is longer: a
// team whose SLO allows three minutes has set its timeouts above that.
double default_client_timeout_s(const Slo& slo);
// The timeout as an assumption, in words (--explain).
std::string client_timeout_text(const Traffic& traffic);

// How a service may scale (gpuwise scale): the mechanics of the cluster and the policies' targets.
struct ScalingSpec {
  std::vector<std::string> policies;   // empty: all
  int min_replicas = 1;                // for the metric policies; scale-to-zero runs as its own policy
  int max_replicas = 0;                // 0: twice the peak plan
  double keep_alive_s = 600;           // scale to zero after this long without a request
  bool keep_alive_given = false;
  double interval_s = 15;              // metric scrape and HPA sync
  double scale_up_window_s = 0;
  double scale_down_window_s = 300;
  double node_provisioning_s = 120;    // a new GPU node joins the cluster
  double container_start_s = 45;       // image pull (cached layers) and process start
  std::string model_source = "object-storage";  // object-storage, image, node-cache
  std::string model_uri;               // versioned weights in object storage (the Deployment loads them at start-up)
  std::string image;                   // serving image; empty: vLLM for LLMs, Triton otherwise
  double model_load_gbps = 0;          // 0: by source
  int warm_pool = 0;                   // idle provisioned nodes kept
  double cpu_target_pct = 70, duty_cycle_target_pct = 70;
  bool duty_cycle_target_given = false;  // else a disaggregated prefill pool holds the duty its plan verified at peak
  double queue_depth_target = 0;       // 0: from the plan's capacity at the SLO
  double concurrency_target = 0;       // 0: from the plan's operating batch
  int cpu_cores = 8;
  double cpu_ms_per_request = 5;
  int shapes = 1;                      // replica layouts gpuwise scale compares (the plan's first)
  bool given = false;
  int line = 0;
};

// Service times a user measured for a model on one accelerator, by batch size.
struct MeasuredServiceTime {
  std::string accelerator;
  std::vector<std::pair<double, double>> batch_seconds;  // ascending batch
  std::string distribution = "constant";  // constant, exponential or lognormal around the mean
  double cv = 0;                          // lognormal: coefficient of variation
  // Piecewise-linear in the batch; beyond the last point, linear in the batch from the origin.
  double at(double batch) const;
};

struct ModelSpec {
  std::string key;
  ModelArch arch;
  Precision precision = Precision::bf16;
  WeightFormat weight_format = WeightFormat::plain;  // awq or gptq where the spec named one
  std::optional<MeasuredServiceTime> measured;
  int line = 0;
};

// How a service is deployed, for `gpuwise simulate` (when absent, the plan's best is used).
struct DeploymentGroup {
  std::string accelerator;
  int tensor_parallel = 1;
  int count = 1;  // replicas
  std::string role = "both";  // both, or prefill / decode (disaggregated serving)
  // Pipeline stages per replica (LLMs): each stage holds its share of the layers on tp devices,
  // so a replica is tp x pp devices; it runs pp micro-batches at once (vLLM's virtual engines).
  int pipeline_parallel = 1;
};

// deployment.disaggregation: the link prefill replicas send their KV over.
struct DisaggregationSpec {
  std::string link = "infiniband";  // nvlink, infiniband, efa, roce, tcp
  std::optional<double> gbps_per_gpu;  // overrides the link's default
  // overlapped: the KV streams behind the prefill, layer by layer, and the decode replica's steps
  // never wait for it (vLLM's KV connectors, SGLang, Dynamo); between_steps: the decode replica
  // pulls it between its steps and runs none meanwhile (DistServe; sim/kv_pull.cc).
  std::string kv_transfer = "overlapped";
  bool pulled_between_steps() const { return kv_transfer == "between_steps"; }
  int line = 0;
};

// deployment.speculative: how the replicas decode speculatively.
struct SpeculativeSpec {
  std::string method;       // draft, eagle, mtp, ngram
  int tokens = 0;           // proposed per step
  double acceptance = 0;    // per proposed token
  std::string draft_model;  // draft: a model preset (catalog/models)
  int line = 0;
};

struct Deployment {
  std::vector<DeploymentGroup> groups;
  std::string batching;         // none, static, dynamic, continuous; empty: continuous for LLMs, dynamic otherwise
  int max_batch = 0;            // 0: 256 for LLMs, 32 otherwise
  double max_queue_delay_s = 0;
  double batch_timeout_s = 0.05;
  bool chunked_prefill = true;
  int token_budget = kStepTokenBudget;
  std::string router = "round-robin";
  bool router_given = false;  // the spec names it: plan verifies with it (how the user routes)
  // Copies of the router dealing the requests, each request to one of them (as a Service spreads
  // clients over a router's pods): each deals its own round robin. Absent: as plan --emit-k8s
  // deploys (one vLLM Router; HAProxy: one holding a shared queue, two dealing round robin);
  // `simulate` then runs one.
  std::optional<int> router_replicas;
  // LLM engines: vllm-v0, vllm-v1, sarathi, orca; empty: vllm-v1 with chunked prefill, vllm-v0 without.
  std::string scheduler;
  std::string preemption = "recompute";        // recompute or swap
  std::optional<double> watermark_fraction;    // free KV blocks kept at admission; default by scheduler
  std::optional<double> gpu_memory_utilization;  // share of device memory the engine takes (fit's --usable-fraction)
  std::optional<double> overhead_gib;          // runtime overhead per device (CUDA context, graphs)
  // Pipeline stages: the micro-batches draw on one pool of the replica's KV blocks ("shared":
  // vLLM V1, SGLang, DistServe) or each on its own equal share ("per-micro-batch": vLLM V0's
  // virtual engines); empty: per-micro-batch under vllm-v0, shared otherwise.
  std::string pipeline_kv;
  // Prefix caching: "kv" (the default, vLLM V1's: cached blocks in the KV cache's free blocks),
  // "off", or a room of its own: prefix_cache_tokens (infinity: unlimited).
  std::string prefix_cache = "kv";
  double prefix_cache_tokens = 0;
  std::optional<SpeculativeSpec> speculative;
  std::optional<DisaggregationSpec> disaggregation;
  int line = 0;
};

struct ArrivalShape {
  std::string process = "poisson";  // poisson, gamma, mmpp (rates); curve from a profile; trace
  double cv = 1;
  double mmpp_high_rps = 0, mmpp_low_rps = 0, mmpp_high_mean_s = 60, mmpp_low_mean_s = 300;
  double time_scale = 1;            // traces
};

struct ServiceSpec {
  std::string name;
  std::string model_key;
  Traffic traffic;
  TokenDistribution input_tokens;   // LLM prompts; classic: tokens per item for encoders
  TokenDistribution output_tokens;  // LLM completions
  Slo slo;
  Batching batching = Batching::automatic;
  int max_batch = 0;  // 0: search
  // Availability: replicas on at least this many nodes, so one lost node leaves the service up.
  int min_replicas = 2;
  bool min_replicas_given = false;
  // Spot capacity only when the service can lose a node: then N+1 nodes across zones with an
  // on-demand floor, checked by a simulated reclaim.
  bool interruptible = false;
  ArrivalShape arrivals;
  std::optional<Deployment> deployment;
  ScalingSpec scaling;
  bool slo_given = false;  // optional only for simulating a given deployment
  int line = 0;
};

struct Constraints {
  std::vector<std::string> clouds;
  std::vector<std::string> regions;
  std::vector<std::string> accelerators_include;
  std::vector<std::string> accelerators_exclude;
  // The spec lines of each entry above (0: not from a spec), for errors that need the catalog.
  std::vector<int> cloud_lines, region_lines, accelerator_include_lines, accelerator_exclude_lines;
  bool accelerators_as_mapping = false;  // {include, exclude} rather than a list
  std::vector<Pricing> pricing = {Pricing::on_demand};
  std::vector<std::string> cpu_architectures;  // x86_64, arm64: the host CPUs the serving images are built for (empty: any)
  std::optional<double> budget_usd_per_month;
  double max_utilization = 0.80;  // 1 - headroom: replicas run at most this busy at peak
  // What the account has: cloud (or "cloud/region") -> quota family -> amount in its unit.
  std::map<std::string, std::map<std::string, double>> quotas;
  std::map<std::string, std::map<std::string, int>> quota_lines;  // the same keys: the spec line of each amount
};

// A training job: a model, its work (tokens, or items for non-LLM models), a deadline, and
// whether it may run on interruptible capacity with checkpoints.
struct TrainingSpec {
  std::string name;
  std::string model_key;
  double tokens = 0;                 // LLMs and encoders: training tokens
  double items = 0;                  // generic models: samples (images x epochs)
  std::optional<double> deadline_days;
  bool interruptible = false;
  double runs_per_month = 0;         // recurring jobs (a nightly fine-tune: 30)
  long long sequence_length = 4096;
  double global_batch_tokens = 0;  // tokens per step; 0: the critical batch for the run's compute (critical_batch_tokens)
  std::vector<std::string> accelerators;  // empty: the spec's constraints
  std::vector<int> counts;                // empty: 1, 2, 4, ... 4096
  double storage_gbps = 10;
  std::optional<double> checkpoint_interval_min;
  std::optional<double> preemptions_per_hour;
  std::string spot_trace;
  Precision precision = Precision::bf16;   // fp8: Transformer Engine on accelerators with FP8 tensor cores
  int precision_line = 0;
  std::optional<int> zero_stage;           // pinned, else searched
  std::optional<Recompute> recompute;      // pinned, else searched
  bool allow_tcp_clusters = false;         // multi-node jobs without an RDMA-class fabric
  int line = 0;
};

// Offline inference: a number of items (requests) to get through by a deadline after each start,
// on a schedule; throughput and deadline, not latency.
struct BatchJobSpec {
  std::string name;
  std::string model_key;
  double items = 0;
  TokenDistribution input_tokens;   // LLM prompts (classic models: ignored)
  TokenDistribution output_tokens;  // LLM completions
  double deadline_hours = 0;        // from the start to the last item
  std::string schedule;             // cron, UTC; empty: runs_per_month, or one run
  double runs_per_month = 0;        // from the schedule where one is given
  bool interruptible = true;        // offline work resumes where it stopped: spot allowed
  ScalingSpec scaling;              // node provisioning, container start, weights' source (model_uri, image)
  std::string input_uri;            // object-storage prefix of the input's parts (plan --emit-k8s); empty: a placeholder
  std::string output_uri;           // where the answers go, part by part
  int line = 0;
};

// Fleet questions (gpuwise fleet): projects on a shared pool, buy versus rent, what-ifs.
struct FleetProjectSpec {
  std::string name;
  int gpus = 1;
  int peak_gpus = 0;              // always-on projects that flex: GPUs in the peak window
  int peak_from_hour = 9, peak_to_hour = 17;
  std::string schedule;           // cron; empty: always on
  double duration_hours = 0;
  bool shiftable = true;          // may the start move to lower the pool's peak
  int line = 0;
};

// What owning GPUs costs and what renting them would: the terms buy-versus-rent compares.
struct BuyVsRentTerms {
  int gpus = 8;
  double purchase_usd = 0;
  double life_years = 3;            // straight-line depreciation
  // What owning costs beyond the purchase, line by line (defaults and their sources in
  // fleet/buy_vs_rent.cc; each overridable in the spec).
  std::string accelerator;          // for its TDP
  double watts_per_gpu = 0;         // 0: the accelerator's TDP
  double pue = 1.5;                 // facility power over IT power
  double usd_per_kwh = 0.08;
  double colocation_usd_per_kw_month = 180;  // space, power and cooling capacity per provisioned IT kW
  double networking_fraction = 0.10;         // fabric and switches bought with the GPUs, of their price
  double staff_usd_per_gpu_month = 35;
  double cost_of_capital = 0.08;    // per year, on the capital tied up
  double resale_fraction = 0.15;    // of the purchase, recovered at the end of the life
  // One lump instead of power, colocation, networking and staff: this share of the purchase over the life.
  std::optional<double> overhead_fraction;
  double on_demand_usd_per_gpu_hour = 0;  // 0: the catalog's for the accelerator
  std::optional<double> reserved_1y_usd_per_gpu_hour, reserved_3y_usd_per_gpu_hour, spot_usd_per_gpu_hour;
};

struct BuyVsRentSpec : BuyVsRentTerms {
  std::optional<double> utilization;  // planned share of hours busy; default: the projects' pool
  std::string rent_source;            // where the rent prices come from (given, or the catalog's offering)
  int line = 0;
  int accelerator_line = 0;
};

struct WhatIfStepSpec {
  std::string name;
  double weeks = 1;                          // engineering effort
  std::string batching;                      // dynamic, continuous, none
  std::optional<Precision> precision;        // quantization
  std::optional<double> cache_hit_rate;      // response caching: this share never reaches a GPU
  std::string small_model;                   // cascade: a preset or models key that answers first
  double small_share = 0;                    // cascade: the share the small model settles
  std::string distill_to;                    // distillation: the smaller model replacing the service's
  int line = 0;
};

struct WhatIfSpec {
  std::string service;
  std::string accelerator;        // what runs today
  int gpus = 1;
  double usd_per_month = 0;
  double engineering_usd_per_week = 0;
  std::vector<WhatIfStepSpec> steps;
  int line = 0;
};

struct BucketMixSpec {
  std::string service;            // an LLM service of this spec
  int buckets = 4;                // by prompt length, quantiles of its sample
  int line = 0;
};

struct FleetSpec {
  bool shared_pools = false;      // place the spec's services on shared pools (multi-model)
  std::optional<BucketMixSpec> bucket_mix;
  std::vector<FleetProjectSpec> projects;
  std::optional<double> usd_per_gpu_hour;
  std::optional<BuyVsRentSpec> buy_vs_rent;
  std::optional<WhatIfSpec> what_if;
  int line = 0;
};

struct Spec {
  std::string path;
  std::string name;
  Constraints constraints;
  std::map<std::string, ModelSpec> models;
  std::vector<ServiceSpec> services;
  std::vector<TrainingSpec> training;
  std::vector<BatchJobSpec> batch_jobs;
  std::optional<FleetSpec> fleet;
  std::vector<std::string> not_planned;  // sections this version reads but does not plan yet
};

// Parses a spec file; traces and model configs are resolved relative to the spec's folder.
Result<Spec> load_spec(const std::string& path);
Result<Spec> parse_spec(const std::string& text, const std::string& path);

// An error naming the first service without an `slo:` (file, line, field), for commands that plan.
std::optional<Error> require_slos(const Spec& spec, std::string_view command);

}  // namespace gw
