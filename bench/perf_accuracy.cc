// The step-time model's error against published measurements (bench/perf_measurements.csv):
// uncalibrated (family defaults), and calibrated per accelerator with each measurement left out
// of its own fit. Prints every row, then the median and worst absolute error.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "core/text.h"
#include "model/presets.h"
#include "perf/measurement.h"

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "bench/perf_measurements.csv";
  auto catalog = gw::Catalog::embedded();
  std::string text, message;
  if (!catalog.ok() || !gw::read_file(path, text, message)) {
    fmt::print(stderr, "cannot read {}: {}\n", path, message);
    return 1;
  }
  auto measurements = gw::read_measurements(text, path, catalog.value());
  if (!measurements.ok()) {
    fmt::print(stderr, "{}\n", measurements.error().to_string());
    return 1;
  }
  const auto& ms = measurements.value();
  std::vector<gw::ModelArch> models;
  for (const auto& m : ms) models.push_back(gw::resolve_model(m.model).value());

  auto summarize = [](std::vector<double> errors) {
    std::sort(errors.begin(), errors.end());
    double median = errors.size() % 2 ? errors[errors.size() / 2]
                                      : (errors[errors.size() / 2 - 1] + errors[errors.size() / 2]) / 2;
    return std::make_pair(median, errors.back());
  };

  std::vector<double> raw_errors, loo_errors, engine_loo_errors, operator_errors;
  std::vector<std::string> operator_rows;
  fmt::print("{:<10} {:<14} {:<5} {:>2} {:<8} {:>5} {:>6} {:>5} {:>12} {:>12} {:>8} {:>12} {:>8} {:>8}\n", "gpu", "model",
             "prec", "tp", "phase", "batch", "tokens", "out", "measured_ms", "model_ms", "error", "loo_cal_ms", "error", "same_src");
  for (size_t i = 0; i < ms.size(); ++i) {
    const auto& m = ms[i];
    const gw::Accelerator& a = *catalog.value().find_accelerator(m.accelerator);
    double predicted = gw::predict_latency_ms(m, models[i], a, gw::default_efficiency(a));
    double raw = predicted / m.latency_ms - 1;
    raw_errors.push_back(std::fabs(raw));
    // By operator (16-bit dense LLMs): tables and the roofline fitted to Vidur's profiles, with
    // nothing fitted to these measurements.
    bool by_operator = (m.precision == gw::Precision::bf16 || m.precision == gw::Precision::fp16) &&
                       models[i].kind == gw::ModelKind::decoder;
    if (by_operator) {
      double op_ms = gw::predict_latency_ms(m, models[i], a, gw::default_efficiency(a), true);
      operator_errors.push_back(std::fabs(op_ms / m.latency_ms - 1));
      operator_rows.push_back(fmt::format("  {:<10} {:<14} tp{} {:<7} batch {:>3} tokens {:>5}: measured {:>9.2f} ms, "
                                          "by operator {:>9.2f} ms ({:+.1f}%), roofline {:>9.2f} ms ({:+.1f}%)",
                                          m.accelerator, m.model, m.tensor_parallel, m.phase, m.batch, m.tokens,
                                          m.latency_ms, op_ms, 100 * (op_ms / m.latency_ms - 1), predicted, raw * 100));
    }
    // Leave-one-out: fit this accelerator's factors on its other measurements.
    std::vector<gw::Measurement> rest;
    std::vector<gw::ModelArch> rest_models;
    for (size_t j = 0; j < ms.size(); ++j)
      if (j != i && ms[j].accelerator == m.accelerator) {
        rest.push_back(ms[j]);
        rest_models.push_back(models[j]);
      }
    std::string loo_text = "-", loo_error = "-";
    if (rest.size() >= 3) {
      auto fit = gw::fit_efficiency(rest, rest_models, a, gw::default_efficiency(a));
      double calibrated = gw::predict_latency_ms(m, models[i], a, fit.factors);
      double loo = calibrated / m.latency_ms - 1;
      loo_errors.push_back(std::fabs(loo));
      loo_text = fmt::format("{:.2f}", calibrated);
      loo_error = fmt::format("{:+.1f}%", loo * 100);
    }
    // Leave-one-out within one engine's table for this accelerator (one source), as a user
    // calibrating on their own engine would.
    std::vector<gw::Measurement> same;
    std::vector<gw::ModelArch> same_models;
    for (size_t j = 0; j < ms.size(); ++j)
      if (j != i && ms[j].accelerator == m.accelerator && ms[j].source == m.source) {
        same.push_back(ms[j]);
        same_models.push_back(models[j]);
      }
    std::string engine_error = "-";
    if (same.size() >= 3) {
      auto fit = gw::fit_efficiency(same, same_models, a, gw::default_efficiency(a));
      double e = gw::predict_latency_ms(m, models[i], a, fit.factors) / m.latency_ms - 1;
      engine_loo_errors.push_back(std::fabs(e));
      engine_error = fmt::format("{:+.1f}%", e * 100);
    }
    fmt::print("{:<10} {:<14} {:<5} {:>2} {:<8} {:>5} {:>6} {:>5} {:>12.2f} {:>12.2f} {:>+7.1f}% {:>12} {:>8} {:>8}\n",
               m.accelerator, m.model, gw::precision_name(m.precision), m.tensor_parallel, m.phase, m.batch, m.tokens,
               m.output_tokens, m.latency_ms, predicted, raw * 100, loo_text, loo_error, engine_error);
  }
  auto [raw_median, raw_worst] = summarize(raw_errors);
  auto [loo_median, loo_worst] = summarize(loo_errors);
  std::map<std::string, int> per_gpu;
  for (const auto& m : ms) ++per_gpu[m.accelerator];
  fmt::print("\n{} measurements on {} accelerators\n", ms.size(), per_gpu.size());
  fmt::print("uncalibrated (family defaults):        median |error| {:.1f}%, worst {:.1f}%  (target <= 15%)\n",
             raw_median * 100, raw_worst * 100);
  fmt::print("calibrated per GPU, leave-one-out:      median |error| {:.1f}%, worst {:.1f}%  (target <= 5%)\n",
             loo_median * 100, loo_worst * 100);
  auto [engine_median, engine_worst] = summarize(engine_loo_errors);
  fmt::print("calibrated per GPU on one engine's table, leave-one-out ({} rows): median |error| {:.1f}%, worst {:.1f}%  (target <= 5%)\n",
             engine_loo_errors.size(), engine_median * 100, engine_worst * 100);
  if (!operator_errors.empty()) {
    auto [op_median, op_worst] = summarize(operator_errors);
    fmt::print("\n(b) by operator, nothing fitted to these rows ({} 16-bit LLM rows): median |error| {:.1f}%, worst {:.1f}%  "
               "(target <= 12%, worst <= 35%)\n",
               operator_errors.size(), op_median * 100, op_worst * 100);
    for (const auto& row : operator_rows) fmt::print("{}\n", row);
  }
  auto calibration = gw::calibrate(ms, catalog.value());
  if (calibration.ok()) {
    for (const auto& [name, quality] : calibration.value().fit_quality) {
      auto f = *calibration.value().find(name);
      fmt::print("  {:<10} in-sample median |error| {:>5.1f}% over {:>2} rows: compute {:.2f}, memory {:.2f}, "
                 "overhead {:.0f} us/layer\n",
                 name, quality.second * 100, quality.first, f.compute, f.memory, f.overhead_per_layer_s * 1e6);
    }
  }
  return 0;
}
