// The services section of a spec: traffic, token distributions, deployment, scaling.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

#include "spec/spec_reader.h"

namespace gw::spec_reading {

TokenDistribution distribution_from(double mean, std::optional<double> p99) {
  TokenDistribution d;
  if (!p99 || *p99 <= mean) {
    d.sample = {mean};
    return d;
  }
  // ln(p99/mean) = z*sigma - sigma^2/2 with z = 2.3263; take the smaller root.
  const double z = 2.326347874;
  double c = std::log(*p99 / mean);
  double disc = z * z - 2 * c;
  double sigma = disc > 0 ? z - std::sqrt(disc) : z;
  double mu = std::log(mean) - sigma * sigma / 2;
  for (int i = 0; i < 999; ++i) {
    double q = (i + 0.5) / 999.0;
    // Inverse normal CDF by Acklam's rational approximation is overkill here: use erfinv via Newton.
    double x = 0;
    for (int it = 0; it < 50; ++it) {
      double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
      double pdf = std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
      x -= (cdf - q) / std::max(pdf, 1e-300);
    }
    d.sample.push_back(std::exp(mu + sigma * x));
  }
  std::sort(d.sample.begin(), d.sample.end());
  return d;
}

std::vector<double> named_profile(const std::string& name) {
  std::vector<double> hours;
  if (name == "flat") return {};
  if (name == "diurnal") {
    // Peak at 14:00, trough at 02:00, peak/average 1.6.
    for (int h = 0; h < 24; ++h) hours.push_back(1.0 + 0.6 * std::cos((h - 14) * 2 * M_PI / 24));
    return hours;
  }
  if (name == "weekday-business-hours") {
    // Monday 00:00 first; 09:00-18:00 on weekdays carries most traffic.
    for (int day = 0; day < 7; ++day)
      for (int h = 0; h < 24; ++h) hours.push_back(day < 5 && h >= 9 && h < 18 ? 2.2 : day < 5 ? 0.5 : 0.3);
    double sum = 0;
    for (double v : hours) sum += v;
    for (double& v : hours) v *= 168.0 / sum;  // average 1
    return hours;
  }
  if (name == "weekdays-only") {
    // A dev or internal endpoint: Monday-Friday 08:00-20:00, nothing at night or at weekends.
    for (int day = 0; day < 7; ++day)
      for (int h = 0; h < 24; ++h) hours.push_back(day < 5 && h >= 8 && h < 20 ? 1.0 : 0.0);
    for (double& v : hours) v *= 168.0 / 60.0;  // average 1
    return hours;
  }
  return std::vector<double>{-1};  // unknown profile
}

namespace {

TokenDistribution read_tokens(const Reader& r, const YAML::Node& node, const std::string& path) {
  if (node.IsScalar()) return distribution_from(r.number(node, path, 0, 1e8), std::nullopt);
  r.check_keys(node, path, {"mean", "p99"});
  if (!node["mean"]) r.fail(node, path + ".mean", "required");
  double mean = r.number(node["mean"], path + ".mean", 0, 1e8);
  std::optional<double> p99;
  if (node["p99"]) p99 = r.number(node["p99"], path + ".p99", mean, 1e9);
  return distribution_from(mean, p99);
}

// services[].traffic: rates, a profile, a trace or a measured rate series, and the arrival process.
void read_traffic(const Reader& r, const YAML::Node& node, const std::string& path, [[maybe_unused]] const std::string& base_dir,
                  [[maybe_unused]] const ModelArch& arch, [[maybe_unused]] bool llm, ServiceSpec& s) {
  if (!node["traffic"]) r.fail(node, path + ".traffic", "required: rps, profile or trace");
  const YAML::Node traffic = node["traffic"];
  r.check_keys(traffic, path + ".traffic",
               {"rps", "profile", "timezone", "trace", "trace_format", "time_scale", "process", "cv", "mmpp", "rates",
                "client_timeout_s", "prefix"});
  if (const YAML::Node prefix = traffic["prefix"]) {
    const std::string where = path + ".traffic.prefix";
    r.check_keys(prefix, where, {"system_prompt_tokens", "turns", "think_time_s"});
    PrefixShape& shape = s.traffic.prefix;
    if (prefix["system_prompt_tokens"])
      shape.system_prompt_tokens = std::round(r.number(prefix["system_prompt_tokens"], where + ".system_prompt_tokens", 0, 1e7));
    if (prefix["turns"]) shape.turns = static_cast<int>(r.number(prefix["turns"], where + ".turns", 1, 10000));
    if (prefix["think_time_s"]) shape.think_time_s = r.number(prefix["think_time_s"], where + ".think_time_s", 0, 1e7);
    if (!shape.given()) r.fail(prefix, where, "give system_prompt_tokens (shared by every request) or turns above 1 (conversations)");
    if (traffic["trace"]) r.fail(prefix, where, "a trace carries its own prompts (trace_format: mooncake gives their prefix blocks)");
    if (!llm) r.fail(prefix, where, "prefix caching applies to LLM services");
  }
  if (const YAML::Node zone = traffic["timezone"]) {
    // An IANA name (Area/Location, or UTC): the KEDA cron triggers `plan --emit-k8s` writes for
    // a scheduled pool name it as their clock.
    const std::string where = path + ".traffic.timezone";
    const std::string name = r.text(zone, where);
    const bool iana = !name.empty() && name.size() <= 64 && name.front() != '/' && name.back() != '/' &&
                      name.find("..") == std::string::npos &&
                      std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/_+-", c); });
    if (!iana) r.fail(zone, where, "an IANA time zone name, as Europe/Berlin, America/New_York or UTC");
    if (traffic["trace"] || traffic["rates"]) r.fail(zone, where, "the clock of an hourly profile's hours; a trace or measured rates keep their own times");
    s.traffic.timezone = name;
  }
  if (const YAML::Node timeout = traffic["client_timeout_s"]) {
    const std::string where = path + ".traffic.client_timeout_s";
    if (timeout.IsScalar() && timeout.Scalar() == "none") {
      s.traffic.client_timeout_s = 0;
    } else {
      if (!timeout.IsScalar() || !parse_finite_double(timeout.Scalar()))
        r.fail(timeout, where, "seconds a client waits for service to start, or none (clients wait for ever)");
      s.traffic.client_timeout_s = r.number(timeout, where, 1e-3, 1e7);
    }
    s.traffic.client_timeout_given = true;
  }
  if (traffic["process"]) {
    std::string process = r.text(traffic["process"], path + ".traffic.process");
    if (process != "poisson" && process != "gamma" && process != "mmpp")
      r.fail(traffic["process"], path + ".traffic.process", "one of poisson, gamma, mmpp (traces and profiles set their own)");
    s.arrivals.process = process;
  }
  if (traffic["cv"]) s.arrivals.cv = r.number(traffic["cv"], path + ".traffic.cv", 0.01, 100);
  if (const YAML::Node mmpp = traffic["mmpp"]) {
    std::string where = path + ".traffic.mmpp";
    r.check_keys(mmpp, where, {"high_rps", "low_rps", "high_mean_s", "low_mean_s"});
    if (!mmpp["high_rps"] || !mmpp["low_rps"]) r.fail(mmpp, where, "give high_rps and low_rps");
    s.arrivals.mmpp_high_rps = r.number(mmpp["high_rps"], where + ".high_rps", 0, 1e9);
    s.arrivals.mmpp_low_rps = r.number(mmpp["low_rps"], where + ".low_rps", 0, 1e9);
    if (mmpp["high_mean_s"]) s.arrivals.mmpp_high_mean_s = r.number(mmpp["high_mean_s"], where + ".high_mean_s", 1e-3, 1e9);
    if (mmpp["low_mean_s"]) s.arrivals.mmpp_low_mean_s = r.number(mmpp["low_mean_s"], where + ".low_mean_s", 1e-3, 1e9);
    s.arrivals.process = "mmpp";
  }
  if (traffic["trace"]) {
    std::string trace = r.text(traffic["trace"], path + ".traffic.trace");
    std::filesystem::path resolved = std::filesystem::path(trace).is_absolute() ? std::filesystem::path(trace) : std::filesystem::path(base_dir) / trace;
    TraceFormat format = TraceFormat::automatic;
    if (traffic["trace_format"]) {
      auto parsed = parse_trace_format(r.text(traffic["trace_format"], path + ".traffic.trace_format"));
      if (!parsed) r.fail(traffic["trace_format"], path + ".traffic.trace_format", "one of auto, azure, csv, jsonl, mooncake");
      format = *parsed;
    }
    double scale = traffic["time_scale"] ? r.number(traffic["time_scale"], path + ".traffic.time_scale", 1e-6, 1e6) : 1.0;
    s.arrivals.process = "trace";
    s.arrivals.time_scale = scale;
    std::error_code missing;
    if (!std::filesystem::is_regular_file(resolved, missing))
      r.fail(traffic["trace"], path + ".traffic.trace", "cannot read the trace '" + resolved.string() + "': no such file");
    auto summary = summarize_trace(resolved.string(), format, scale);
    if (!summary.ok()) throw SpecError{summary.error()};
    s.traffic.trace_path = resolved.string();
    s.traffic.trace = summary.value();
    s.traffic.average_rps = summary.value().mean_rps;
    s.traffic.peak_rps = summary.value().peak_rps;
    s.input_tokens.sample = summary.value().input_sample;
    s.output_tokens.sample = summary.value().output_sample;
    std::sort(s.input_tokens.sample.begin(), s.input_tokens.sample.end());
    std::sort(s.output_tokens.sample.begin(), s.output_tokens.sample.end());
  }
  if (const YAML::Node rates = traffic["rates"]) {
    std::string where = path + ".traffic.rates";
    if (traffic["trace"] || traffic["rps"] || traffic["profile"])
      r.fail(rates, where, "give one of rates, trace, or rps (with a profile)");
    RateSeriesOptions options;
    std::string file;
    if (rates.IsScalar()) {
      file = rates.Scalar();
    } else {
      r.check_keys(rates, where, {"file", "timestamp_column", "rps_column", "where"});
      if (!rates["file"]) r.fail(rates, where + ".file", "required");
      file = r.text(rates["file"], where + ".file");
      if (rates["timestamp_column"]) options.timestamp_column = r.text(rates["timestamp_column"], where + ".timestamp_column");
      if (rates["rps_column"]) options.rps_column = r.text(rates["rps_column"], where + ".rps_column");
      if (const YAML::Node filter = rates["where"]) {
        if (!filter.IsMap()) r.fail(filter, where + ".where", "a mapping of column to value");
        for (const auto& entry : filter) options.where.emplace_back(entry.first.as<std::string>(), r.text(entry.second, where + ".where"));
      }
    }
    std::filesystem::path resolved = std::filesystem::path(file).is_absolute() ? std::filesystem::path(file) : std::filesystem::path(base_dir) / file;
    auto series = load_rate_series(resolved.string(), options);
    if (!series.ok()) throw SpecError{series.error()};
    s.traffic.rates = series.value();
    s.traffic.average_rps = series.value().mean_rps;
    s.traffic.peak_rps = series.value().peak_rps;
    s.arrivals.process = "series";
  }
  if (traffic["rps"]) {
    if (traffic["trace"]) r.fail(traffic["rps"], path + ".traffic.rps", "give rps or trace, not both");
    const YAML::Node rps = traffic["rps"];
    if (rps.IsScalar()) {
      s.traffic.average_rps = s.traffic.peak_rps = r.number(rps, path + ".traffic.rps", 1e-9, 1e9);
    } else {
      r.check_keys(rps, path + ".traffic.rps", {"average", "peak"});
      if (!rps["average"] && !rps["peak"]) r.fail(rps, path + ".traffic.rps", "give average and/or peak");
      if (rps["average"]) s.traffic.average_rps = r.number(rps["average"], path + ".traffic.rps.average", 1e-9, 1e9);
      if (rps["peak"]) s.traffic.peak_rps = r.number(rps["peak"], path + ".traffic.rps.peak", 1e-9, 1e9);
      if (!rps["peak"]) s.traffic.peak_rps = s.traffic.average_rps;
      if (!rps["average"]) s.traffic.average_rps = s.traffic.peak_rps;
      if (s.traffic.peak_rps < s.traffic.average_rps)
        r.fail(rps["peak"], path + ".traffic.rps.peak", "peak is below the average");
    }
  }
  if (traffic["profile"]) {
    const YAML::Node profile = traffic["profile"];
    if (profile.IsScalar()) {
      s.traffic.profile = named_profile(profile.Scalar());
      if (s.traffic.profile.size() == 1)
        r.fail(profile, path + ".traffic.profile", "unknown profile; one of flat, diurnal, weekday-business-hours, weekdays-only, or a list of 24 or 168 factors");
    } else {
      for (const auto& factor : profile) s.traffic.profile.push_back(r.number(factor, path + ".traffic.profile", 0, 1e6));
      if (s.traffic.profile.size() != 24 && s.traffic.profile.size() != 168)
        r.fail(profile, path + ".traffic.profile", fmt::format("{} factors; give 24 (a day) or 168 (a week)", s.traffic.profile.size()));
      double sum = 0;
      for (double v : s.traffic.profile) sum += v;
      if (sum <= 0) r.fail(profile, path + ".traffic.profile", "all factors are zero");
      for (double& v : s.traffic.profile) v *= static_cast<double>(s.traffic.profile.size()) / sum;
    }
    if (!s.traffic.profile.empty()) {
      if (s.traffic.average_rps <= 0) r.fail(profile, path + ".traffic.rps", "a profile needs rps.average to scale it");
      double peak = *std::max_element(s.traffic.profile.begin(), s.traffic.profile.end()) * s.traffic.average_rps;
      bool peak_given = traffic["rps"] && traffic["rps"].IsMap() && traffic["rps"]["peak"];
      if (!peak_given) s.traffic.peak_rps = peak;
    }
  }
  if (s.traffic.peak_rps <= 0) r.fail(traffic, path + ".traffic", "no request rate: give rps or a trace");
}

// deployment.pp: pipeline stages of an LLM replica, at most one layer each.
int read_pipeline_parallel(const Reader& r, const YAML::Node& value, const std::string& field, const ModelArch& arch, bool llm) {
  const int pp = static_cast<int>(r.number(value, field, 1, 64));
  if (pp > 1 && !llm) r.fail(value, field, "pipeline parallelism is simulated for LLM replicas");
  if (llm && arch.num_layers > 0 && pp > arch.num_layers)
    r.fail(value, field, fmt::format("{} pipeline stages for {} layers: at most one stage per layer", pp, arch.num_layers));
  return pp;
}

// services[].deployment: the replicas, batching and engine a simulation runs as given.
void read_deployment(const Reader& r, const YAML::Node& node, const std::string& path, [[maybe_unused]] const std::string& base_dir,
                  [[maybe_unused]] const ModelArch& arch, [[maybe_unused]] bool llm, ServiceSpec& s) {
  if (const YAML::Node d = node["deployment"]) {
    std::string where = path + ".deployment";
    r.check_keys(d, where, {"replicas", "accelerator", "tp", "pp", "batching", "max_batch", "max_queue_delay_ms",
                            "batch_timeout_ms", "chunked_prefill", "token_budget", "router", "scheduler", "preemption",
                            "watermark", "gpu_memory_utilization", "overhead_gib", "pipeline_kv", "prefix_cache", "speculative",
                            "disaggregation", "router_replicas"});
    Deployment deployment;
    deployment.line = d.Mark().line + 1;
    // Without replicas the deployment says how the engine runs (its prefix cache, speculative
    // decoding, scheduler) and plans choose the replicas; simulate then plans them first.
    if (!d["replicas"]) {
      for (const char* key : {"accelerator", "tp", "pp"})
        if (d[key]) r.fail(d[key], where + ".replicas", std::string("required with ") + key + ": a count or a list of groups");
    } else if (d["replicas"].IsSequence()) {
      for (const auto& group : d["replicas"]) {
        r.check_keys(group, where + ".replicas", {"accelerator", "tp", "pp", "count", "role"});
        if (!group["accelerator"]) r.fail(group, where + ".replicas.accelerator", "required");
        DeploymentGroup g;
        g.accelerator = r.text(group["accelerator"], where + ".replicas.accelerator");
        if (group["tp"]) g.tensor_parallel = static_cast<int>(r.number(group["tp"], where + ".replicas.tp", 1, 64));
        if (group["pp"]) g.pipeline_parallel = read_pipeline_parallel(r, group["pp"], where + ".replicas.pp", arch, llm);
        if (group["count"]) g.count = static_cast<int>(r.number(group["count"], where + ".replicas.count", 1, 100000));
        if (group["role"]) {
          g.role = r.text(group["role"], where + ".replicas.role");
          if (g.role != "both" && g.role != "prefill" && g.role != "decode")
            r.fail(group["role"], where + ".replicas.role", "prefill, decode (disaggregated serving) or both");
          if (!llm && g.role != "both") r.fail(group["role"], where + ".replicas.role", "disaggregation applies to LLMs");
        }
        deployment.groups.push_back(g);
      }
    } else {
      if (!d["accelerator"]) r.fail(d, where + ".accelerator", "required with a replica count");
      DeploymentGroup g;
      g.accelerator = r.text(d["accelerator"], where + ".accelerator");
      g.count = static_cast<int>(r.number(d["replicas"], where + ".replicas", 1, 100000));
      if (d["tp"]) g.tensor_parallel = static_cast<int>(r.number(d["tp"], where + ".tp", 1, 64));
      if (d["pp"]) g.pipeline_parallel = read_pipeline_parallel(r, d["pp"], where + ".pp", arch, llm);
      deployment.groups.push_back(g);
    }
    if (d["batching"]) {
      deployment.batching = r.text(d["batching"], where + ".batching");
      if (deployment.batching != "none" && deployment.batching != "static" && deployment.batching != "dynamic" &&
          deployment.batching != "continuous")
        r.fail(d["batching"], where + ".batching", "one of none, static, dynamic, continuous");
      if (llm && (deployment.batching == "static" || deployment.batching == "dynamic"))
        r.fail(d["batching"], where + ".batching", "LLM replicas batch continuously (or none)");
      if (!llm && deployment.batching == "continuous")
        r.fail(d["batching"], where + ".batching", "continuous batching applies to LLMs");
    }
    if (d["max_batch"]) deployment.max_batch = static_cast<int>(r.number(d["max_batch"], where + ".max_batch", 1, 65536));
    if (d["max_queue_delay_ms"]) deployment.max_queue_delay_s = r.number(d["max_queue_delay_ms"], where + ".max_queue_delay_ms", 0, 1e7) / 1e3;
    if (d["batch_timeout_ms"]) deployment.batch_timeout_s = r.number(d["batch_timeout_ms"], where + ".batch_timeout_ms", 0, 1e7) / 1e3;
    if (d["chunked_prefill"]) deployment.chunked_prefill = r.flag(d["chunked_prefill"], where + ".chunked_prefill");
    if (d["token_budget"]) deployment.token_budget = static_cast<int>(r.number(d["token_budget"], where + ".token_budget", 16, 1 << 22));
    if (d["scheduler"]) {
      deployment.scheduler = r.text(d["scheduler"], where + ".scheduler");
      if (deployment.scheduler != "vllm-v0" && deployment.scheduler != "vllm-v1" && deployment.scheduler != "sarathi" &&
          deployment.scheduler != "orca")
        r.fail(d["scheduler"], where + ".scheduler", "one of vllm-v0, vllm-v1, sarathi, orca");
      if (!llm) r.fail(d["scheduler"], where + ".scheduler", "schedulers apply to LLM replicas");
      bool chunked = deployment.scheduler == "vllm-v1" || deployment.scheduler == "sarathi";
      if (d["chunked_prefill"] && deployment.chunked_prefill != chunked)
        r.fail(d["chunked_prefill"], where + ".chunked_prefill",
               deployment.scheduler + (chunked ? " prefills in chunks" : " prefills whole prompts") + "; drop chunked_prefill or change the scheduler");
      deployment.chunked_prefill = chunked;
    }
    if (d["preemption"]) {
      deployment.preemption = r.text(d["preemption"], where + ".preemption");
      if (deployment.preemption != "recompute" && deployment.preemption != "swap")
        r.fail(d["preemption"], where + ".preemption", "recompute or swap");
      if (deployment.preemption == "swap" && (deployment.scheduler == "vllm-v1" || (deployment.scheduler.empty() && deployment.chunked_prefill)))
        r.fail(d["preemption"], where + ".preemption", "vLLM v1 preempts by recompute only; swap needs scheduler vllm-v0 or sarathi");
    }
    if (d["watermark"]) deployment.watermark_fraction = r.number(d["watermark"], where + ".watermark", 0, 0.5);
    if (d["gpu_memory_utilization"])
      deployment.gpu_memory_utilization = r.number(d["gpu_memory_utilization"], where + ".gpu_memory_utilization", 0.05, 1);
    if (d["overhead_gib"]) deployment.overhead_gib = r.number(d["overhead_gib"], where + ".overhead_gib", 0, 1024);
    if (d["pipeline_kv"]) {
      deployment.pipeline_kv = r.text(d["pipeline_kv"], where + ".pipeline_kv");
      if (deployment.pipeline_kv != "shared" && deployment.pipeline_kv != "per-micro-batch")
        r.fail(d["pipeline_kv"], where + ".pipeline_kv", "shared (one pool for a replica's micro-batches) or per-micro-batch");
      if (!llm) r.fail(d["pipeline_kv"], where + ".pipeline_kv", "pipeline stages' KV applies to LLM replicas");
    }
    if (const YAML::Node p = d["prefix_cache"]) {
      // off | kv | unlimited, or {capacity_tokens: N | unlimited | off | kv}
      const std::string field = where + ".prefix_cache";
      const bool as_map = p.IsMap();
      if (as_map) {
        r.check_keys(p, field, {"capacity_tokens"});
        if (!p["capacity_tokens"]) r.fail(p, field + ".capacity_tokens", "required: a token count, unlimited, kv or off");
      }
      // (a YAML::Node assigned another node's content would overwrite it: bound once here)
      const YAML::Node value = as_map ? p["capacity_tokens"] : p;
      const std::string value_field = as_map ? field + ".capacity_tokens" : field;
      const std::string text = value.IsScalar() ? value.Scalar() : std::string();
      if (text == "off" || text == "false") {
        deployment.prefix_cache = "off";
      } else if (text == "kv" || text == "on" || text == "true") {
        deployment.prefix_cache = "kv";
      } else if (text == "unlimited") {
        deployment.prefix_cache = "room";
        deployment.prefix_cache_tokens = std::numeric_limits<double>::infinity();
      } else if (as_map) {
        deployment.prefix_cache = "room";
        deployment.prefix_cache_tokens = r.number(value, value_field, 1, 1e15);
      } else {
        r.fail(p, field, "off, kv (cached blocks in the KV cache's free blocks, vLLM's default), unlimited, or "
                         "{capacity_tokens: N} for a cache of its own");
      }
      if (!llm) r.fail(p, field, "prefix caching applies to LLM replicas");
    }
    {
      bool prefill = false, decode = false, both = false;
      for (const auto& g : deployment.groups) {
        prefill = prefill || g.role == "prefill";
        decode = decode || g.role == "decode";
        both = both || g.role == "both";
      }
      if ((prefill || decode) && (!prefill || !decode || both))
        r.fail(d["replicas"], where + ".replicas",
               "disaggregated serving needs prefill and decode groups, and no group of role both");
      if (const YAML::Node dis = d["disaggregation"]) {
        const std::string field = where + ".disaggregation";
        r.check_keys(dis, field, {"link", "gbps_per_gpu", "kv_transfer"});
        if (!prefill && !deployment.groups.empty()) r.fail(dis, field, "give replica groups of role prefill and decode");
        DisaggregationSpec spec;
        spec.line = dis.Mark().line + 1;
        if (dis["link"]) {
          spec.link = r.text(dis["link"], field + ".link");
          if (spec.link != "nvlink" && spec.link != "infiniband" && spec.link != "efa" && spec.link != "roce" && spec.link != "tcp")
            r.fail(dis["link"], field + ".link", "one of nvlink, infiniband, efa, roce, tcp");
        }
        if (dis["gbps_per_gpu"]) spec.gbps_per_gpu = r.number(dis["gbps_per_gpu"], field + ".gbps_per_gpu", 0.1, 1e5);
        if (dis["kv_transfer"]) {
          spec.kv_transfer = r.text(dis["kv_transfer"], field + ".kv_transfer");
          if (spec.kv_transfer != "overlapped" && spec.kv_transfer != "between_steps")
            r.fail(dis["kv_transfer"], field + ".kv_transfer", "one of overlapped, between_steps");
        }
        deployment.disaggregation = spec;
      } else if (prefill) {
        deployment.disaggregation = DisaggregationSpec{};
      }
    }
    if (const YAML::Node sp = d["speculative"]) {
      const std::string field = where + ".speculative";
      r.check_keys(sp, field, {"method", "tokens", "acceptance", "draft_model"});
      if (!llm) r.fail(sp, field, "speculative decoding applies to LLM replicas");
      SpeculativeSpec spec;
      spec.line = sp.Mark().line + 1;
      if (!sp["method"]) r.fail(sp, field + ".method", "required: draft, eagle, mtp or ngram");
      spec.method = r.text(sp["method"], field + ".method");
      if (spec.method != "draft" && spec.method != "eagle" && spec.method != "mtp" && spec.method != "ngram")
        r.fail(sp["method"], field + ".method", "one of draft (a smaller model), eagle or mtp (a head on the model), ngram (prompt lookup)");
      if (!sp["tokens"]) r.fail(sp, field + ".tokens", "required: tokens proposed per step (vLLM's num_speculative_tokens)");
      spec.tokens = static_cast<int>(r.number(sp["tokens"], field + ".tokens", 1, 32));
      if (!sp["acceptance"])
        r.fail(sp, field + ".acceptance", "required: the share of proposed tokens the model accepts, per token (vLLM reports it "
                                          "as the draft acceptance rate); it depends on the pair of models and the data");
      spec.acceptance = r.number(sp["acceptance"], field + ".acceptance", 0, 1);
      if (spec.method == "draft") {
        if (!sp["draft_model"]) r.fail(sp, field + ".draft_model", "required with method draft: a model preset");
        spec.draft_model = r.text(sp["draft_model"], field + ".draft_model");
      } else if (sp["draft_model"]) {
        r.fail(sp["draft_model"], field + ".draft_model", "only method draft runs a draft model");
      }
      deployment.speculative = spec;
    }
    if (d["router"]) {
      deployment.router = r.text(d["router"], where + ".router");
      deployment.router_given = true;
      if (deployment.router != "round-robin" && deployment.router != "join-shortest-queue" &&
          deployment.router != "least-outstanding-tokens" && deployment.router != "shared-queue" &&
          deployment.router != "prefix-affinity" && deployment.router != "random" && deployment.router != "power-of-two")
        r.fail(d["router"], where + ".router",
               "one of round-robin, join-shortest-queue, least-outstanding-tokens, shared-queue, prefix-affinity, random, "
               "power-of-two");
    }
    if (d["router_replicas"])
      deployment.router_replicas = static_cast<int>(r.number(d["router_replicas"], where + ".router_replicas", 1, 16));
    s.deployment = deployment;
  }
}

// An s3:// or gs:// path under a bucket.
std::string read_object_uri(const Reader& r, const YAML::Node& node, const std::string& field, const std::string& why,
                            const std::string& not_bucket) {
  std::string uri = r.text(node, field);
  if (uri.rfind("s3://", 0) != 0 && uri.rfind("gs://", 0) != 0) r.fail(node, field, "'" + uri + "': " + why + ": an s3:// or gs:// path");
  if (uri.find('/', 5) == std::string::npos) r.fail(node, field, not_bucket);
  while (uri.size() > 5 && uri.back() == '/') uri.pop_back();
  return uri;
}

// services[].scaling: autoscaling policies, limits, cold start and targets.
void read_scaling(const Reader& r, const YAML::Node& node, const std::string& path, [[maybe_unused]] const std::string& base_dir,
                  [[maybe_unused]] const ModelArch& arch, [[maybe_unused]] bool llm, ServiceSpec& s) {
  if (const YAML::Node sc = node["scaling"]) {
    std::string where = path + ".scaling";
    r.check_keys(sc, where, {"policies", "min_replicas", "max_replicas", "keep_alive_s", "interval_s", "scale_up_window_s",
                             "scale_down_window_s", "node_provisioning_s", "container_start_s", "model_source",
                             "model_load_gbps", "model_uri", "image", "warm_pool", "targets", "cpu", "shapes"});
    ScalingSpec& c = s.scaling;
    c.given = true;
    c.line = sc.Mark().line + 1;
    if (sc["policies"]) {
      c.policies = r.strings(sc["policies"], where + ".policies");
      const std::vector<std::string> known = {"static-peak", "cpu", "gpu-duty-cycle", "concurrency", "queue-depth", "scale-to-zero",
                                              "scheduled", "pool-signals"};
      for (const auto& p : c.policies)
        if (std::find(known.begin(), known.end(), p) == known.end()) {
          std::string hint = closest_match(p, known);
          r.fail(sc["policies"], where + ".policies", "'" + p + "' is not a policy" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") + "; one of " + Reader::list(known));
        }
    }
    auto seconds = [&](const char* key, double& out, double max) {
      if (sc[key]) out = r.number(sc[key], where + "." + key, 0, max);
    };
    if (sc["min_replicas"]) c.min_replicas = static_cast<int>(r.number(sc["min_replicas"], where + ".min_replicas", 0, 100000));
    if (sc["max_replicas"]) c.max_replicas = static_cast<int>(r.number(sc["max_replicas"], where + ".max_replicas", 1, 100000));
    if (c.max_replicas > 0 && c.min_replicas > c.max_replicas) r.fail(sc["min_replicas"], where + ".min_replicas", "above max_replicas");
    seconds("keep_alive_s", c.keep_alive_s, 7 * 86400);
    c.keep_alive_given = sc["keep_alive_s"].IsDefined();
    seconds("scale_up_window_s", c.scale_up_window_s, 3600);
    seconds("scale_down_window_s", c.scale_down_window_s, 3600);
    seconds("node_provisioning_s", c.node_provisioning_s, 7200);
    seconds("container_start_s", c.container_start_s, 7200);
    if (sc["interval_s"]) c.interval_s = r.number(sc["interval_s"], where + ".interval_s", 1, 3600);
    if (sc["model_source"]) {
      c.model_source = r.text(sc["model_source"], where + ".model_source");
      if (c.model_source != "object-storage" && c.model_source != "image" && c.model_source != "node-cache")
        r.fail(sc["model_source"], where + ".model_source", "one of object-storage, image, node-cache");
    }
    if (sc["model_uri"])
      c.model_uri = read_object_uri(r, sc["model_uri"], where + ".model_uri", "weights are loaded from object storage at start-up",
                                    "a versioned path under the bucket (s3://bucket/models/name/revision), not the bucket alone");
    if (sc["image"]) c.image = r.text(sc["image"], where + ".image");
    if (sc["model_load_gbps"]) c.model_load_gbps = r.number(sc["model_load_gbps"], where + ".model_load_gbps", 0.001, 1000);
    if (sc["warm_pool"]) c.warm_pool = static_cast<int>(r.number(sc["warm_pool"], where + ".warm_pool", 0, 10000));
    if (sc["shapes"]) c.shapes = static_cast<int>(r.number(sc["shapes"], where + ".shapes", 1, 8));
    if (const YAML::Node t = sc["targets"]) {
      r.check_keys(t, where + ".targets", {"cpu_pct", "gpu_duty_cycle_pct", "queue_depth", "concurrency"});
      if (t["cpu_pct"]) c.cpu_target_pct = r.number(t["cpu_pct"], where + ".targets.cpu_pct", 1, 100);
      if (t["gpu_duty_cycle_pct"]) {
        c.duty_cycle_target_pct = r.number(t["gpu_duty_cycle_pct"], where + ".targets.gpu_duty_cycle_pct", 1, 100);
        c.duty_cycle_target_given = true;
      }
      if (t["queue_depth"]) c.queue_depth_target = r.number(t["queue_depth"], where + ".targets.queue_depth", 0.01, 1e6);
      if (t["concurrency"]) c.concurrency_target = r.number(t["concurrency"], where + ".targets.concurrency", 0.01, 1e6);
    }
    if (const YAML::Node cpu = sc["cpu"]) {
      r.check_keys(cpu, where + ".cpu", {"cores", "ms_per_request"});
      if (cpu["cores"]) c.cpu_cores = static_cast<int>(r.number(cpu["cores"], where + ".cpu.cores", 1, 1024));
      if (cpu["ms_per_request"]) c.cpu_ms_per_request = r.number(cpu["ms_per_request"], where + ".cpu.ms_per_request", 0, 1e6);
    }
  }
}

// The entry's model: a key under models:, else a preset (added to spec.models).
std::string read_model_key(const Reader& r, const YAML::Node& node, const std::string& path, Spec& spec) {
  if (!node["model"]) r.fail(node, path + ".model", "required");
  const std::string key = r.text(node["model"], path + ".model");
  if (!spec.models.count(key)) {
    auto preset = load_preset(key);
    if (!preset.ok()) {
      std::vector<std::string> keys;
      for (const auto& [k, m] : spec.models) keys.push_back(k);
      std::string hint = closest_match(key, keys);
      r.fail(node["model"], path + ".model",
             "'" + key + "' is neither a key under models: nor a preset" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
    ModelSpec model;
    model.key = key;
    model.arch = preset.value();
    model.line = node["model"].Mark().line + 1;
    spec.models[key] = model;
  }
  return key;
}

// tokens: {input, output}, where given.
void read_token_lengths(const Reader& r, const YAML::Node& node, const std::string& path, TokenDistribution& input,
                        TokenDistribution& output) {
  const YAML::Node tokens = node["tokens"];
  if (!tokens) return;
  r.check_keys(tokens, path + ".tokens", {"input", "output"});
  if (tokens["input"]) input = read_tokens(r, tokens["input"], path + ".tokens.input");
  if (tokens["output"]) output = read_tokens(r, tokens["output"], path + ".tokens.output");
}

}  // namespace

// What a service and a batch job open with: the entry's keys checked, its line, name and model.
// Returns the path errors name it by ("services.chat").
std::string read_entry_head(const Reader& r, const YAML::Node& node, const std::string& list, size_t index,
                            const std::vector<std::string>& keys, Spec& spec, int& line, std::string& name, std::string& model_key) {
  const std::string at = fmt::format("{}[{}]", list, index);
  r.check_keys(node, at, keys);
  line = node.Mark().line + 1;
  if (!node["name"]) r.fail(node, at + ".name", "required");
  name = r.text(node["name"], at + ".name");
  const std::string path = list + "." + name;
  model_key = read_model_key(r, node, path, spec);
  return path;
}

BatchJobSpec read_batch_job(const Reader& r, const YAML::Node& node, size_t index, Spec& spec) {
  BatchJobSpec job;
  const std::string path =
      read_entry_head(r, node, "batch_jobs", index,
                      {"name", "model", "items", "tokens", "deadline_hours", "schedule", "runs_per_month", "interruptible", "input_uri",
                       "output_uri", "model_uri", "image"},
                      spec, job.line, job.name, job.model_key);
  const ModelArch& arch = spec.models[job.model_key].arch;
  const bool llm = arch.kind == ModelKind::decoder;
  if (!node["items"]) r.fail(node, path + ".items", "required: the requests (or records) to get through per run");
  job.items = r.count(node["items"], path + ".items", 1, 1e15);
  read_token_lengths(r, node, path, job.input_tokens, job.output_tokens);
  if (llm && (job.input_tokens.sample.empty() || job.output_tokens.sample.empty()))
    r.fail(node, path + ".tokens", "an LLM batch job needs tokens.input and tokens.output per item");
  if (!llm && job.input_tokens.sample.empty())
    job.input_tokens = distribution_from(arch.kind == ModelKind::encoder && arch.patch_size == 0 ? 128 : 0, std::nullopt);
  if (!node["deadline_hours"]) r.fail(node, path + ".deadline_hours", "required: hours from the start to the last item");
  job.deadline_hours = r.number(node["deadline_hours"], path + ".deadline_hours", 0.05, 24 * 366);
  if (node["schedule"]) {
    job.schedule = r.text(node["schedule"], path + ".schedule");
    std::string why;
    auto cron = parse_cron(job.schedule, &why);
    if (!cron) r.fail(node["schedule"], path + ".schedule", why);
    if (node["runs_per_month"]) r.fail(node["runs_per_month"], path + ".runs_per_month", "give a schedule or runs_per_month, not both");
    // Starts over a year (2027, UTC) over twelve: a nightly job runs 30.4 times a month.
    job.runs_per_month = static_cast<double>(cron_starts(*cron, 2027, 1, 1, 365).size()) / 12;
  }
  if (node["runs_per_month"]) job.runs_per_month = r.number(node["runs_per_month"], path + ".runs_per_month", 0, 1e5);
  if (node["interruptible"]) job.interruptible = r.flag(node["interruptible"], path + ".interruptible");
  // Where plan --emit-k8s has the pods read their parts, write answers and fetch the weights.
  const std::string parts = "a prefix under the bucket that holds the parts (s3://bucket/batch/name), not the bucket alone";
  if (node["input_uri"]) job.input_uri = read_object_uri(r, node["input_uri"], path + ".input_uri", "each pod fetches its part from object storage", parts);
  if (node["output_uri"]) job.output_uri = read_object_uri(r, node["output_uri"], path + ".output_uri", "each pod copies its answers to object storage", parts);
  if (node["model_uri"])
    job.scaling.model_uri = read_object_uri(r, node["model_uri"], path + ".model_uri", "weights are loaded from object storage at start-up",
                                            "a versioned path under the bucket (s3://bucket/models/name/revision), not the bucket alone");
  if (node["image"]) job.scaling.image = r.text(node["image"], path + ".image");
  return job;
}

ServiceSpec read_service(const Reader& r, const YAML::Node& node, size_t index, Spec& spec, const std::string& base_dir) {
  ServiceSpec s;
  const std::string path = read_entry_head(r, node, "services", index,
                                           {"name", "model", "traffic", "tokens", "slo", "batching", "max_batch", "min_replicas",
                                            "interruptible", "deployment", "scaling"},
                                           spec, s.line, s.name, s.model_key);
  const ModelArch& arch = spec.models[s.model_key].arch;
  bool llm = arch.kind == ModelKind::decoder;

  read_traffic(r, node, path, base_dir, arch, llm, s);
  read_token_lengths(r, node, path, s.input_tokens, s.output_tokens);
  if (llm && (s.input_tokens.sample.empty() || s.output_tokens.sample.empty()))
    r.fail(node, path + ".tokens", "an LLM service needs tokens.input and tokens.output (or a trace)");
  if (!llm && s.input_tokens.sample.empty()) {
    double tokens = arch.kind == ModelKind::encoder && arch.patch_size == 0 ? 128 : 0;
    s.input_tokens = distribution_from(tokens, std::nullopt);
  }

  // Planning needs targets; simulating a given deployment does not (require_slos says which).
  if (!node["slo"] && !node["deployment"])
    r.fail(node, path + ".slo", llm ? "required: ttft_p99_s and tpot_p99_s" : "required: latency_p99_s");
  if (const YAML::Node slo = node["slo"]) {
    s.slo_given = true;
    r.check_keys(slo, path + ".slo", {"latency_p99_s", "latency_p50_s", "ttft_p99_s", "tpot_p99_s", "e2e_p99_s"});
    auto seconds = [&](const char* key) -> std::optional<double> {
      if (!slo[key]) return std::nullopt;
      return r.number(slo[key], path + ".slo." + key, 1e-6, 86400);
    };
    s.slo.latency_p99_s = seconds("latency_p99_s");
    s.slo.latency_p50_s = seconds("latency_p50_s");
    s.slo.ttft_p99_s = seconds("ttft_p99_s");
    s.slo.tpot_p99_s = seconds("tpot_p99_s");
    s.slo.e2e_p99_s = seconds("e2e_p99_s");
    // On an LLM service latency_p99_s bounds the whole request, as e2e_p99_s does (the planner
    // and the simulator read both).
    if (llm && !s.slo.ttft_p99_s && !s.slo.tpot_p99_s && !s.slo.e2e_p99_s && !s.slo.latency_p99_s)
      r.fail(slo, path + ".slo", "an LLM service needs ttft_p99_s, tpot_p99_s or e2e_p99_s (latency_p99_s: the whole request)");
    if (!llm && !s.slo.latency_p99_s && !s.slo.latency_p50_s)
      r.fail(slo, path + ".slo", "needs latency_p99_s (or latency_p50_s)");
    if (!llm && (s.slo.ttft_p99_s || s.slo.tpot_p99_s))
      r.fail(slo, path + ".slo", "ttft/tpot apply to LLM services; this model is not a decoder");
  }
  if (!s.traffic.client_timeout_given) s.traffic.client_timeout_s = default_client_timeout_s(s.slo);

  if (node["batching"]) {
    std::string batching = r.text(node["batching"], path + ".batching");
    if (batching == "none") s.batching = Batching::none;
    else if (batching == "dynamic") s.batching = Batching::dynamic;
    else if (batching == "continuous") s.batching = Batching::continuous;
    else if (batching == "auto") s.batching = Batching::automatic;
    else if (batching == "static") r.fail(node["batching"], path + ".batching", "static batching is simulated (gpuwise simulate), not planned; use dynamic");
    else r.fail(node["batching"], path + ".batching", "one of none, dynamic, continuous, auto");
    if (s.batching == Batching::continuous && !llm)
      r.fail(node["batching"], path + ".batching", "continuous batching applies to LLMs; use dynamic");
    if (s.batching == Batching::dynamic && llm)
      r.fail(node["batching"], path + ".batching", "LLMs batch continuously; use continuous or none");
  }
  if (node["max_batch"]) s.max_batch = static_cast<int>(r.number(node["max_batch"], path + ".max_batch", 1, 65536));
  if (node["min_replicas"]) {
    s.min_replicas = static_cast<int>(r.number(node["min_replicas"], path + ".min_replicas", 1, 100000));
    s.min_replicas_given = true;
  }
  if (node["interruptible"]) s.interruptible = r.flag(node["interruptible"], path + ".interruptible");
  read_deployment(r, node, path, base_dir, arch, llm, s);
  read_scaling(r, node, path, base_dir, arch, llm, s);
  if (!s.traffic.profile.empty() && s.arrivals.process == "poisson") s.arrivals.process = "curve";
  return s;
}

}  // namespace gw::spec_reading
