// gpuwise's simulator next to Vidur (MLSys'24, microsoft/vidur commit 7d47513) on the same work:
// Llama-2-70B, one tp2 replica on A100-80GB, max batch 128, blocks of 16, the Azure conversation
// trace with Vidur's clipping (prompt cut so prompt + output <= 4,096 tokens), under vLLM v0
// (whole prompts, token budget 4,096) and Sarathi (chunks of 4,096), on the whole trace and on
// a light-load stretch (the first 2,000 requests with arrival gaps x10, ~0.55 requests/s). Step
// times come from the same measured operator profile Vidur uses and the KV capacity is Vidur's (3,328 blocks), so
// what differs is the scheduling and the simulation. Reference figures: bench/vidur_reference.csv
// (how they were made is written at its top). Exits 1 when a figure misses its budget: e2e, TTFT
// and TPOT mean/p50/p99 within 10% of Vidur's, preemptions within 2x.
//
// Usage: gpuwise_vidur_side_by_side PROFILES_DIR TRACE_CSV REFERENCE_CSV
//   PROFILES_DIR: a copy of Vidur's data/profiling (compute/, network/), e.g. ../shared/data/profiles/vidur-7d47513
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "core/csv.h"
#include "core/text.h"
#include "model/presets.h"
#include "perf/operator_profile.h"
#include "sim/simulator.h"
#include "trace/request_trace.h"

namespace {

class ListArrivals final : public gw::ArrivalProcess {
 public:
  explicit ListArrivals(const std::vector<gw::Arrival>& arrivals) : arrivals_(arrivals) {}
  std::optional<gw::Arrival> next() override {
    if (next_ >= arrivals_.size()) return std::nullopt;
    return arrivals_[next_++];
  }

