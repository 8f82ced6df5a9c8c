// Telemetry read-and-aggregate speed on one core: generates an nvidia-smi CSV, a dcgm-exporter
// text file, a node_exporter CPU-counter file and a long CSV in the Alibaba layout (argv[1] samples each, default 10 million),
// reads and aggregates them, and prints MB/s, the peak resident set size and the heap each series holds once read.
// Targets: >= 300 MB/s; <= 4 KB per series. With a folder as argv[2] the files are kept there
// (bench/telemetry_vs_duckdb.sh reads them with DuckDB). Then a fleet of 20,000 GPUs over a day at
// 1-minute scrapes (duty cycle and memory), aggregated in memory, for the heap per series alone.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <malloc.h>
#include <sys/resource.h>

#include "telemetry/aggregate.h"

namespace {

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// Bytes the heap holds now (glibc's count of allocated chunks).
double heap_bytes() { return static_cast<double>(mallinfo2().uordblks); }

const double kSeriesBudgetBytes = 4096;

void measure(const std::string& label, const std::string& path, long long samples, const gw::ReadOptions& options = {}) {
  // Best of three runs: the machines are shared, and the slower runs measure the neighbours.
  gw::TelemetryAggregator aggregator;
  gw::ReadStats stats;
  std::optional<gw::Error> error;
  double seconds = 1e300;
  double heap_before = 0;
  for (int run = 0; run < 3; ++run) {
    aggregator = gw::TelemetryAggregator();
    heap_before = heap_bytes();
    stats = gw::ReadStats();
    auto start = std::chrono::steady_clock::now();
    error = gw::read_telemetry(path, options, [&](const gw::TelemetrySample& s) { aggregator.add(s); }, stats);
    seconds = std::min(seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  double per_series = (heap_bytes() - heap_before) / std::max<double>(1, static_cast<double>(aggregator.series().size()));
  if (error) fmt::print("{}: {}\n", label, error->to_string());
  fmt::print("{:<12} {:>9.1f} MB, {:>10} samples ({} requested) in {:.2f} s (best of 3): {:>6.1f} MB/s, {:.1f} M samples/s, "
             "{} series, {:.0f} bytes each; peak RSS {:.1f} MiB\n",
             label, mb, stats.samples, samples, seconds, mb / seconds, stats.samples / seconds / 1e6,
             aggregator.series().size(), per_series, peak_rss_kib() / 1024.0);
}

// 20,000 GPUs, one day of 1-minute scrapes of the duty cycle and memory used (drifting over a
// few GiB, as a serving GPU's does), aggregated in memory: the heap per series at rest.
double measure_fleet_memory() {
  const int gpus = 20000, minutes = 1440;
  std::vector<std::string> ids;
  std::vector<gw::Labels> labels;
  for (int g = 0; g < gpus; ++g) {
    ids.push_back(fmt::format("UUID=GPU-{:08x},Hostname=node-{},gpu={}", g * 2654435761u, g / 8, g % 8));
    labels.push_back({{"UUID", fmt::format("GPU-{:08x}", g * 2654435761u)}, {"Hostname", fmt::format("node-{}", g / 8)},
                      {"gpu", std::to_string(g % 8)}});
  }
  double ids_bytes = 0;  // the caller's strings, which the aggregator points at while reading
  for (size_t g = 0; g < ids.size(); ++g) ids_bytes += static_cast<double>(ids[g].capacity());
  double before = heap_bytes();
  auto start = std::chrono::steady_clock::now();
  gw::TelemetryAggregator aggregator;
  for (int m = 0; m < minutes; ++m) {
    const double t = 1700000000.0 + 60.0 * m;
    for (int g = 0; g < gpus; ++g) {
      double util = static_cast<double>((g * 31 + m * 7) % 101);
      double memory_bytes = (20.0 + 6.0 * std::sin(m / 90.0 + g)) * 1073741824.0;
      aggregator.add({&ids[static_cast<size_t>(g)], &labels[static_cast<size_t>(g)], gw::Metric::gpu_util_pct, t, util});
      aggregator.add({&ids[static_cast<size_t>(g)], &labels[static_cast<size_t>(g)], gw::Metric::memory_used_bytes, t, memory_bytes});
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double per_series = (heap_bytes() - before) / gpus;
  fmt::print("fleet memory: {} GPUs x {} scrapes x 2 metrics in {:.2f} s: {:.0f} bytes of heap per series at rest "
             "(target <= {:.0f}: {}; the ids' own {:.0f} bytes each not counted)\n",
             gpus, minutes, seconds, per_series, kSeriesBudgetBytes, per_series <= kSeriesBudgetBytes ? "met" : "MISSED",
             ids_bytes / gpus);
  return per_series;
}

}  // namespace

int main(int argc, char** argv) {
  long long samples = argc > 1 ? std::stoll(argv[1]) : 10000000;
  bool keep = argc > 2;
  auto dir = keep ? std::filesystem::path(argv[2]) : std::filesystem::temp_directory_path() / "gpuwise_telemetry_bench";
  std::filesystem::create_directories(dir);
  const int gpus = 64;
  {
    // nvidia-smi: one row per GPU per second, four metrics per row.
    std::ofstream out(dir / "smi.csv");
    out << "timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], power.draw [W]\n";
    long long rows = samples / 4;
    for (long long r = 0; r < rows; ++r) {
      long long second = r / gpus;
      int gpu = static_cast<int>(r % gpus);
      out << fmt::format("2024/05/{:02d} {:02d}:{:02d}:{:02d}.000, {}, NVIDIA A100-SXM4-80GB, {} %, {} MiB, 81920 MiB, {}.5 W\n",
                         1 + second / 86400 % 28, second / 3600 % 24, second / 60 % 60, second % 60, gpu,
                         (r * 7) % 101, 1000 + (r * 13) % 70000, 60 + r % 300);
    }
  }
  {
    std::ofstream out(dir / "dcgm.txt");
    out << "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
    for (long long r = 0; r < samples; ++r) {
      int gpu = static_cast<int>(r % gpus);
      out << fmt::format("DCGM_FI_DEV_GPU_UTIL{{gpu=\"{}\",UUID=\"GPU-{:08x}\",Hostname=\"node-{}\",pod=\"p{}\"}} {} {}\n", gpu,
                         gpu * 2654435761u, gpu / 8, gpu, (r * 7) % 101, 1700000000000LL + (r / gpus) * 1000);
    }
  }
  {
    // node_exporter: per-CPU counters in eight modes for 8 hosts of 32 CPUs, scraped every 15 s
    // (idle and iowait become rates; the other modes are counted as skipped).
    std::ofstream out(dir / "node.txt");
    out << "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n# TYPE node_cpu_seconds_total counter\n";
    static const char* modes[] = {"idle", "iowait", "user", "system", "irq", "softirq", "steal", "nice"};
    const long long per_scrape = 8 * 32 * 8;
    for (long long r = 0; r < samples; ++r) {
      long long scrape = r / per_scrape, k = r % per_scrape;
      out << fmt::format("node_cpu_seconds_total{{cpu=\"{}\",instance=\"node-{}:9100\",job=\"node\",mode=\"{}\"}} {}.{:02d} {}\n",
                         k / 8 % 32, k / 256, modes[k % 8], scrape * (3 + k % 5), k % 100, 1700000000000LL + scrape * 15000);
    }
  }
  {
    // A long CSV in the Alibaba GenAI layout (value,timestamp_anon,container_ip): 2,860 series
    // with 32-hex-digit hashed ids, one sample a minute each.
    std::ofstream out(dir / "long.csv");
    out << "value,timestamp_anon,container_ip\n";
    const long long series = 2860;
    for (long long r = 0; r < samples; ++r) {
      long long s = r % series;
      out << fmt::format("{}.{},{}.0,{:016x}{:016x}\n", (r * 7) % 101, r % 10, 1662858720 + (r / series) * 60,
                         static_cast<unsigned long long>(s) * 0x9E3779B97F4A7C15ull, static_cast<unsigned long long>(s) * 0xC2B2AE3D27D4EB4Full);
    }
  }
  measure("nvidia-smi", (dir / "smi.csv").string(), samples);
  measure("dcgm", (dir / "dcgm.txt").string(), samples);
  measure("node", (dir / "node.txt").string(), samples);
  gw::ReadOptions long_csv;
  long_csv.format = gw::TelemetryFormat::long_csv;
  long_csv.long_csv.timestamp = "timestamp_anon";
  long_csv.long_csv.series = "container_ip";
  long_csv.long_csv.value = "value";
  long_csv.long_csv.fixed_metric = "gpu_util_pct";
  measure("long csv", (dir / "long.csv").string(), samples, long_csv);
  if (!keep) std::filesystem::remove_all(dir);
  return measure_fleet_memory() <= kSeriesBudgetBytes ? 0 : 1;
}
