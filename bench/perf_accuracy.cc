// The step-time model's error against published measurements (bench/perf_measurements.csv):
// uncalibrated (family defaults), and calibrated per accelerator, cross-validated (each row
// predicted by factors fitted without it); then (b): the per-operator model end to end, held out.
// Prints every row, the median and worst absolute errors, and exits 1 when (b) misses its budget
// (median 12%, worst 35%).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "core/text.h"
#include "model/presets.h"
#include "perf/measurement.h"

namespace {

// Median and worst of absolute errors.
std::pair<double, double> summarize(std::vector<double> errors) {
  std::sort(errors.begin(), errors.end());
  double median = errors.size() % 2 ? errors[errors.size() / 2]
                                    : (errors[errors.size() / 2 - 1] + errors[errors.size() / 2]) / 2;
  return std::make_pair(median, errors.back());
}

// Cross-validated predictions: rows are grouped by group(i); within a group, row k of n falls in
// fold k mod min(5, n), and each fold is predicted with factors fitted on the group's other folds
// (leave-one-out for groups of five rows or fewer). NaN where a group has fewer than 4 rows.
template <class Group>
std::vector<double> cross_validated_ms(const std::vector<gw::Measurement>& ms, const std::vector<gw::ModelArch>& models,
                                       const gw::Result<gw::Catalog>& catalog, Group group) {
  std::vector<double> predicted(ms.size(), std::nan(""));
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < ms.size(); ++i) groups[group(ms[i])].push_back(i);
  for (const auto& [key, rows] : groups) {
    if (rows.size() < 4) continue;
    const size_t folds = std::min<size_t>(5, rows.size());
    const gw::Accelerator& a = *catalog.value().find_accelerator(ms[rows.front()].accelerator);
    for (size_t fold = 0; fold < folds; ++fold) {
      std::vector<gw::Measurement> rest;
      std::vector<gw::ModelArch> rest_models;
      for (size_t k = 0; k < rows.size(); ++k)
        if (k % folds != fold) {
          rest.push_back(ms[rows[k]]);
          rest_models.push_back(models[rows[k]]);
        }
      auto fit = gw::fit_efficiency(rest, rest_models, a, gw::default_efficiency(a));
      for (size_t k = fold; k < rows.size(); k += folds)
        predicted[rows[k]] = gw::predict_latency_ms(ms[rows[k]], models[rows[k]], a, fit.factors);
    }
  }
  return predicted;
}

// (a) The roofline with the family defaults, and calibrated per accelerator, cross-validated (over
// all its rows, and within one engine's table).
void print_roofline_errors(const std::vector<gw::Measurement>& ms, const std::vector<gw::ModelArch>& models,
                           const gw::Result<gw::Catalog>& catalog) {
  std::vector<double> raw_errors, cv_errors, engine_cv_errors;
  std::vector<double> per_gpu = cross_validated_ms(ms, models, catalog, [](const gw::Measurement& m) { return m.accelerator; });
  std::vector<double> per_table = cross_validated_ms(
      ms, models, catalog, [](const gw::Measurement& m) { return m.accelerator + "|" + m.source; });
  fmt::print("{:<10} {:<14} {:<5} {:>2} {:<10} {:>5} {:>6} {:>5} {:>12} {:>12} {:>8} {:>12} {:>8} {:>8}\n", "gpu", "model",
             "prec", "tp", "phase", "batch", "tokens", "out", "measured_ms", "model_ms", "error", "cv_cal_ms", "error", "same_src");
  for (size_t i = 0; i < ms.size(); ++i) {
    const auto& m = ms[i];
    const gw::Accelerator& a = *catalog.value().find_accelerator(m.accelerator);
    double predicted = gw::predict_latency_ms(m, models[i], a, gw::default_efficiency(a));
    double raw = predicted / m.latency_ms - 1;
    raw_errors.push_back(std::fabs(raw));
    std::string cv_text = "-", cv_error = "-", engine_error = "-";
    if (!std::isnan(per_gpu[i])) {
      double e = per_gpu[i] / m.latency_ms - 1;
      cv_errors.push_back(std::fabs(e));
      cv_text = fmt::format("{:.2f}", per_gpu[i]);
      cv_error = fmt::format("{:+.1f}%", e * 100);
    }
    if (!std::isnan(per_table[i])) {
      double e = per_table[i] / m.latency_ms - 1;
      engine_cv_errors.push_back(std::fabs(e));
      engine_error = fmt::format("{:+.1f}%", e * 100);
    }
    fmt::print("{:<10} {:<14} {:<5} {:>2} {:<10} {:>5} {:>6} {:>5} {:>12.2f} {:>12.2f} {:>+7.1f}% {:>12} {:>8} {:>8}\n",
               m.accelerator, m.model, gw::precision_name(m.precision), m.tensor_parallel, m.phase, m.batch, m.tokens,
               m.output_tokens, m.latency_ms, predicted, raw * 100, cv_text, cv_error, engine_error);
  }
  auto [raw_median, raw_worst] = summarize(raw_errors);
  auto [cv_median, cv_worst] = summarize(cv_errors);
  std::map<std::string, int> gpus;
  for (const auto& m : ms) ++gpus[m.accelerator];
  fmt::print("\n{} measurements on {} accelerators\n", ms.size(), gpus.size());
  fmt::print("uncalibrated (family defaults):        median |error| {:.1f}%, worst {:.1f}%  (target <= 15%)\n",
             raw_median * 100, raw_worst * 100);
  fmt::print("calibrated per GPU, 5-fold cross-validated ({} rows): median |error| {:.1f}%, worst {:.1f}%  (target <= 5%)\n",
             cv_errors.size(), cv_median * 100, cv_worst * 100);
  auto [engine_median, engine_worst] = summarize(engine_cv_errors);
  fmt::print("calibrated per GPU on one engine's table, 5-fold cross-validated ({} rows): median |error| {:.1f}%, worst "
             "{:.1f}%  (target <= 5%)\n",
             engine_cv_errors.size(), engine_median * 100, engine_worst * 100);
}

