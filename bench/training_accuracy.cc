// The training time model against published results (bench/training_measurements.csv): GPU-hours
// of the LLaMA and Llama 2 runs, Llama 3 405B's MFU, Megatron-LM's achieved TFLOP/s per GPU.
// Prints each error and the median; target: median absolute error <= 15%.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/csv.h"
#include "core/text.h"
#include "model/presets.h"
#include "perf/step_time.h"
#include "plan/training.h"

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "bench/training_measurements.csv";
  std::string text, message;
  if (!gw::read_file(path, text, message)) {
    fmt::print(stderr, "cannot read {}: {}\n", path, message);
    return 1;
  }
  auto table = gw::parse_csv(text, path);
  auto catalog = gw::Catalog::embedded();
  if (!table.ok() || !catalog.ok()) return 1;
  std::vector<double> errors;
  fmt::print("{:<34} {:<10} {:>6} {:>7} {:<15} {:>12} {:>12} {:>8}\n", "model", "gpu", "count", "layout", "metric",
             "published", "model", "error");
  for (const auto& row : table.value().rows) {
    gw::CsvRecord r(table.value(), row);
    auto arch = gw::resolve_model(r.text("model"));
    if (!arch.ok()) {
      fmt::print(stderr, "{}\n", arch.error().to_string());
      return 1;
    }
    gw::TrainingJob job;
    job.arch = &arch.value();
    job.sequence_length = static_cast<long long>(r.number("sequence", 1, 1e7));
    job.global_batch_tokens = r.number("batch_sequences", 1, 1e9) * static_cast<double>(job.sequence_length);
    job.tokens = r.number("tokens", 1, 1e16);
    gw::TrainingHardware hw;
    hw.accelerator = catalog.value().find_accelerator(r.text("accelerator"));
    hw.count = static_cast<int>(r.number("count", 1, 1e6));
    hw.fabric = r.text("fabric");
    hw.node_network_gbps = r.number("node_network_gbps", 1, 1e6);
    int tp = static_cast<int>(r.number("tp", 0, 64)), pp = static_cast<int>(r.number("pp", 0, 1024));
    std::string metric = r.text("metric");
    double published = r.number("value", 0, 1e12);
    gw::TrainingEstimate e;
    auto recompute = gw::parse_recompute(r.text("recompute")).value_or(gw::Recompute::none);
    if (tp > 0) {
      gw::TrainingLayout layout{tp, pp, hw.count / (tp * pp), 1, recompute, 1, 1};
      e = gw::estimate_training_layout(job, hw, layout, nullptr, 1.0);
    } else {
      e = gw::estimate_training_run(job, hw, nullptr);
    }
    if (!e.feasible) {
      fmt::print("{:<34} infeasible: {}\n", r.text("model"), e.reason);
      continue;
    }
    double recompute_factor = e.layout.recompute == gw::Recompute::full ? 4.0 / 3.0 : e.layout.recompute == gw::Recompute::selective ? 1.03 : 1.0;
    double predicted = metric == "gpu_hours" ? e.gpu_hours
                       : metric == "mfu"     ? e.mfu
                                             : e.mfu * recompute_factor * gw::compute_peak_tflops(*hw.accelerator, gw::Precision::bf16);
    double error = predicted / published - 1;
    errors.push_back(std::fabs(error));
    std::string name = r.text("model");
    if (name.rfind("bench/models/", 0) == 0) name = name.substr(13, name.size() - 18);
    fmt::print("{:<34} {:<10} {:>6} {:>7} {:<15} {:>12.4g} {:>12.4g} {:>+7.1f}%\n", name, hw.accelerator->name, hw.count,
               fmt::format("{}/{}/{}", e.layout.tensor_parallel, e.layout.pipeline_parallel, e.layout.data_parallel), metric,
               published, predicted, error * 100);
  }
  std::sort(errors.begin(), errors.end());
  double median = errors.size() % 2 ? errors[errors.size() / 2] : (errors[errors.size() / 2 - 1] + errors[errors.size() / 2]) / 2;
  fmt::print("\n{} published results: median |error| {:.1f}%, worst {:.1f}% (target: median <= 15%)\n", errors.size(),
             median * 100, errors.back() * 100);
  return 0;
}
