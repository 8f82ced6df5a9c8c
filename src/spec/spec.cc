#include "spec/spec.h"
#include "spec/spec_reader.h"

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

using namespace spec_reading;


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
    model.weight_format = weight_format_of(text);
  } else if (!model.arch.checkpoint_precision.empty()) {
    // None given: the checkpoint's own format, as vLLM serves it (gpt-oss: mxfp4).
    model.precision = parse_precision(model.arch.checkpoint_precision).value_or(Precision::bf16);
    model.weight_format = weight_format_of(model.arch.checkpoint_precision);
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
    if (const YAML::Node jobs = root["batch_jobs"]) {
      if (!jobs.IsSequence()) r.fail(jobs, "batch_jobs", "expected a list of batch jobs");
      for (size_t i = 0; i < jobs.size(); ++i) {
        BatchJobSpec job = read_batch_job(r, jobs[i], i, spec);
        for (const auto& other : spec.batch_jobs)
          if (other.name == job.name) r.fail(jobs[i]["name"], "batch_jobs." + job.name, "duplicate batch job name");
        spec.batch_jobs.push_back(std::move(job));
      }
    }
    if (const YAML::Node training = root["training"]) {
      if (!training.IsSequence()) r.fail(training, "training", "expected a list of training jobs");
      for (size_t i = 0; i < training.size(); ++i) spec.training.push_back(read_training(r, training[i], i, spec, base_dir));
    }
    if (!root["services"]) {
      if (spec.not_planned.empty() && spec.training.empty() && spec.batch_jobs.empty() && !root["fleet"])
        r.fail(root, "services", "required: at least one service, batch job or training job to plan");
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
