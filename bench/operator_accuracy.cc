// The per-layer operator model against Vidur's measured profiles, held out: for each device and
// each profiled model, the roofline is fitted to the other models' rows and the tables hold only
// the other models' operators (a GEMM of the same n x k in another model answers from its table),
// then the left-out model's per-layer sums are predicted at every profiled token count and
// tensor-parallel degree. Also in-sample with every other token count held out (interpolation).
// Prints each fold and the totals; exits 1 past the budget (median 8%, worst 35%).
// Usage: gpuwise_operator_accuracy [VIDUR_PROFILE_DIR] [--write-rooflines FILE] (FILE: the fits
// on every row of each device, as catalog/profiles/vidur-7d47513/rooflines.csv ships them).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <set>

#include "catalog/catalog.h"
#include "perf/layer_operators.h"

namespace {

struct Summary {
  double median = 0, p90 = 0, worst = 0;
};

Summary summarize(std::vector<double> errors) {
  if (errors.empty()) return {};
  std::sort(errors.begin(), errors.end());
  size_t n = errors.size();
  return {n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2, errors[static_cast<size_t>(0.9 * (n - 1))],
          errors.back()};
}

}  // namespace

int main(int argc, char** argv) {
  const double median_budget = 0.08, worst_budget = 0.35;
  std::string dir, rooflines_path;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--write-rooflines" && a + 1 < argc) rooflines_path = argv[++a];
    else dir = arg;
  }
  auto loaded = !dir.empty() ? gw::read_vidur_layer_profiles(dir) : gw::Result<std::vector<gw::ProfiledLayer>>(gw::embedded_layer_profiles());
  if (!loaded.ok()) {
    fmt::print(stderr, "{}\n", loaded.error().to_string());
    return 1;
  }
  auto attention = !dir.empty() ? gw::read_vidur_attention_profiles(dir)
                                 : gw::Result<std::vector<gw::ProfiledAttention>>(gw::embedded_attention_profiles());
  if (!attention.ok()) {
    fmt::print(stderr, "{}\n", attention.error().to_string());
    return 1;
  }
  auto catalog = gw::Catalog::embedded();
  if (!catalog.ok()) return 1;
  const auto& rows = loaded.value();
  std::map<std::string, std::set<std::string>> models;  // device -> models
  for (const auto& r : rows) models[r.device].insert(r.model);

  std::vector<double> held_out, in_sample;
  std::map<std::string, gw::OperatorRoofline> full_fits;
  double measured_ops = 0, all_ops = 0;
  fmt::print("{:<6} {:<28} {:>5} {:>9} {:>9} {:>9} {:>9}  fitted gemm (compute, tile tokens, memory, launch us)\n", "device",
             "left-out model", "rows", "median", "p90", "worst", "tables");
  for (const auto& [device, names] : models) {
    const gw::Accelerator* accelerator = catalog.value().find_accelerator(gw::profiled_accelerator(device));
    if (!accelerator) {
      fmt::print(stderr, "no catalog accelerator for profiled device '{}'\n", device);
      return 1;
    }
    double peak = accelerator->peak(gw::Precision::fp16).value_or(0) * 1e12, bandwidth = accelerator->memory_gb_per_s * 1e9;
    for (const auto& out : names) {
      std::vector<const gw::ProfiledLayer*> fit_rows;
      gw::LayerOperatorModel model;
      for (const auto& r : rows)
        if (r.device == device && r.model != out) {
          fit_rows.push_back(&r);
          model.add_measured(r);
        }
      auto roofline = gw::fit_operator_roofline(fit_rows, peak, bandwidth);
      model.set_roofline(device, roofline);
      std::vector<double> errors;
      double tables = 0, ops = 0;
      for (const auto& r : rows) {
        if (r.device != device || r.model != out) continue;
        auto mask = r.timed();
        auto t = model.layer_time(device, r.dims, r.tokens, &mask);
        errors.push_back(std::abs(t.time_s / r.total_s() - 1));
        tables += t.measured_operators;
        ops += t.measured_operators + t.roofline_operators;
      }
      measured_ops += tables;
      all_ops += ops;
      held_out.insert(held_out.end(), errors.begin(), errors.end());
      Summary s = summarize(errors);
      fmt::print("{:<6} {:<28} {:>5} {:>8.1f}% {:>8.1f}% {:>8.1f}% {:>8.0f}%  {:.3f}, {:.0f}, {:.3f}, {:.1f}\n", device, out,
                 errors.size(), 100 * s.median, 100 * s.p90, 100 * s.worst, 100 * tables / std::max(1.0, ops),
                 roofline.gemm_compute, roofline.gemm_tile_tokens, roofline.gemm_memory, roofline.gemm_launch_s * 1e6);
    }
    // In-sample: every model's tables with every other token count left out, interpolated.
    gw::LayerOperatorModel model;
    std::vector<const gw::ProfiledLayer*> fit_rows;
    std::map<std::pair<std::string, int>, int> index;  // (model, tp) -> rows seen
    std::vector<const gw::ProfiledLayer*> probes;
    for (const auto& r : rows) {
      if (r.device != device) continue;
      fit_rows.push_back(&r);
      if (index[{r.model, r.dims.tensor_parallel}]++ % 2 == 0) model.add_measured(r);
      else probes.push_back(&r);
    }
    full_fits[device] = gw::fit_operator_roofline(fit_rows, peak, bandwidth);
    gw::fit_device_attention(full_fits[device], device, attention.value(), catalog.value());
    model.set_roofline(device, full_fits[device]);
    for (const auto* r : probes) {
      auto mask = r->timed();
      in_sample.push_back(std::abs(model.layer_time(device, r->dims, r->tokens, &mask).time_s / r->total_s() - 1));
    }
  }
  // Attention kernels: fitted on every other context length (kv / 32 even), measured on the rest.
  std::vector<double> decode_errors, prefill_errors;
  std::map<std::string, std::vector<const gw::ProfiledAttention*>> attention_fit;
  for (const auto& r : attention.value())
    if (static_cast<long>(r.kv_tokens / 32) % 2 == 0) attention_fit[r.device].push_back(&r);
  for (const auto& [device, fit_rows] : attention_fit) {
    const gw::Accelerator* a = catalog.value().find_accelerator(gw::profiled_accelerator(device));
    if (!a) a = catalog.value().find_accelerator(device);
    if (!a) continue;
    double peak = a->peak(gw::Precision::fp16).value_or(0) * 1e12, bandwidth = a->memory_gb_per_s * 1e9;
    auto fit = gw::fit_attention_roofline(fit_rows, peak, bandwidth);
    for (const auto& r : attention.value()) {
      if (r.device != device || static_cast<long>(r.kv_tokens / 32) % 2 == 0) continue;
      double e = std::abs(gw::predicted_attention_s(fit, r, peak, bandwidth) / r.time_s - 1);
      (r.prefill ? prefill_errors : decode_errors).push_back(e);
    }
    fmt::print("attention {:<6} fitted on {} rows: decode {:.2f} of bandwidth, {:.1f} us + {:.2f} us/sequence; prefill "
               "{:.2f} of peak, {:.1f} us + {:.0f} pairs/token\n",
               device, fit_rows.size(), fit.decode_memory, fit.decode_launch_s * 1e6, fit.decode_per_sequence_s * 1e6,
               fit.prefill_compute, fit.prefill_launch_s * 1e6, fit.prefill_pairs_per_token);
  }
  if (!rooflines_path.empty()) {
    std::FILE* out = std::fopen(rooflines_path.c_str(), "w");
    if (!out) {
      fmt::print(stderr, "cannot write {}\n", rooflines_path);
      return 1;
    }
    std::fputs(gw::rooflines_to_csv(full_fits).c_str(), out);
    std::fclose(out);
  }
  Summary h = summarize(held_out), i = summarize(in_sample);
  fmt::print("\n(a) held out, each model left out of its device's fit and tables: {} rows, median {:.1f}%, p90 {:.1f}%, "
             "worst {:.1f}% ({:.0f}% of operators from another model's table)\n",
             held_out.size(), 100 * h.median, 100 * h.p90, 100 * h.worst, 100 * measured_ops / std::max(1.0, all_ops));
  fmt::print("    in sample, every other token count held out (interpolated): {} rows, median {:.1f}%, worst {:.1f}%\n",
             in_sample.size(), 100 * i.median, 100 * i.worst);
  Summary d = summarize(decode_errors), pf = summarize(prefill_errors);
  fmt::print("    attention kernels, every other context length held out: decode {} rows, median {:.1f}%, p90 {:.1f}%, "
             "worst {:.1f}%; prefill {} rows, median {:.1f}%, p90 {:.1f}%, worst {:.1f}%\n",
             decode_errors.size(), 100 * d.median, 100 * d.p90, 100 * d.worst, prefill_errors.size(), 100 * pf.median,
             100 * pf.p90, 100 * pf.worst);
  bool ok = h.median <= median_budget && h.worst <= worst_budget;
  fmt::print("budget: median {:.0f}%, worst {:.0f}%: {}\n", 100 * median_budget, 100 * worst_budget, ok ? "within" : "MISSED");
  return ok ? 0 : 1;
}
