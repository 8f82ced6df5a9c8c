// How long the fit search over the whole catalog takes (every accelerator, every layout,
// binary searches for the largest batch and context). `make bench` prints the figures.
#include <benchmark/benchmark.h>

#include "model/presets.h"
#include "plan/fit.h"

namespace {

void BM_FitAcrossCatalog(benchmark::State& state, const char* model, bool train) {
  auto catalog = gw::Catalog::embedded();
  auto arch = gw::load_preset(model);
  if (!catalog.ok() || !arch.ok()) {
    state.SkipWithError("catalog or preset failed to load");
    return;
  }
  gw::FitRequest request;
  request.mode = train ? gw::FitMode::training : gw::FitMode::inference;
  request.inference.batch = 16;
  request.inference.context = 8192;
  request.training.zero_stage = 3;
  request.training.data_parallel = 8;
  for (auto _ : state) {
    auto fits = gw::fit_accelerators(catalog.value(), arch.value(), request);
    benchmark::DoNotOptimize(fits);
  }
}

void BM_EmbeddedCatalogLoad(benchmark::State& state) {
  for (auto _ : state) {
    auto catalog = gw::Catalog::embedded();
    benchmark::DoNotOptimize(catalog);
  }
}

}  // namespace

BENCHMARK_CAPTURE(BM_FitAcrossCatalog, llama70b_inference, "llama-3.1-70b", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitAcrossCatalog, deepseek_v3_inference, "deepseek-v3", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FitAcrossCatalog, llama8b_training, "llama-3.1-8b", true)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EmbeddedCatalogLoad)->Unit(benchmark::kMillisecond);
