#include "plan/fit.h"

#include "catalog/precision_support.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <fmt/format.h>

namespace gw {

namespace {

// Tensor-parallel degrees must divide the attention heads (and stay inside one 8-device node);
// what does not fit then is split into pipeline stages.
std::vector<std::pair<int, int>> layouts(const ModelArch& arch, int max_model_parallel) {
  std::vector<std::pair<int, int>> out;
  int heads = arch.kind == ModelKind::generic ? 1 : arch.num_heads;
  int layers = arch.kind == ModelKind::generic ? 1 : arch.num_layers;
  for (int count = 1; count <= max_model_parallel; count *= 2) {
    int tp = 1;
    for (int candidate = std::min(count, 8); candidate >= 1; candidate /= 2) {
      if (heads % candidate == 0) {
        tp = candidate;
        break;
      }
    }
    int pp = count / tp;
    if (pp > layers) break;
    out.emplace_back(tp, pp);
  }
  return out;
}

// The largest value in [1, cap] for which fits(value) holds, assuming monotonicity; 0 if none.
long long largest_fitting(long long cap, const std::function<bool(long long)>& fits) {
  if (cap < 1 || !fits(1)) return 0;
  long long low = 1, high = 1;
  while (high < cap && fits(std::min(cap, high * 2))) high = std::min(cap, high * 2);
  if (high == cap) return cap;
  low = high;
  high = std::min(cap, high * 2);  // fits(low), !fits(high)
  while (high - low > 1) {
    long long mid = low + (high - low) / 2;
    (fits(mid) ? low : high) = mid;
  }
  return low;
}

}  // namespace

MemoryEstimate estimate_for(const ModelArch& arch, const FitRequest& request, int tp, int pp) {
  if (request.mode == FitMode::inference) {
    InferenceMemoryOptions options = request.inference;
    options.tensor_parallel = tp;
    options.pipeline_parallel = pp;
    return estimate_inference(arch, options);
  }
  TrainingMemoryOptions options = request.training;
  options.tensor_parallel = tp;
  options.pipeline_parallel = pp;
  return estimate_training(arch, options);
}

namespace {

// What would make a near miss fit: a shorter context, an 8-bit KV cache, or the next layout up.
void add_remedies(AcceleratorFit& fit, const ModelArch& arch, const FitRequest& request, std::pair<int, int> layout, int dp) {
  const int tp = layout.first, pp = layout.second;
  auto fits_request = [&](const FitRequest& r, int t, int p) {
    return estimate_for(arch, r, t, p).total_bytes_per_device <= fit.usable_bytes_per_device;
  };
  if (request.mode == FitMode::inference && arch.kind != ModelKind::generic) {
    long long context = largest_fitting(request.inference.context - 1, [&](long long v) {
      FitRequest r = request;
      r.inference.context = v;
      return fits_request(r, tp, pp);
    });
    if (context > 0)
      fit.would_fit_with.push_back(fmt::format("context <= {} tokens (asked {})", context, request.inference.context));
    if (precision_bytes(request.inference.kv_precision) > 1) {
      FitRequest r = request;
      r.inference.kv_precision = Precision::fp8;
      if (fits_request(r, tp, pp)) fit.would_fit_with.push_back("an fp8 KV cache (--kv-precision fp8)");
    }
  }
  if (!request.parallelism_fixed) {
    for (auto [t, p] : layouts(arch, std::max(1, request.max_devices / dp) * 2)) {
      if (t * p <= tp * pp) continue;
      if (fits_request(request, t, p))
        fit.would_fit_with.push_back(fmt::format("{} devices (tp{} pp{}; --max-devices {})", t * p * dp, t, p, t * p * dp));
      break;
    }
  }
}

}  // namespace

std::vector<AcceleratorFit> fit_accelerators(const Catalog& catalog, const ModelArch& arch,
                                             const FitRequest& request) {
  std::vector<AcceleratorFit> fits;
  const int dp = request.mode == FitMode::training ? std::max(1, request.training.data_parallel) : 1;
  std::vector<std::pair<int, int>> candidates;
  if (request.parallelism_fixed) {
    int tp = request.mode == FitMode::training ? request.training.tensor_parallel : request.inference.tensor_parallel;
    int pp = request.mode == FitMode::training ? request.training.pipeline_parallel : request.inference.pipeline_parallel;
    candidates.emplace_back(tp, pp);
  } else {
    candidates = layouts(arch, std::max(1, request.max_devices / dp));
  }
  // The estimate does not depend on the accelerator: compute each layout once.
  std::vector<MemoryEstimate> estimates;
  for (auto [tp, pp] : candidates) estimates.push_back(estimate_for(arch, request, tp, pp));

  for (const auto& accelerator : catalog.accelerators()) {
    if (!request.accelerators.empty() &&
        std::none_of(request.accelerators.begin(), request.accelerators.end(),
                     [&](const std::string& name) { return catalog.find_accelerator(name) == &accelerator; }))
      continue;
    AcceleratorFit fit;
    fit.accelerator = &accelerator;
    fit.usable_bytes_per_device = accelerator.memory_bytes() * request.usable_fraction;
    // Weights the device has no kernels for do not fit, whatever the memory says.
    if (request.mode == FitMode::inference) {
      if (auto why = unsupported_precision(accelerator, request.inference.weight_precision, PrecisionEngine::serving,
                                           request.inference.weight_format)) {
        fit.reason = accelerator.name + ": " + *why;
        fit.precision_unsupported = true;
        fit.precision_note = *why;
        fits.push_back(fit);
        continue;
      }
      fit.precision_note = precision_note(accelerator, request.inference.weight_precision, PrecisionEngine::serving,
                                          request.inference.weight_format);
    }
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (estimates[i].total_bytes_per_device <= fit.usable_bytes_per_device) {
        fit.fits = true;
        fit.tensor_parallel = candidates[i].first;
        fit.pipeline_parallel = candidates[i].second;
        fit.total_bytes_per_device = estimates[i].total_bytes_per_device;
        break;
      }
    }
    fit.data_parallel = dp;
    if (!fit.fits) {
      const auto& last = estimates.back();
      fit.total_bytes_per_device = last.total_bytes_per_device;
      fit.tensor_parallel = candidates.back().first;
      fit.pipeline_parallel = candidates.back().second;
      fit.reason = fmt::format("needs {:.1f} GiB per device even on {} devices; {:.1f} GiB usable",
                               last.total_bytes_per_device / (1u << 30),
                               candidates.back().first * candidates.back().second * dp,
                               fit.usable_bytes_per_device / (1u << 30));
      fit.short_by_bytes = last.total_bytes_per_device - fit.usable_bytes_per_device;
      if (last.total_bytes_per_device <= fit.usable_bytes_per_device * (1 + kNearMissShare)) {
        fit.near_miss = true;
        add_remedies(fit, arch, request, candidates.back(), dp);
      }
      fits.push_back(fit);
      continue;
    }
    fit.count = fit.tensor_parallel * fit.pipeline_parallel * dp;

    // Cheapest offering: tensor parallelism stays inside one instance; more devices than one
    // instance has take several instances (pipeline or data parallel across them).
    OfferingFilter filter = request.offering_filter;
    filter.accelerators = {accelerator.name};
    filter.pricing = request.pricing;
    filter.complete_prices_only = true;
    for (const Offering* offering : catalog.select(filter)) {
      if (offering->accelerator_count < fit.tensor_parallel) continue;
      auto price = offering->usd_per_hour(request.pricing);
      if (!price) continue;
      int instances = static_cast<int>((fit.count + offering->accelerator_count - 1) / offering->accelerator_count);
      double total = *price * instances;
      if (!fit.usd_per_hour || total < *fit.usd_per_hour) {
        fit.usd_per_hour = total;
        fit.offering = offering;
        fit.instances = instances;
      }
    }

    // Headroom at this layout.
    FitRequest probe = request;
    const int tp = fit.tensor_parallel, pp = fit.pipeline_parallel;
    auto fits_with = [&](auto set) {
      return [&, set](long long value) {
        FitRequest r = probe;
        set(r, value);
        return estimate_for(arch, r, tp, pp).total_bytes_per_device <= fit.usable_bytes_per_device;
      };
    };
    long long context_cap = arch.max_position_embeddings > 0 ? arch.max_position_embeddings : (1LL << 24);
    if (request.mode == FitMode::inference) {
      fit.max_batch = largest_fitting(1LL << 24, fits_with([](FitRequest& r, long long v) { r.inference.batch = v; }));
      if (arch.kind != ModelKind::generic)
        fit.max_context =
            largest_fitting(context_cap, fits_with([](FitRequest& r, long long v) { r.inference.context = v; }));
    } else {
      fit.max_batch =
          largest_fitting(1LL << 20, fits_with([](FitRequest& r, long long v) { r.training.micro_batch = v; }));
      if (arch.kind != ModelKind::generic)
        fit.max_context = largest_fitting(
            context_cap, fits_with([](FitRequest& r, long long v) { r.training.sequence_length = v; }));
    }
    fits.push_back(fit);
  }
  std::stable_sort(fits.begin(), fits.end(), [](const AcceleratorFit& a, const AcceleratorFit& b) {
    if (a.fits != b.fits) return a.fits;
    if (a.usd_per_hour.has_value() != b.usd_per_hour.has_value()) return a.usd_per_hour.has_value();
    if (a.usd_per_hour && *a.usd_per_hour != *b.usd_per_hour) return *a.usd_per_hour < *b.usd_per_hour;
    return a.count < b.count;
  });
  return fits;
}

}  // namespace gw
