#include "spec/spec.h"

#include "core/numbers.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "core/text.h"
#include "core/cron.h"
#include "model/hf_config.h"
#include "model/presets.h"

namespace gw {

double TokenDistribution::mean() const {
  if (sample.empty()) return 0;
  double sum = 0;
  for (double v : sample) sum += v;
  return sum / static_cast<double>(sample.size());
}

double TokenDistribution::quantile(double q) const {
  if (sample.empty()) return 0;
  double position = q * static_cast<double>(sample.size() - 1);
  size_t low = static_cast<size_t>(std::floor(position));
  size_t high = std::min(sample.size() - 1, low + 1);
  double weight = position - static_cast<double>(low);
  return sample[low] * (1 - weight) + sample[high] * weight;
}

std::string_view batching_name(Batching batching) {
  switch (batching) {
    case Batching::none: return "none";
    case Batching::dynamic: return "dynamic";
    case Batching::continuous: return "continuous";
    case Batching::automatic: return "auto";
  }
  return "auto";
}

double MeasuredServiceTime::at(double batch) const {
  if (batch_seconds.empty()) return 0;
  if (batch <= batch_seconds.front().first) return batch_seconds.front().second;
  for (size_t i = 1; i < batch_seconds.size(); ++i) {
    auto [b0, t0] = batch_seconds[i - 1];
    auto [b1, t1] = batch_seconds[i];
    if (batch <= b1) return t0 + (t1 - t0) * (batch - b0) / (b1 - b0);
  }
  auto [b, t] = batch_seconds.back();
  return t * batch / b;
}

namespace {

struct SpecError {
  Error error;
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& message) const {
    int line = node.IsDefined() ? node.Mark().line + 1 : 0;
    throw SpecError{Error{file_, line, key, message}};
  }

  // Rejects keys outside allowed, suggesting the closest allowed one.
  void check_keys(const YAML::Node& node, const std::string& path, const std::vector<std::string>& allowed) const {
    if (!node.IsMap()) fail(node, path, "expected a mapping of keys");
    for (const auto& entry : node) {
      std::string key = entry.first.as<std::string>();
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string hint = closest_match(key, allowed);
      fail(entry.first, join(path, key),
           "unknown key" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
               "; allowed here: " + list(allowed));
    }
  }

