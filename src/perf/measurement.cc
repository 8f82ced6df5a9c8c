#include "perf/measurement.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>

#include "core/csv.h"
#include "model/presets.h"
#include "perf/step_time.h"
#include "perf/throughput.h"
#include "perf/decode_attention_kernel.h"
#include "perf/layer_operators.h"

namespace gw {

Result<std::vector<Measurement>> read_measurements(std::string_view text, const std::string& file,
                                                   const Catalog& catalog) {
  auto table = parse_csv(text, file);
  if (!table.ok()) return table.error();
  for (const auto& column : {"accelerator", "model", "phase", "batch", "tokens", "latency_ms"})
    if (table.value().column(column) < 0) return Error{file, 1, column, "missing column in the header"};
  std::vector<Measurement> out;
  std::map<std::string, Result<RequestLengths>> lengths_files;  // read once however many rows name them
  for (const auto& row : table.value().rows) {
    CsvRecord record(table.value(), row);
    Measurement m;
    m.line = row.line;
    std::string accelerator = record.required_text("accelerator");
    m.model = record.required_text("model");
    m.phase = record.required_text("phase");
    m.batch = record.number("batch", 1, 1e7);
    m.tokens = record.number("tokens", 0, 1e8);
    m.output_tokens = record.optional_number("output_tokens", 0, 1e8).value_or(0);
    m.latency_ms = record.number("latency_ms", 1e-6, 1e9);
    m.tensor_parallel = static_cast<int>(record.optional_number("tp", 1, 1024).value_or(1));
    m.kv_memory_fraction = record.optional_number("kv_memory_fraction", 0.01, 1).value_or(0);
    m.tpot_limit_ms = record.optional_number("tpot_ms", 0.01, 1e6).value_or(0);
    m.source = record.text("source");
    if (!record.ok()) return record.error();
    const Accelerator* a = catalog.find_accelerator(accelerator);
    if (!a) return Error{file, row.line, "accelerator", "unknown accelerator '" + accelerator + "'"};
    m.accelerator = a->name;
    std::string precision = record.text("precision");
    if (!precision.empty()) {
      auto p = parse_precision(precision);
      if (!p) return Error{file, row.line, "precision", "'" + precision + "' is not one of " + precision_choices()};
      m.precision = *p;
    }
    std::string kernel = record.text("decode_attention");
    auto per_query_head = kernel.empty() ? std::optional<bool>(false) : decode_attention_per_query_head(kernel);
    if (!per_query_head) return Error{file, row.line, "decode_attention", unknown_decode_attention_message(kernel)};
    m.decode_attention_per_query_head = *per_query_head;
    if (m.phase != "prefill" && m.phase != "decode" && m.phase != "static" && m.phase != "items" && m.phase != "throughput")
      return Error{file, row.line, "phase", "'" + m.phase + "' is not one of prefill, decode, static, items, throughput"};
    if ((m.phase == "static" || m.phase == "throughput") && m.output_tokens < 1)
      return Error{file, row.line, "output_tokens", "a " + m.phase + " row needs output_tokens >= 1"};
    if (m.phase == "throughput" && m.tokens < 1)
      return Error{file, row.line, "tokens", "a throughput row needs tokens (input tokens per request) >= 1"};
    if (m.tpot_limit_ms > 0 && m.phase != "throughput")
      return Error{file, row.line, "tpot_ms", "a bound on the time per output token applies to throughput rows, not " +
                                                  m.phase};
    m.lengths_file = record.text("lengths");
    if (!m.lengths_file.empty()) {
      if (m.phase != "throughput")
        return Error{file, row.line, "lengths", "request lengths apply to throughput rows, not " + m.phase};
      auto found = lengths_files.find(m.lengths_file);
      if (found == lengths_files.end())
        found = lengths_files.emplace(m.lengths_file, read_request_lengths_file(m.lengths_file)).first;
      if (!found->second.ok()) return Error{file, row.line, "lengths", found->second.error().to_string()};
      m.lengths = found->second.value();
      // The file's requests are the row's: their means are what the row states.
      auto agrees = [](double mean, double stated) { return std::fabs(mean - stated) <= 0.02 * stated; };
      if (!agrees(m.lengths.mean_input_tokens, m.tokens) || !agrees(m.lengths.mean_output_tokens, m.output_tokens))
        return Error{file, row.line, "lengths",
                     fmt::format("'{}' averages {:.2f} input and {:.2f} output tokens, not within 2% of the row's {} "
                                 "and {}",
                                 m.lengths_file, m.lengths.mean_input_tokens, m.lengths.mean_output_tokens, m.tokens,
                                 m.output_tokens)};
    }
    out.push_back(m);
  }
  if (out.empty()) return Error{file, 0, "", "no measurements"};
  return out;
}

double predict_latency_ms(const Measurement& m, const ModelArch& arch, const Accelerator& accelerator,
                          const EfficiencyFactors& factors, bool by_operator) {
  PerfSetup setup;
  setup.accelerator = &accelerator;
  if (by_operator) use_layer_operators(setup, nullptr);
  setup.tensor_parallel = m.tensor_parallel;
  setup.weight_precision = m.precision;
  // Engines that run fp8 weights keep an fp8 KV cache (TensorRT-LLM --fp8_kv_cache).
  setup.kv_precision = m.precision == Precision::fp8 ? Precision::fp8 : Precision::bf16;
  setup.efficiency = factors;
  setup.decode_attention_per_query_head = m.decode_attention_per_query_head;
  if (m.phase == "throughput") {
    // The replica's KV cache sized as the row's engine sizes it (else as plans do); the engine
    // admits at most `batch`.
    MemoryEstimate memory;
    double free = kv_cache_free_bytes(arch, accelerator, setup.weight_precision, setup.kv_precision, m.tensor_parallel,
                                      &memory, m.kv_memory_fraction);
    RequestLengths lengths = m.lengths.requests > 0 ? m.lengths : RequestLengths::fixed(m.tokens, m.output_tokens);
    Throughput t = continuous_max_throughput_within_tpot(arch, setup, memory.kv_cache_bytes_per_token, free, lengths,
                                                         m.batch, m.tpot_limit_ms * 1e-3);
    return t.tokens_per_s > 0 ? 1e3 / t.tokens_per_s : std::numeric_limits<double>::infinity();
  }
  if (m.phase == "prefill") return prefill_step(arch, setup, m.batch, m.tokens).time_s * 1e3;
  if (m.phase == "decode") return decode_step(arch, setup, m.batch, m.tokens).time_s * 1e3;
  if (m.phase == "static")
    return static_batch_throughput(arch, setup, m.batch, m.tokens, m.output_tokens).latency_s * 1e3;
  double tokens = m.tokens > 0 ? m.tokens : arch.patch_size > 0 ? std::pow(arch.image_size / arch.patch_size, 2) + 1 : 128;
  return item_step(arch, setup, m.batch, tokens).time_s * 1e3;
}

namespace {

double loss(const std::vector<Measurement>& ms, const std::vector<ModelArch>& models, const Accelerator& a,
            const EfficiencyFactors& f) {
  double sum = 0;
  for (size_t i = 0; i < ms.size(); ++i) {
    double e = std::log(predict_latency_ms(ms[i], models[i], a, f) / ms[i].latency_ms);
    sum += e * e;
  }
  return sum / std::max<size_t>(1, ms.size());
}

}  // namespace

FitResult fit_efficiency(const std::vector<Measurement>& ms, const std::vector<ModelArch>& models,
                         const Accelerator& a, EfficiencyFactors f) {
  struct Dimension {
    double EfficiencyFactors::*field;
    double low, high;
  };
  // Physical bounds: efficiencies within (0, 1]; overhead up to 0.5 ms per layer.
  const Dimension dimensions[] = {{&EfficiencyFactors::compute, 0.05, 1.0},
                                  {&EfficiencyFactors::compute_8bit, 0.05, 1.0},
                                  {&EfficiencyFactors::memory, 0.10, 1.0},
                                  {&EfficiencyFactors::overhead_per_layer_s, 0.0, 5e-4}};
  double best = loss(ms, models, a, f);
  for (int round = 0; round < 6; ++round) {
    for (const auto& d : dimensions) {
      // Golden-section search on one factor with the others fixed.
      double lo = d.low, hi = d.high;
      const double g = (std::sqrt(5.0) - 1) / 2;
      for (int it = 0; it < 40; ++it) {
        double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
        EfficiencyFactors f1 = f, f2 = f;
        f1.*d.field = x1;
        f2.*d.field = x2;
        if (loss(ms, models, a, f1) < loss(ms, models, a, f2)) {
          hi = x2;
        } else {
          lo = x1;
        }
      }
      EfficiencyFactors candidate = f;
      candidate.*d.field = (lo + hi) / 2;
      double value = loss(ms, models, a, candidate);
      if (value < best) {
        best = value;
        f = candidate;
      }
    }
  }
  FitResult result;
  result.factors = f;
  result.measurements = static_cast<int>(ms.size());
  std::vector<double> errors;
  for (size_t i = 0; i < ms.size(); ++i)
    errors.push_back(std::fabs(predict_latency_ms(ms[i], models[i], a, f) / ms[i].latency_ms - 1));
  std::sort(errors.begin(), errors.end());
  result.median_abs_error = errors.empty() ? 0 : errors[errors.size() / 2];
  return result;
}

Result<Calibration> calibrate(const std::vector<Measurement>& measurements, const Catalog& catalog) {
  std::map<std::string, std::pair<std::vector<Measurement>, std::vector<ModelArch>>> by_accelerator;
  for (const auto& m : measurements) {
    auto arch = resolve_model(m.model);
    if (!arch.ok()) {
      Error e = arch.error();
      e.line = m.line;
      e.field = "model";
      return e;
    }
    by_accelerator[m.accelerator].first.push_back(m);
    by_accelerator[m.accelerator].second.push_back(arch.value());
  }
  Calibration calibration;
  for (auto& [name, data] : by_accelerator) {
    const Accelerator* a = catalog.find_accelerator(name);
    FitResult fit = fit_efficiency(data.first, data.second, *a, default_efficiency(*a));
    fit.factors.source = fmt::format("calibrated on {} measurements", fit.measurements);
    calibration.set(name, fit.factors);
    calibration.fit_quality[name] = {fit.measurements, fit.median_abs_error};
  }
  return calibration;
}

}  // namespace gw