// A published table's short name, from its source URL.
std::string source_label(const std::string& source) {
  if (source.find("v0.17 throughput") != std::string::npos) return "TensorRT-LLM v0.17 throughput (2025)";
  if (source.find("perf-overview") != std::string::npos) return "TensorRT-LLM v1.0 throughput (2025)";
  if (source.find("v0.6.1") != std::string::npos) return "TensorRT-LLM v0.6.1 static batches (2023)";
  if (source.find("0.5.0") != std::string::npos) return "TensorRT-LLM v0.5 first tokens (2023)";
  if (source.find("nim") != std::string::npos) return "NIM 1.8 at concurrency 1 (2025)";
  if (source.find("buildkite.com/vllm") != std::string::npos) return "vLLM CI latency, batch 8 (2024)";
  if (source.find("SGLang v0.5.7") != std::string::npos) return "SGLang v0.5.7 concurrency sweep (2026)";
  for (const char* round : {"v5.0", "v5.1"})
    if (source.find(std::string("inference_results_") + round) != std::string::npos)
      return fmt::format("MLPerf Inference {} {} (2025)", round,
                         source.find("/Server/") != std::string::npos ? "Server" : "Offline");
  return source.substr(0, 44);
}

// (b) Returns whether the held-out error is within its budget.
bool by_operator_within_budget(const std::vector<gw::Measurement>& ms, const std::vector<gw::ModelArch>& models,
                               const gw::Result<gw::Catalog>& catalog) {
  // (b) By operator (dense LLMs): tables and the roofline fitted to Vidur's profiles. The one
  // figure no profile gives, 8-bit GEMMs' share of their peak relative to 16-bit GEMMs', is
  // fitted on every other 8-bit row on an NVIDIA part (the fit half) and measured on the rest
  // (held out); nothing is fitted to the 16-bit rows. It is NVIDIA's fp8 GEMMs' share against
  // its fp16 GEMMs' (the profiles are NVIDIA parts); another vendor's parts take their share from
  // the family defaults, so their rows cannot inform it and are all held out.
  std::vector<size_t> llm_rows, fit_half;
  int eight_bit_seen = 0;
  for (size_t i = 0; i < ms.size(); ++i) {
    if (models[i].kind != gw::ModelKind::decoder) continue;
    llm_rows.push_back(i);
    bool eight_bit = ms[i].precision == gw::Precision::fp8 || ms[i].precision == gw::Precision::int8;
    const gw::Accelerator* a = catalog.value().find_accelerator(ms[i].accelerator);
    bool nvidia = a && a->vendor == "nvidia";
    if (eight_bit && nvidia && eight_bit_seen++ % 2 == 0) fit_half.push_back(i);
  }
  auto by_operator_ms = [&](size_t i, double scale) {
    const gw::Accelerator& a = *catalog.value().find_accelerator(ms[i].accelerator);
    gw::EfficiencyFactors f = gw::default_efficiency(a);
    f.operator_compute_8bit_scale = scale;
    return gw::predict_latency_ms(ms[i], models[i], a, f, true);
  };
  double lo = 0.3, hi = 1.5;  // golden-section search on the fit half's log-ratio loss
  auto fit_loss = [&](double scale) {
    double sum = 0;
    for (size_t i : fit_half) sum += std::pow(std::log(by_operator_ms(i, scale) / ms[i].latency_ms), 2);
    return sum;
  };
  for (int it = 0; it < 40; ++it) {
    double g = (std::sqrt(5.0) - 1) / 2, x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    if (fit_loss(x1) < fit_loss(x2)) hi = x2;
    else lo = x1;
  }
  double fitted_scale = (lo + hi) / 2, shipped_scale = gw::EfficiencyFactors::kOperatorCompute8bitScale;
  std::vector<double> held_out, held_out_16, held_out_8, fit_errors, shipped_errors;
  std::map<std::string, std::vector<double>> held_out_by_source;
  std::vector<double> held_out_dense, held_out_moe;
  fmt::print("\n(b) by operator, end to end against published rows (8-bit GEMM scale fitted on the fit half: {:.3f}; "
             "shipped {:.3f})\n", fitted_scale, shipped_scale);
  for (size_t i : llm_rows) {
    const auto& m = ms[i];
    bool in_fit = std::find(fit_half.begin(), fit_half.end(), i) != fit_half.end();
    double op_ms = by_operator_ms(i, fitted_scale), e = op_ms / m.latency_ms - 1;
    double shipped = by_operator_ms(i, shipped_scale) / m.latency_ms - 1;
    shipped_errors.push_back(std::fabs(shipped));
    bool sixteen = m.precision == gw::Precision::bf16 || m.precision == gw::Precision::fp16;
    if (in_fit) {
      fit_errors.push_back(std::fabs(e));
    } else {
      held_out.push_back(std::fabs(e));
      (sixteen ? held_out_16 : held_out_8).push_back(std::fabs(e));
      held_out_by_source[source_label(m.source)].push_back(std::fabs(e));
      (models[i].is_moe() ? held_out_moe : held_out_dense).push_back(std::fabs(e));
    }
    double roofline = gw::predict_latency_ms(m, models[i], *catalog.value().find_accelerator(m.accelerator),
                                             gw::default_efficiency(*catalog.value().find_accelerator(m.accelerator)));
    fmt::print("  {:<4} {:<10} {:<14} {:<4} tp{} {:<7} batch {:>4} tokens {:>5}/{:>4}: measured {:>10.2f} ms, by operator "
               "{:>10.2f} ms ({:+.1f}%), roofline {:>10.2f} ms ({:+.1f}%)\n",
               in_fit ? "fit" : "held", m.accelerator, m.model, gw::precision_name(m.precision), m.tensor_parallel, m.phase,
               m.batch, m.tokens, m.output_tokens, m.latency_ms, op_ms, 100 * e, roofline, 100 * (roofline / m.latency_ms - 1));
  }
  // Held out, by where the rows come from: engines of 2023 (TensorRT-LLM v0.5/v0.6.1) and of 2025
  // (NIM 1.8, TensorRT-LLM v0.17 and v1.0) separately.
  fmt::print("  held out by source:\n");
  for (const auto& [label, errors] : held_out_by_source) {
    auto [median, worst] = summarize(errors);
    fmt::print("    {:<44} {:>2} rows: median |error| {:>5.1f}%, worst {:>5.1f}%\n", label, errors.size(), 100 * median,
               100 * worst);
  }
  // Dense and MoE models apart (an MoE layer's routed experts are timed at their share of the
  // tokens, layers_by_operator_s).
  for (const auto& [label, errors] : {std::pair{"dense models", &held_out_dense},
                                      std::pair{"MoE models (Mixtral 8x7B, 8x22B, DeepSeek-V3)", &held_out_moe}}) {
    if (errors->empty()) continue;
    auto [median, worst] = summarize(*errors);
    fmt::print("    {:<44} {:>2} rows: median |error| {:>5.1f}%, worst {:>5.1f}%\n", label, errors->size(), 100 * median,
               100 * worst);
  }
  auto [h_median, h_worst] = summarize(held_out);
  auto [h16_median, h16_worst] = summarize(held_out_16);
  auto [h8_median, h8_worst] = summarize(held_out_8);
  auto [f_median, f_worst] = summarize(fit_errors);
  auto [s_median, s_worst] = summarize(shipped_errors);
  const double median_budget = 0.12, worst_budget = 0.35;
  bool within = h_median <= median_budget && h_worst <= worst_budget;
  fmt::print("(b) held out ({} rows: {} 16-bit, {} 8-bit): median |error| {:.1f}%, worst {:.1f}% (budget {:.0f}% / {:.0f}%: {})\n",
             held_out.size(), held_out_16.size(), held_out_8.size(), 100 * h_median, 100 * h_worst, 100 * median_budget,
             100 * worst_budget, within ? "within" : "MISSED");
  fmt::print("    16-bit {:.1f}% / {:.1f}%, 8-bit {:.1f}% / {:.1f}%; fit half in sample ({} rows) {:.1f}% / {:.1f}%; "
             "all {} rows with the shipped scale {:.1f}% / {:.1f}%\n",
             100 * h16_median, 100 * h16_worst, 100 * h8_median, 100 * h8_worst, fit_errors.size(), 100 * f_median,
             100 * f_worst, shipped_errors.size(), 100 * s_median, 100 * s_worst);
  return within;
}

void print_calibration(const std::vector<gw::Measurement>& ms, const gw::Result<gw::Catalog>& catalog) {
  auto calibration = gw::calibrate(ms, catalog.value());
  if (calibration.ok()) {
    for (const auto& [name, quality] : calibration.value().fit_quality) {
      auto f = *calibration.value().find(name);
      fmt::print("  {:<10} in-sample median |error| {:>5.1f}% over {:>2} rows: compute {:.2f}, memory {:.2f}, "
                 "overhead {:.0f} us/layer\n",
                 name, quality.second * 100, quality.first, f.compute, f.memory, f.overhead_per_layer_s * 1e6);
    }
  }
}

}  // namespace

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

  print_roofline_errors(ms, models, catalog);
  bool within = by_operator_within_budget(ms, models, catalog);
  print_calibration(ms, catalog);
  return within ? 0 : 1;
}