  double number(const YAML::Node& node, const std::string& key, double min, double max) const {
    if (!node.IsScalar()) fail(node, key, "expected a number");
    std::string text = node.Scalar();
    double value = 0;
    try {
      size_t used = 0;
      value = std::stod(text, &used);
      if (used != text.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      fail(node, key, "'" + text + "' is not a finite number");
    }
    if (!std::isfinite(value)) fail(node, key, "must be a finite number");
    if (value < min || value > max) fail(node, key, fmt::format("{} is outside [{}, {}]", text, min, max));
    return value;
  }

  // A count that may carry a unit suffix ("2T", "500B", "8k", "128Ki": core/numbers.h).
  double count(const YAML::Node& node, const std::string& key, double min, double max) const {
    if (!node.IsScalar()) fail(node, key, "expected a number");
    auto value = parse_count(node.Scalar());
    if (!value) fail(node, key, "'" + node.Scalar() + "' is not a count (a number, optionally with k, M, B, T, Ki, Mi or Gi)");
    if (*value < min || *value > max) fail(node, key, fmt::format("{} is outside [{}, {}]", node.Scalar(), min, max));
    return *value;
  }

  bool flag(const YAML::Node& node, const std::string& key) const {
    if (node.IsScalar()) {
      const std::string& v = node.Scalar();
      if (v == "true" || v == "True" || v == "yes" || v == "on") return true;
      if (v == "false" || v == "False" || v == "no" || v == "off") return false;
    }
    fail(node, key, "expected true or false");
  }

  std::string text(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected a string");
    return node.Scalar();
  }

  std::vector<std::string> strings(const YAML::Node& node, const std::string& key) const {
    std::vector<std::string> out;
    if (node.IsScalar()) return {node.Scalar()};
    if (!node.IsSequence()) fail(node, key, "expected a list of strings");
    for (const auto& item : node) out.push_back(text(item, key));
    return out;
  }

  static std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
  static std::string list(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// Lognormal quantiles matching a mean and a p99, or a fixed value when only the mean is given.
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

ModelSpec read_model(const Reader& r, const YAML::Node& node, const std::string& key, const std::string& base_dir) {
  std::string path = "models." + key;
  ModelSpec model;
  model.key = key;
  model.line = node.Mark().line + 1;
  if (node.IsScalar()) {  // shorthand: a preset name
    auto arch = load_preset(node.Scalar());
    if (!arch.ok()) r.fail(node, path, arch.error().message);
    model.arch = arch.value();
    return model;
  }
  r.check_keys(node, path, {"preset", "config", "precision", "params", "flops_per_item", "bytes_per_item", "service_time"});
  int sources = node["preset"].IsDefined() + node["config"].IsDefined() + node["params"].IsDefined();
  if (sources != 1) r.fail(node, path, "give exactly one of preset, config or params");
  if (node["preset"]) {
    auto arch = load_preset(r.text(node["preset"], path + ".preset"));
    if (!arch.ok()) r.fail(node["preset"], path + ".preset", arch.error().message);
    model.arch = arch.value();
  } else if (node["config"]) {
    std::string config = r.text(node["config"], path + ".config");
    std::filesystem::path resolved = std::filesystem::path(config).is_absolute() ? std::filesystem::path(config) : std::filesystem::path(base_dir) / config;
    auto arch = load_model_config(resolved.string());
    if (!arch.ok()) throw SpecError{arch.error()};
    model.arch = arch.value();
  } else {
    model.arch.kind = ModelKind::generic;
    model.arch.model_type = "generic";
    model.arch.name = key;
    model.arch.source = r.file();
    model.arch.generic_params = r.number(node["params"], path + ".params", 1, 1e15);
    model.arch.flops_per_item = node["flops_per_item"] ? r.number(node["flops_per_item"], path + ".flops_per_item", 1, 1e18)
                                                       : 2 * model.arch.generic_params;
    model.arch.activation_bytes_per_item =
        node["bytes_per_item"] ? r.number(node["bytes_per_item"], path + ".bytes_per_item", 0, 1e13) : 0;
  }
  if (const YAML::Node measured = node["service_time"]) {
    std::string where = path + ".service_time";
    r.check_keys(measured, where, {"accelerator", "batch_ms", "distribution", "cv"});
    if (model.arch.kind == ModelKind::decoder)
      r.fail(measured, where, "measured service times apply to non-LLM models; LLMs use the step-time model");
    if (!measured["accelerator"] || !measured["batch_ms"]) r.fail(measured, where, "give accelerator and batch_ms");
    MeasuredServiceTime m;
    m.accelerator = r.text(measured["accelerator"], where + ".accelerator");
    const YAML::Node points = measured["batch_ms"];
    if (!points.IsMap() || points.size() == 0) r.fail(points, where + ".batch_ms", "a mapping of batch size to milliseconds");
    for (const auto& point : points) {
      double batch = r.number(point.first, where + ".batch_ms", 1, 1e7);
      double ms = r.number(point.second, where + ".batch_ms", 1e-6, 1e9);
      m.batch_seconds.emplace_back(batch, ms / 1e3);
    }
    std::sort(m.batch_seconds.begin(), m.batch_seconds.end());
    if (measured["distribution"]) {
      m.distribution = r.text(measured["distribution"], where + ".distribution");
      if (m.distribution != "constant" && m.distribution != "exponential" && m.distribution != "lognormal")
        r.fail(measured["distribution"], where + ".distribution", "one of constant, exponential, lognormal");
    }
    if (measured["cv"]) m.cv = r.number(measured["cv"], where + ".cv", 0, 10);
    if (m.distribution == "lognormal" && m.cv <= 0) r.fail(measured, where + ".cv", "a lognormal needs cv > 0");
    for (size_t i = 1; i < m.batch_seconds.size(); ++i)
      if (m.batch_seconds[i].second < m.batch_seconds[i - 1].second)
        r.fail(points, where + ".batch_ms", "a larger batch cannot take less time than a smaller one");
    model.measured = m;
  }
  if (node["precision"]) {
    std::string text = r.text(node["precision"], path + ".precision");
    auto precision = parse_precision(text);
    if (!precision) r.fail(node["precision"], path + ".precision", "'" + text + "' is not one of " + precision_choices());
    model.precision = *precision;
  }
  return model;
}

}  // namespace

double default_client_timeout_s(const Slo& slo) {
  double longest = 0;
  for (const auto& target : {slo.latency_p99_s, slo.latency_p50_s, slo.e2e_p99_s, slo.ttft_p99_s})
    if (target) longest = std::max(longest, *target);
  return std::max(kDefaultClientTimeoutS, 2 * longest);
}

std::string client_timeout_text(const Traffic& traffic) {
  if (traffic.client_timeout_s <= 0) return "clients wait as long as it takes (traffic.client_timeout_s: none)";
  return fmt::format("clients give up on a request not started {:.4g} s after it arrived (traffic.client_timeout_s{}): "
                     "counted as timed out and as SLO misses, never served",
                     traffic.client_timeout_s,
                     traffic.client_timeout_given ? ""
                                                  : ", default: the 60 s read timeout of ingress-nginx and AWS load balancers, "
                                                    "or twice the SLO's longest target where that is longer");
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
               {"rps", "profile", "trace", "trace_format", "time_scale", "process", "cv", "mmpp", "rates", "client_timeout_s"});
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
      if (!parsed) r.fail(traffic["trace_format"], path + ".traffic.trace_format", "one of auto, azure, csv, jsonl");
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

// services[].deployment: the replicas, batching and engine a simulation runs as given.
void read_deployment(const Reader& r, const YAML::Node& node, const std::string& path, [[maybe_unused]] const std::string& base_dir,
                  [[maybe_unused]] const ModelArch& arch, [[maybe_unused]] bool llm, ServiceSpec& s) {
  if (const YAML::Node d = node["deployment"]) {
    std::string where = path + ".deployment";
    r.check_keys(d, where, {"replicas", "accelerator", "tp", "batching", "max_batch", "max_queue_delay_ms",
                            "batch_timeout_ms", "chunked_prefill", "token_budget", "router", "scheduler", "preemption",
                            "watermark", "gpu_memory_utilization", "overhead_gib"});
    Deployment deployment;
    deployment.line = d.Mark().line + 1;
    if (!d["replicas"]) r.fail(d, where + ".replicas", "required: a count (with accelerator) or a list of groups");
    if (d["replicas"].IsSequence()) {
      for (const auto& group : d["replicas"]) {
        r.check_keys(group, where + ".replicas", {"accelerator", "tp", "count"});
        if (!group["accelerator"]) r.fail(group, where + ".replicas.accelerator", "required");
        DeploymentGroup g;
        g.accelerator = r.text(group["accelerator"], where + ".replicas.accelerator");
        if (group["tp"]) g.tensor_parallel = static_cast<int>(r.number(group["tp"], where + ".replicas.tp", 1, 64));
        if (group["count"]) g.count = static_cast<int>(r.number(group["count"], where + ".replicas.count", 1, 100000));
        deployment.groups.push_back(g);
      }
    } else {
      if (!d["accelerator"]) r.fail(d, where + ".accelerator", "required with a replica count");
      DeploymentGroup g;
      g.accelerator = r.text(d["accelerator"], where + ".accelerator");
      g.count = static_cast<int>(r.number(d["replicas"], where + ".replicas", 1, 100000));
      if (d["tp"]) g.tensor_parallel = static_cast<int>(r.number(d["tp"], where + ".tp", 1, 64));
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
    if (d["router"]) {
      deployment.router = r.text(d["router"], where + ".router");
      if (deployment.router != "round-robin" && deployment.router != "join-shortest-queue" &&
          deployment.router != "least-outstanding-tokens" && deployment.router != "shared-queue")
        r.fail(d["router"], where + ".router", "one of round-robin, join-shortest-queue, least-outstanding-tokens, shared-queue");
    }
    s.deployment = deployment;
  }
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
      const std::vector<std::string> known = {"static-peak", "cpu", "gpu-duty-cycle", "concurrency", "queue-depth", "scale-to-zero"};
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
    if (sc["model_uri"]) {
      c.model_uri = r.text(sc["model_uri"], where + ".model_uri");
      if (c.model_uri.rfind("s3://", 0) != 0 && c.model_uri.rfind("gs://", 0) != 0)
        r.fail(sc["model_uri"], where + ".model_uri", "'" + c.model_uri + "': weights are loaded from object storage at start-up: an s3:// or gs:// path");
      if (c.model_uri.find('/', 5) == std::string::npos)
        r.fail(sc["model_uri"], where + ".model_uri", "a versioned path under the bucket (s3://bucket/models/name/revision), not the bucket alone");
    }
    if (sc["image"]) c.image = r.text(sc["image"], where + ".image");
    if (sc["model_load_gbps"]) c.model_load_gbps = r.number(sc["model_load_gbps"], where + ".model_load_gbps", 0.001, 1000);
    if (sc["warm_pool"]) c.warm_pool = static_cast<int>(r.number(sc["warm_pool"], where + ".warm_pool", 0, 10000));
    if (sc["shapes"]) c.shapes = static_cast<int>(r.number(sc["shapes"], where + ".shapes", 1, 8));
    if (const YAML::Node t = sc["targets"]) {
      r.check_keys(t, where + ".targets", {"cpu_pct", "gpu_duty_cycle_pct", "queue_depth", "concurrency"});
      if (t["cpu_pct"]) c.cpu_target_pct = r.number(t["cpu_pct"], where + ".targets.cpu_pct", 1, 100);
      if (t["gpu_duty_cycle_pct"]) c.duty_cycle_target_pct = r.number(t["gpu_duty_cycle_pct"], where + ".targets.gpu_duty_cycle_pct", 1, 100);
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

ServiceSpec read_service(const Reader& r, const YAML::Node& node, size_t index, Spec& spec, const std::string& base_dir) {
  std::string path = fmt::format("services[{}]", index);
  r.check_keys(node, path, {"name", "model", "traffic", "tokens", "slo", "batching", "max_batch", "min_replicas",
                            "interruptible", "deployment", "scaling"});
  ServiceSpec s;
  s.line = node.Mark().line + 1;
  if (!node["name"]) r.fail(node, path + ".name", "required");
  s.name = r.text(node["name"], path + ".name");
  path = "services." + s.name;
  if (!node["model"]) r.fail(node, path + ".model", "required");
  s.model_key = r.text(node["model"], path + ".model");
  if (!spec.models.count(s.model_key)) {
    auto preset = load_preset(s.model_key);
    if (!preset.ok()) {
      std::vector<std::string> keys;
      for (const auto& [key, m] : spec.models) keys.push_back(key);
      std::string hint = closest_match(s.model_key, keys);
      r.fail(node["model"], path + ".model",
             "'" + s.model_key + "' is neither a key under models: nor a preset" +
                 (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
    ModelSpec model;
    model.key = s.model_key;
    model.arch = preset.value();
    model.line = node["model"].Mark().line + 1;
    spec.models[s.model_key] = model;
  }
  const ModelArch& arch = spec.models[s.model_key].arch;
  bool llm = arch.kind == ModelKind::decoder;

  read_traffic(r, node, path, base_dir, arch, llm, s);
  if (node["tokens"]) {
    const YAML::Node tokens = node["tokens"];
    r.check_keys(tokens, path + ".tokens", {"input", "output"});
    if (tokens["input"]) s.input_tokens = read_tokens(r, tokens["input"], path + ".tokens.input");
    if (tokens["output"]) s.output_tokens = read_tokens(r, tokens["output"], path + ".tokens.output");
  }
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
    if (llm && !s.slo.ttft_p99_s && !s.slo.tpot_p99_s && !s.slo.e2e_p99_s)
      r.fail(slo, path + ".slo", "an LLM service needs ttft_p99_s, tpot_p99_s or e2e_p99_s");
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

TrainingSpec read_training(const Reader& r, const YAML::Node& node, size_t index, Spec& spec, const std::string& base_dir) {
  std::string path = fmt::format("training[{}]", index);
  r.check_keys(node, path, {"name", "model", "tokens", "items", "deadline_days", "interruptible", "runs_per_month",
                            "sequence_length", "global_batch_tokens", "accelerators", "counts", "checkpoint", "spot",
                            "precision", "zero", "recompute", "allow_tcp_clusters"});
  TrainingSpec t;
  t.line = node.Mark().line + 1;
  if (!node["name"]) r.fail(node, path + ".name", "required");
  t.name = r.text(node["name"], path + ".name");
  path = "training." + t.name;
  if (!node["model"]) r.fail(node, path + ".model", "required");
  const YAML::Node model = node["model"];
  if (model.IsMap()) {
    // An inline model, as under models:.
    t.model_key = t.name + ".model";
    spec.models[t.model_key] = read_model(r, model, t.model_key, base_dir);
  } else {
    t.model_key = r.text(model, path + ".model");
    if (!spec.models.count(t.model_key)) {
      auto preset = load_preset(t.model_key);
      if (!preset.ok()) r.fail(model, path + ".model", "'" + t.model_key + "' is neither a key under models: nor a preset");
      ModelSpec m;
      m.key = t.model_key;
      m.arch = preset.value();
      m.line = model.Mark().line + 1;
      spec.models[t.model_key] = m;
    }
  }
  bool generic = spec.models[t.model_key].arch.kind == ModelKind::generic;
  if (node["tokens"]) t.tokens = r.count(node["tokens"], path + ".tokens", 1, 1e17);
  if (node["items"]) t.items = r.count(node["items"], path + ".items", 1, 1e17);
  if (generic && t.items <= 0) r.fail(node, path + ".items", "a non-transformer model trains on items (samples x epochs)");
  if (!generic && t.tokens <= 0) r.fail(node, path + ".tokens", "required: training tokens (at least 1)");
  if (node["deadline_days"]) t.deadline_days = r.number(node["deadline_days"], path + ".deadline_days", 1e-6, 1e5);
  if (node["interruptible"]) t.interruptible = r.flag(node["interruptible"], path + ".interruptible");
  if (node["runs_per_month"]) t.runs_per_month = r.number(node["runs_per_month"], path + ".runs_per_month", 0, 1e5);
  if (node["sequence_length"])
    t.sequence_length = static_cast<long long>(r.count(node["sequence_length"], path + ".sequence_length", 1, 1 << 24));
  if (node["global_batch_tokens"]) t.global_batch_tokens = r.count(node["global_batch_tokens"], path + ".global_batch_tokens", 1, 1e12);
  if (node["accelerators"]) t.accelerators = r.strings(node["accelerators"], path + ".accelerators");
  if (node["precision"]) {
    std::string text = r.text(node["precision"], path + ".precision");
    auto precision = parse_precision(text);
    if (!precision || (*precision != Precision::bf16 && *precision != Precision::fp16 && *precision != Precision::fp32 &&
                       *precision != Precision::fp8))
      r.fail(node["precision"], path + ".precision", "'" + text + "': training precision is bf16, fp16, fp32 or fp8");
    t.precision = *precision;
    t.precision_line = node["precision"].Mark().line + 1;
  }
  if (node["zero"]) t.zero_stage = static_cast<int>(r.number(node["zero"], path + ".zero", 0, 3));
  if (node["recompute"]) {
    std::string text = r.text(node["recompute"], path + ".recompute");
    t.recompute = parse_recompute(text);
    if (!t.recompute) r.fail(node["recompute"], path + ".recompute", "'" + text + "' is not one of none, selective, full");
  }
  if (node["allow_tcp_clusters"]) t.allow_tcp_clusters = r.flag(node["allow_tcp_clusters"], path + ".allow_tcp_clusters");
  if (const YAML::Node counts = node["counts"]) {
    if (counts.IsScalar()) {
      t.counts.push_back(static_cast<int>(r.number(counts, path + ".counts", 1, 1 << 20)));
    } else {
      for (const auto& c : counts) t.counts.push_back(static_cast<int>(r.number(c, path + ".counts", 1, 1 << 20)));
    }
  }
  if (const YAML::Node checkpoint = node["checkpoint"]) {
    r.check_keys(checkpoint, path + ".checkpoint", {"storage_gbps", "interval_min"});
    if (checkpoint["storage_gbps"]) t.storage_gbps = r.number(checkpoint["storage_gbps"], path + ".checkpoint.storage_gbps", 1e-3, 1e6);
    if (checkpoint["interval_min"]) t.checkpoint_interval_min = r.number(checkpoint["interval_min"], path + ".checkpoint.interval_min", 0.1, 1e6);
  }
  if (const YAML::Node spot = node["spot"]) {
    r.check_keys(spot, path + ".spot", {"preemptions_per_hour", "trace"});
    if (spot["preemptions_per_hour"])
      t.preemptions_per_hour = r.number(spot["preemptions_per_hour"], path + ".spot.preemptions_per_hour", 0, 3600);
    if (spot["trace"]) {
      std::string trace = r.text(spot["trace"], path + ".spot.trace");
      t.spot_trace = std::filesystem::path(trace).is_absolute() ? trace : (std::filesystem::path(base_dir) / trace).string();
    }
  }
  return t;
}

// YAML maps with a key twice keep one value silently: reject them. Each node is visited once
// (aliases share their anchor's node), so an alias bomb costs its size in the file, not its
// expansion.
void reject_duplicate_keys(const Reader& r, const YAML::Node& node, std::set<size_t>& visited) {
  if (!node.IsMap() && !node.IsSequence()) return;
  if (!visited.insert(static_cast<size_t>(node.Mark().pos)).second) return;
  if (node.IsSequence()) {
    for (const auto& item : node) reject_duplicate_keys(r, item, visited);
    return;
  }
  std::set<std::string> keys;
  for (const auto& entry : node) {
    if (entry.first.IsScalar() && !keys.insert(entry.first.Scalar()).second)
      r.fail(entry.first, entry.first.Scalar(), "duplicate key (YAML would keep only one of them)");
    reject_duplicate_keys(r, entry.second, visited);
  }
}

// fleet.projects: teams' GPU demand by schedule on a shared pool.
void read_projects(const Reader& r, const YAML::Node& node, const std::string& path, [[maybe_unused]] Spec& spec, FleetSpec& fleet) {
  if (const YAML::Node projects = node["projects"]) {
    if (!projects.IsSequence()) r.fail(projects, path + ".projects", "expected a list of projects");
    for (size_t i = 0; i < projects.size(); ++i) {
      const YAML::Node p = projects[i];
      std::string where = fmt::format("{}.projects[{}]", path, i);
      r.check_keys(p, where, {"name", "gpus", "peak_gpus", "peak_hours", "schedule", "duration_hours", "shiftable"});
      FleetProjectSpec project;
      project.line = p.Mark().line + 1;
      if (!p["name"]) r.fail(p, where + ".name", "required");
      project.name = r.text(p["name"], where + ".name");
      where = path + ".projects." + project.name;
      if (!p["gpus"]) r.fail(p, where + ".gpus", "required");
      project.gpus = static_cast<int>(r.number(p["gpus"], where + ".gpus", 1, 100000));
      if (p["peak_gpus"]) {
        project.peak_gpus = static_cast<int>(r.number(p["peak_gpus"], where + ".peak_gpus", 1, 100000));
        if (project.peak_gpus < project.gpus) r.fail(p["peak_gpus"], where + ".peak_gpus", "below gpus");
      }
      if (const YAML::Node hours = p["peak_hours"]) {
        if (!hours.IsSequence() || hours.size() != 2) r.fail(hours, where + ".peak_hours", "give [from, to] hours of the day, e.g. [9, 17]");
        project.peak_from_hour = static_cast<int>(r.number(hours[0], where + ".peak_hours", 0, 23));
        project.peak_to_hour = static_cast<int>(r.number(hours[1], where + ".peak_hours", 1, 24));
        if (project.peak_to_hour <= project.peak_from_hour) r.fail(hours, where + ".peak_hours", "the window must end after it starts");
      }
      if (p["schedule"]) {
        project.schedule = r.text(p["schedule"], where + ".schedule");
        std::string why;
        if (!parse_cron(project.schedule, &why)) r.fail(p["schedule"], where + ".schedule", why);
        if (!p["duration_hours"]) r.fail(p, where + ".duration_hours", "a scheduled project needs duration_hours");
        project.duration_hours = r.number(p["duration_hours"], where + ".duration_hours", 1.0 / 60, 24 * 7);
        if (project.peak_gpus) r.fail(p["peak_gpus"], where + ".peak_gpus", "peak_gpus is for always-on projects (no schedule)");
      } else if (p["duration_hours"]) {
        r.fail(p["duration_hours"], where + ".duration_hours", "duration_hours needs a schedule (without one a project runs always)");
      }
      if (p["shiftable"]) project.shiftable = r.flag(p["shiftable"], where + ".shiftable");
      for (const auto& other : fleet.projects)
        if (other.name == project.name) r.fail(p["name"], where, "duplicate project name");
      fleet.projects.push_back(project);
    }
  }
}

// fleet.buy_vs_rent: owning a cluster (purchase, power, colocation, staff) against renting.
void read_buy_vs_rent(const Reader& r, const YAML::Node& node, const std::string& path, [[maybe_unused]] Spec& spec, FleetSpec& fleet) {
  if (const YAML::Node b = node["buy_vs_rent"]) {
    std::string where = path + ".buy_vs_rent";
    r.check_keys(b, where, {"gpus", "purchase_usd", "overhead_fraction", "life_years", "utilization", "on_demand_usd_per_gpu_hour",
                            "reserved_1y_usd_per_gpu_hour", "reserved_3y_usd_per_gpu_hour", "spot_usd_per_gpu_hour", "accelerator",
                            "watts_per_gpu", "pue", "usd_per_kwh", "colocation_usd_per_kw_month", "networking_fraction",
                            "staff_usd_per_gpu_month", "cost_of_capital", "resale_fraction"});
    BuyVsRentSpec buy;
    buy.line = b.Mark().line + 1;
    for (const char* key : {"gpus", "purchase_usd", "on_demand_usd_per_gpu_hour"})
      if (!b[key]) r.fail(b, where + "." + key, "required");
    buy.gpus = static_cast<int>(r.number(b["gpus"], where + ".gpus", 1, 1e6));
    buy.purchase_usd = r.number(b["purchase_usd"], where + ".purchase_usd", 1, 1e12);
    buy.on_demand_usd_per_gpu_hour = r.number(b["on_demand_usd_per_gpu_hour"], where + ".on_demand_usd_per_gpu_hour", 1e-6, 1e5);
    if (b["overhead_fraction"]) buy.overhead_fraction = r.number(b["overhead_fraction"], where + ".overhead_fraction", 0, 10);
    if (b["accelerator"]) {
      buy.accelerator = r.text(b["accelerator"], where + ".accelerator");
      buy.accelerator_line = b["accelerator"].Mark().line + 1;
    }
    auto term = [&](const char* key, double& out, double min, double max) {
      if (b[key]) out = r.number(b[key], where + "." + key, min, max);
    };
    term("watts_per_gpu", buy.watts_per_gpu, 1, 1e5);
    term("pue", buy.pue, 1, 5);
    term("usd_per_kwh", buy.usd_per_kwh, 0, 10);
    term("colocation_usd_per_kw_month", buy.colocation_usd_per_kw_month, 0, 1e5);
    term("networking_fraction", buy.networking_fraction, 0, 10);
    term("staff_usd_per_gpu_month", buy.staff_usd_per_gpu_month, 0, 1e6);
    term("cost_of_capital", buy.cost_of_capital, 0, 1);
    term("resale_fraction", buy.resale_fraction, 0, 0.99);
    if (!buy.overhead_fraction && !b["accelerator"] && !b["watts_per_gpu"])
      r.fail(b, where + ".accelerator", "power needs the GPUs' watts: name the accelerator (its TDP from the catalog) or give watts_per_gpu "
                                        "(or one overhead_fraction for power, colocation, networking and staff)");
    if (b["life_years"]) buy.life_years = r.number(b["life_years"], where + ".life_years", 0.25, 20);
    if (b["utilization"]) buy.utilization = r.number(b["utilization"], where + ".utilization", 0, 1);
    if (b["reserved_1y_usd_per_gpu_hour"]) buy.reserved_1y_usd_per_gpu_hour = r.number(b["reserved_1y_usd_per_gpu_hour"], where + ".reserved_1y_usd_per_gpu_hour", 0, 1e5);
    if (b["reserved_3y_usd_per_gpu_hour"]) buy.reserved_3y_usd_per_gpu_hour = r.number(b["reserved_3y_usd_per_gpu_hour"], where + ".reserved_3y_usd_per_gpu_hour", 0, 1e5);
    if (b["spot_usd_per_gpu_hour"]) buy.spot_usd_per_gpu_hour = r.number(b["spot_usd_per_gpu_hour"], where + ".spot_usd_per_gpu_hour", 0, 1e5);
    if (!buy.utilization && fleet.projects.empty())
      r.fail(b, where + ".utilization", "required unless fleet.projects gives the demand");
    fleet.buy_vs_rent = buy;
  }
}

// fleet.what_if: optimizations of one service (batching, quantization, caching, cascades).
void read_what_if(const Reader& r, const YAML::Node& node, const std::string& path, [[maybe_unused]] Spec& spec, FleetSpec& fleet) {
  if (const YAML::Node w = node["what_if"]) {
    std::string where = path + ".what_if";
    r.check_keys(w, where, {"service", "current", "engineering_usd_per_week", "steps"});
    WhatIfSpec what;
    what.line = w.Mark().line + 1;
    if (!w["service"]) r.fail(w, where + ".service", "required: a service of this spec");
    what.service = r.text(w["service"], where + ".service");
    bool found = false;
    for (const auto& svc : spec.services) found = found || svc.name == what.service;
    if (!found) r.fail(w["service"], where + ".service", "no service named '" + what.service + "' in this spec (services come before fleet)");
    const YAML::Node current = w["current"];
    if (!current) r.fail(w, where + ".current", "required: {accelerator, gpus, usd_per_month} of what runs today");
    r.check_keys(current, where + ".current", {"accelerator", "gpus", "usd_per_month"});
    for (const char* key : {"accelerator", "gpus", "usd_per_month"})
      if (!current[key]) r.fail(current, where + ".current." + key, "required");
    what.accelerator = r.text(current["accelerator"], where + ".current.accelerator");
    what.gpus = static_cast<int>(r.number(current["gpus"], where + ".current.gpus", 1, 1e6));
    what.usd_per_month = r.number(current["usd_per_month"], where + ".current.usd_per_month", 0, 1e12);
    if (!w["engineering_usd_per_week"]) r.fail(w, where + ".engineering_usd_per_week", "required: the cost of a week of engineering");
    what.engineering_usd_per_week = r.number(w["engineering_usd_per_week"], where + ".engineering_usd_per_week", 0, 1e9);
    const YAML::Node steps = w["steps"];
    if (!steps || !steps.IsSequence() || steps.size() == 0) r.fail(w, where + ".steps", "a list of optimizations, applied in order");
    for (size_t i = 0; i < steps.size(); ++i) {
      const YAML::Node st = steps[i];
      std::string at = fmt::format("{}.steps[{}]", where, i);
      r.check_keys(st, at, {"name", "weeks", "batching", "precision", "cache_hit_rate", "small_model", "small_share", "distill_to"});
      WhatIfStepSpec step;
      step.line = st.Mark().line + 1;
      if (!st["name"]) r.fail(st, at + ".name", "required");
      step.name = r.text(st["name"], at + ".name");
      if (st["weeks"]) step.weeks = r.number(st["weeks"], at + ".weeks", 0, 520);
      int kinds = 0;
      if (st["batching"]) {
        ++kinds;
        step.batching = r.text(st["batching"], at + ".batching");
        if (step.batching != "dynamic" && step.batching != "continuous" && step.batching != "none")
          r.fail(st["batching"], at + ".batching", "one of none, dynamic, continuous");
      }
      if (st["precision"]) {
        ++kinds;
        auto precision = parse_precision(r.text(st["precision"], at + ".precision"));
        if (!precision) r.fail(st["precision"], at + ".precision", "one of " + precision_choices());
        step.precision = *precision;
      }
      if (st["cache_hit_rate"]) {
        ++kinds;
        step.cache_hit_rate = r.number(st["cache_hit_rate"], at + ".cache_hit_rate", 0, 0.99);
      }
      if (st["small_model"]) {
        ++kinds;
        step.small_model = r.text(st["small_model"], at + ".small_model");
        if (!st["small_share"]) r.fail(st, at + ".small_share", "a cascade needs the share of requests the small model settles");
        step.small_share = r.number(st["small_share"], at + ".small_share", 0, 1);
      }
      if (st["distill_to"]) {
        ++kinds;
        step.distill_to = r.text(st["distill_to"], at + ".distill_to");
      }
      if (kinds != 1) r.fail(st, at, "give exactly one of batching, precision, cache_hit_rate, small_model (with small_share), distill_to");
      for (const std::string& name : {step.small_model, step.distill_to})
        if (!name.empty() && !spec.models.count(name) && !load_preset(name).ok())
          r.fail(st, at, "'" + name + "' is neither a key under models: nor a preset");
      what.steps.push_back(step);
    }
    fleet.what_if = what;
  }
}

FleetSpec read_fleet(const Reader& r, const YAML::Node& node, Spec& spec) {
  const std::string path = "fleet";
  r.check_keys(node, path, {"shared_pools", "bucket_mix", "projects", "usd_per_gpu_hour", "buy_vs_rent", "what_if"});
  FleetSpec fleet;
  fleet.line = node.Mark().line + 1;
  if (node["shared_pools"]) {
    fleet.shared_pools = r.flag(node["shared_pools"], path + ".shared_pools");
    if (fleet.shared_pools && spec.services.size() < 2)
      r.fail(node["shared_pools"], path + ".shared_pools", "needs at least two services to share pools");
  }
  if (node["usd_per_gpu_hour"]) fleet.usd_per_gpu_hour = r.number(node["usd_per_gpu_hour"], path + ".usd_per_gpu_hour", 0, 1e5);
  if (const YAML::Node mix = node["bucket_mix"]) {
    std::string where = path + ".bucket_mix";
    r.check_keys(mix, where, {"service", "buckets"});
    BucketMixSpec m;
    m.line = mix.Mark().line + 1;
    if (!mix["service"]) r.fail(mix, where + ".service", "required: an LLM service of this spec");
    m.service = r.text(mix["service"], where + ".service");
    auto found = std::find_if(spec.services.begin(), spec.services.end(), [&](const ServiceSpec& s) { return s.name == m.service; });
    if (found == spec.services.end()) r.fail(mix["service"], where + ".service", "no service named '" + m.service + "' in this spec");
    if (spec.models.at(found->model_key).arch.kind != ModelKind::decoder)
      r.fail(mix["service"], where + ".service", "buckets by prompt length apply to LLM services");
    if (mix["buckets"]) m.buckets = static_cast<int>(r.number(mix["buckets"], where + ".buckets", 1, 8));
    fleet.bucket_mix = m;
  }
  read_projects(r, node, path, spec, fleet);
  read_buy_vs_rent(r, node, path, spec, fleet);
  read_what_if(r, node, path, spec, fleet);
  if (fleet.projects.empty() && !fleet.buy_vs_rent && !fleet.what_if && !fleet.shared_pools && !fleet.bucket_mix)
    r.fail(node, path, "give shared_pools, bucket_mix, projects, buy_vs_rent or what_if");
  return fleet;
}

}  // namespace

Result<Spec> parse_spec(const std::string& text, const std::string& path) {
  Spec spec;
  spec.path = path;
  Reader r(path);
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  try {
    if (auto problem = encoding_problem(text)) return Error{path, 0, "", *problem + ": not a YAML spec"};
    YAML::Node root = YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) return Error{path, 0, "", "empty spec"};
    std::set<size_t> visited;
    reject_duplicate_keys(r, root, visited);
    r.check_keys(root, "", {"version", "name", "constraints", "models", "services", "batch_jobs", "training", "fleet"});
    if (root["version"] && r.number(root["version"], "version", 1, 1) != 1) r.fail(root["version"], "version", "only version 1");
    if (root["name"]) spec.name = r.text(root["name"], "name");
    if (const YAML::Node c = root["constraints"]) {
      r.check_keys(c, "constraints", {"clouds", "regions", "accelerators", "pricing", "budget_usd_per_month",
                                      "headroom", "max_utilization", "quotas", "cpu_architectures"});
      // Each entry's line, for the checks against the catalog (plan/spec_names.h).
      auto lines = [](const YAML::Node& list) {
        std::vector<int> out;
        if (list.IsSequence())
          for (const auto& item : list) out.push_back(item.Mark().line + 1);
        else
          out.push_back(list.Mark().line + 1);
        return out;
      };
      auto names = [&](const YAML::Node& list, const std::string& key, std::vector<std::string>& out, std::vector<int>& out_lines) {
        out = r.strings(list, key);
        out_lines = lines(list);
      };
      Constraints& k = spec.constraints;
      if (c["clouds"]) names(c["clouds"], "constraints.clouds", k.clouds, k.cloud_lines);
      if (c["regions"]) names(c["regions"], "constraints.regions", k.regions, k.region_lines);
      if (const YAML::Node a = c["accelerators"]) {
        if (a.IsMap()) {
          r.check_keys(a, "constraints.accelerators", {"include", "exclude"});
          spec.constraints.accelerators_as_mapping = true;
          if (a["include"])
            names(a["include"], "constraints.accelerators.include", k.accelerators_include, k.accelerator_include_lines);
          if (a["exclude"])
            names(a["exclude"], "constraints.accelerators.exclude", k.accelerators_exclude, k.accelerator_exclude_lines);
        } else {
          names(a, "constraints.accelerators", k.accelerators_include, k.accelerator_include_lines);
        }
      }
      if (c["pricing"]) {
        spec.constraints.pricing.clear();
        for (const auto& item : c["pricing"].IsSequence() ? c["pricing"] : YAML::Node(std::vector<YAML::Node>{c["pricing"]})) {
          auto pricing = parse_pricing(r.text(item, "constraints.pricing"));
          if (!pricing) r.fail(item, "constraints.pricing", "one of on-demand, spot, reserved-1y, reserved-3y");
          spec.constraints.pricing.push_back(*pricing);
        }
      }
      if (c["cpu_architectures"]) {
        const YAML::Node list = c["cpu_architectures"];
        for (const auto& item : list.IsSequence() ? list : YAML::Node(std::vector<YAML::Node>{list})) {
          auto arch = parse_cpu_architecture(r.text(item, "constraints.cpu_architectures"));
          if (!arch) r.fail(item, "constraints.cpu_architectures", "one of x86_64 (amd64), arm64 (aarch64)");
          spec.constraints.cpu_architectures.emplace_back(*arch);
        }
      }
      if (c["budget_usd_per_month"])
        spec.constraints.budget_usd_per_month = r.number(c["budget_usd_per_month"], "constraints.budget_usd_per_month", 0, 1e12);
      if (c["headroom"]) spec.constraints.max_utilization = 1 - r.number(c["headroom"], "constraints.headroom", 0, 0.95);
      if (c["max_utilization"])
        spec.constraints.max_utilization = r.number(c["max_utilization"], "constraints.max_utilization", 0.05, 1.0);
      if (const YAML::Node q = c["quotas"]) {
        if (!q.IsMap()) r.fail(q, "constraints.quotas", "a mapping of cloud (or cloud/region) to {quota family: amount}");
        for (const auto& cloud : q) {
          std::string key = cloud.first.as<std::string>();
          std::string where = "constraints.quotas." + key;
          if (!cloud.second.IsMap()) r.fail(cloud.second, where, "a mapping of quota family to amount, e.g. {running-on-demand-p-instances-vcpu: 96}");
          for (const auto& family : cloud.second) {
            spec.constraints.quotas[key][family.first.as<std::string>()] =
                r.number(family.second, where + "." + family.first.as<std::string>(), 0, 1e9);
            spec.constraints.quota_lines[key][family.first.as<std::string>()] = family.first.Mark().line + 1;
          }
        }
      }
    }
    if (const YAML::Node models = root["models"]) {
      if (!models.IsMap()) r.fail(models, "models", "expected a mapping of model names");
      for (const auto& entry : models) {
        std::string key = entry.first.as<std::string>();
        spec.models[key] = read_model(r, entry.second, key, base_dir);
      }
    }
    if (root["batch_jobs"]) spec.not_planned.push_back(fmt::format("batch_jobs ({} entries)", root["batch_jobs"].size()));
    if (const YAML::Node training = root["training"]) {
      if (!training.IsSequence()) r.fail(training, "training", "expected a list of training jobs");
      for (size_t i = 0; i < training.size(); ++i) spec.training.push_back(read_training(r, training[i], i, spec, base_dir));
    }
    if (!root["services"]) {
      if (spec.not_planned.empty() && spec.training.empty() && !root["fleet"])
        r.fail(root, "services", "required: at least one service or training job to plan");
    } else {
      const YAML::Node services = root["services"];
      if (!services.IsSequence() || services.size() == 0) r.fail(services, "services", "expected a non-empty list of services");
      for (size_t i = 0; i < services.size(); ++i) {
        ServiceSpec service = read_service(r, services[i], i, spec, base_dir);
        for (const auto& other : spec.services)
          if (other.name == service.name) r.fail(services[i]["name"], "services." + service.name, "duplicate service name");
        spec.services.push_back(std::move(service));
      }
    }
    if (const YAML::Node fleet = root["fleet"]) spec.fleet = read_fleet(r, fleet, spec);
  } catch (const SpecError& e) {
    return e.error;
  } catch (const YAML::DeepRecursion& e) {
    return Error{path, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", fmt::format("invalid YAML: nested deeper than {} levels", e.depth())};
  } catch (const YAML::Exception& e) {
    // yaml-cpp's "illegal map value" for tab indentation does not say why.
    std::string hint;
    for (size_t at = 0, line = 1; at < text.size(); at = text.find('\n', at) + 1, ++line) {
      if (text[at] == '\t') {
        hint = fmt::format(" (YAML indents with spaces, not tabs: line {} starts with a tab)", line);
        break;
      }
      if (text.find('\n', at) == std::string::npos) break;
    }
    return Error{path, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "invalid YAML: " + e.msg + hint};
  }
  return spec;
}

std::optional<Error> require_slos(const Spec& spec, std::string_view command) {
  for (const auto& service : spec.services)
    if (!service.slo_given)
      return Error{spec.path, service.line, "services." + service.name + ".slo",
                   fmt::format("required to {}: latency targets (only `gpuwise simulate` of a given deployment runs without them)", command)};
  return std::nullopt;
}

Result<Spec> load_spec(const std::string& path) {
  std::string text, message;
  if (!read_file(path, text, message)) return Error{path, 0, "", "cannot read: " + message};
  return parse_spec(text, path);
}

}  // namespace gw
