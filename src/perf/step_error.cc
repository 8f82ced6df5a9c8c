#include "perf/step_error.h"

#include <algorithm>
#include <array>

namespace gw {

namespace {

constexpr std::array<const char*, 4> kParts = {"layers", "decode attention", "prefill attention", "output head"};

std::array<double, 4> contributions(const StepParts& p, const StepErrorFigures& f) {
  double total = p.total_s();
  if (total <= 0) return {};
  return {p.layers_s / total * f.layers, p.decode_attention_s / total * f.decode_attention,
          p.prefill_attention_s / total * f.prefill_attention, p.head_s / total * f.head};
}

}  // namespace

StepErrorContribution step_error_contribution(const StepParts& parts, const StepErrorFigures& figures) {
  StepErrorContribution out;
  double total = parts.total_s();
  if (total <= 0) return out;
  auto c = contributions(parts, figures);
  size_t best = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    out.expected_error += c[i];
    if (c[i] > c[best]) best = i;
  }
  out.dominant = kParts[best];
  out.unmeasured_share = (parts.network_s + parts.other_s) / total;
  return out;
}

StepErrorSummary summarize_step_errors(const std::vector<StepParts>& steps, const StepErrorFigures& figures) {
  StepErrorSummary out;
  std::vector<double> errors;
  std::array<double, 4> sum{};
  for (const auto& s : steps) {
    if (s.total_s() <= 0) continue;
    auto c = contributions(s, figures);
    for (size_t i = 0; i < c.size(); ++i) sum[i] += c[i];
    StepErrorContribution one = step_error_contribution(s, figures);
    errors.push_back(one.expected_error);
    out.mean_unmeasured_share += one.unmeasured_share;
  }
  out.steps = static_cast<long long>(errors.size());
  if (errors.empty()) return out;
  const double n = static_cast<double>(errors.size());
  for (double e : errors) out.mean_error += e / n;
  out.mean_unmeasured_share /= n;
  std::sort(errors.begin(), errors.end());
  out.p99_error = errors[std::min(errors.size() - 1, static_cast<size_t>(0.99 * n))];
  for (size_t i = 0; i < sum.size(); ++i) out.mean_contribution.emplace_back(kParts[i], sum[i] / n);
  std::stable_sort(out.mean_contribution.begin(), out.mean_contribution.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  out.dominant = out.mean_contribution.front().first;
  return out;
}

}  // namespace gw