 private:
  const std::vector<gw::Arrival>& arrivals_;
  size_t next_ = 0;
};

// The figures compared, as the reference file's columns name them: <metric>_<stat>_s.
const char* kMetrics[] = {"e2e", "ttft", "tpot"};
const char* kStats[] = {"mean", "p50", "p99"};
using Figures = std::map<std::string, double>;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fmt::print(stderr, "usage: {} PROFILES_DIR TRACE_CSV REFERENCE_CSV\n", argv[0]);
    return 2;
  }
  const std::string profiles = argv[1];
  auto arch = gw::load_preset("llama-2-70b");
  if (!arch.ok()) {
    fmt::print(stderr, "{}\n", arch.error().to_string());
    return 2;
  }
  gw::OperatorProfileOptions o =
      gw::vidur_profile_options(profiles, "a100", "a100_pairwise_nvlink", "meta-llama/Llama-2-70b-hf", arch.value(), 2);
  auto timer = gw::ProfiledStepTimer::load(o);
  if (!timer.ok()) {
    fmt::print(stderr, "{}\n", timer.error().to_string());
    return 2;
  }

  // The trace as Vidur's trace_replay generator reads it (max_tokens 4,096).
  std::vector<gw::Arrival> trace;
  auto error = gw::read_trace(argv[2], gw::TraceFormat::automatic, [&](const gw::TraceRequest& r) {
    double output = std::max(1.0, r.output_tokens);
    double input = std::max(1.0, std::min(r.input_tokens, 4096 - output));
    trace.push_back({r.timestamp_s, input, output});
  });
  if (error) {
    fmt::print(stderr, "{}\n", error->to_string());
    return 2;
  }
  double start = trace.empty() ? 0 : trace.front().time_s;
  for (auto& a : trace) a.time_s -= start;
  std::vector<gw::Arrival> light(trace.begin(), trace.begin() + std::min<size_t>(2000, trace.size()));
  for (auto& a : light) a.time_s *= 10;

  std::string text, message;
  if (!gw::read_file(argv[3], text, message)) {
    fmt::print(stderr, "{}: {}\n", argv[3], message);
    return 2;
  }
  auto table = gw::parse_csv(text, argv[3]);
  if (!table.ok()) {
    fmt::print(stderr, "{}\n", table.error().to_string());
    return 2;
  }
  std::map<std::string, Figures> reference;
  for (const auto& row : table.value().rows) {
    gw::CsvRecord r(table.value(), row);
    Figures f;
    for (const char* metric : kMetrics)
      for (const char* stat : kStats) {
        std::string column = fmt::format("{}_{}_s", metric, stat);
        f[column] = r.number(column, 0, 1e9);
      }
    for (const char* column : {"preemptions", "makespan_s", "vidur_wall_s"}) f[column] = r.number(column, 0, 1e12);
    if (!r.ok()) {
      fmt::print(stderr, "{}\n", r.error().to_string());
      return 2;
    }
    reference[r.text("scenario") + "/" + r.text("scheduler")] = f;
  }

  bool within = true;
  fmt::print("{:<7} {:<8} {:<12} {:>10} {:>10} {:>10}   (seconds; gpuwise / Vidur / error)\n", "load", "engine", "figure",
             "gpuwise", "Vidur", "error");
  for (const char* scenario : {"full", "light"}) {
    for (gw::LlmScheduler scheduler : {gw::LlmScheduler::vllm_v0, gw::LlmScheduler::sarathi}) {
      gw::ReplicaConfig c;
      c.name = "A100-80GB tp2";
      c.batching = gw::SimBatching::continuous;
      c.scheduler = scheduler;
      c.llm = timer.value();
      c.kv_blocks = 3328;  // Vidur's MemoryPlanner: 13 sequences of 4,096 tokens in 90% of 80 GB less weights
      c.block_tokens = 16;
      c.max_batch = 128;
      c.token_budget = 4096;
      c.watermark_fraction = 0.01;
      const auto& arrivals = std::string(scenario) == "full" ? trace : light;
      ListArrivals process(arrivals);
      gw::SimOptions options;
      options.max_requests = 1LL << 40;
      auto begin = std::chrono::steady_clock::now();
      auto result = gw::simulate(process, {c}, options);
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      if (!result.ok()) {
        fmt::print(stderr, "{}\n", result.error().to_string());
        return 2;
      }
      const gw::SimResult& r = result.value();
      std::string name = gw::llm_scheduler_name(scheduler) == std::string_view("vllm-v0") ? "vllm" : "sarathi";
      auto it = reference.find(std::string(scenario) + "/" + name);
      if (it == reference.end()) {
        fmt::print(stderr, "no reference for {}/{}\n", scenario, name);
        return 2;
      }
      const Figures& v = it->second;
      auto line = [&](const std::string& figure, double ours, double theirs, double budget) {
        double error = theirs > 0 ? ours / theirs - 1 : 0;
        bool ok = budget <= 1 ? std::abs(error) <= budget : (ours <= theirs * budget && ours * budget >= theirs);
        within = within && ok;
        fmt::print("{:<7} {:<8} {:<12} {:>10.3f} {:>10.3f} {:>+9.1f}%{}\n", scenario, name, figure, ours, theirs, error * 100,
                   ok ? "" : "  MISS");
      };
      const gw::LogHistogram* histograms[] = {&r.latency, &r.ttft, &r.tpot};
      for (size_t m = 0; m < 3; ++m)
        for (const char* stat : kStats) {
          const gw::LogHistogram& h = *histograms[m];
          double ours = std::string(stat) == "mean" ? h.mean() : h.quantile(std::string(stat) == "p50" ? 0.5 : 0.99);
          line(fmt::format("{} {}", kMetrics[m], stat), ours, v.at(fmt::format("{}_{}_s", kMetrics[m], stat)), 0.10);
        }
      line("preemptions", static_cast<double>(r.preemptions), v.at("preemptions"), 2.0);
      fmt::print("{:<7} {:<8} {:<12} {:>10.0f} {:>10.0f}   (last completion, s; not budgeted)\n", scenario, name, "makespan",
                 r.duration_s + arrivals.front().time_s, v.at("makespan_s"));
      fmt::print("{:<7} {:<8} {:<12} {:>10.3f} {:>10.1f}   (wall seconds: {:.0f}x)\n", scenario, name, "run time", wall,
                 v.at("vidur_wall_s"), v.at("vidur_wall_s") / std::max(wall, 1e-9));
    }
  }
  fmt::print("{}\n", within ? "all figures within budget" : "some figures miss their budget");
  return within ? 0 : 1;
}
