#include "telemetry/readers.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

#include "telemetry/aggregate.h"

namespace gw {
namespace {

std::string write(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / ("gpuwise_telemetry_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path.string();
}

struct Collected {
  std::vector<TelemetrySample> samples;
  std::vector<std::string> series;
  ReadStats stats;
  std::optional<Error> error;
};

Collected read(const std::string& path, ReadOptions options = {}) {
  Collected c;
  c.error = read_telemetry(path, options, [&](const TelemetrySample& s) {
    c.samples.push_back(s);
    c.series.push_back(*s.series);
  }, c.stats);
  return c;
}

TEST(Telemetry, NvidiaSmiCsvWithUnitsAndNotAvailable) {
  auto c = read(write("smi.csv",
                      "timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], power.draw [W]\n"
                      "2024/05/01 12:00:00.123, 0, NVIDIA A100-SXM4-80GB, 45 %, 1024 MiB, 81920 MiB, [N/A]\n"
                      "2024/05/01 12:00:01.123, 0, NVIDIA A100-SXM4-80GB, 55 %, 2048 MiB, 81920 MiB, 250.5 W\n"
                      "2024/05/01 12:00:02.123, 0, NVIDIA A100-SXM4-80GB, 60 %\n"),
                {TelemetryFormat::automatic, "node-1", {}});
  ASSERT_FALSE(c.error) << c.error->to_string();
  EXPECT_EQ(c.stats.skipped["not available ([N/A])"], 1);
  EXPECT_EQ(c.stats.skipped["wrong number of columns"], 1);
  ASSERT_EQ(c.samples.size(), 7u);
  EXPECT_EQ(c.samples[0].metric, Metric::gpu_util_pct);
  EXPECT_DOUBLE_EQ(c.samples[0].value, 45);
  EXPECT_DOUBLE_EQ(c.samples[1].value, 1024 * 1024.0 * 1024.0);
  EXPECT_NE(c.series[0].find("host=node-1"), std::string::npos);
  // Without units (--format=csv,nounits) too.
  auto plain = read(write("smi2.csv", "timestamp, index, utilization.gpu, memory.used\n2024/05/01 12:00:00, 1, 12, 300\n"));
  ASSERT_FALSE(plain.error);
  EXPECT_EQ(plain.samples.size(), 2u);
}

// GPUs told apart by pci.bus_id where the query has no index or uuid, and by their row's place
// under each timestamp where it has none of them (nvidia-smi lists the GPUs in index order): the
// rows of three GPUs were read as one series.
TEST(Telemetry, NvidiaSmiGpusToldApartByBusIdOrByTheirPlace) {
  const std::string rows =
      "2024/05/01 12:00:00.000, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, 95 %\n"
      "2024/05/01 12:00:00.000, NVIDIA A100-SXM4-80GB, 00000000:0A:00.0, 0 %\n"
      "2024/05/01 12:00:00.000, NVIDIA A100-SXM4-80GB, 00000000:0B:00.0, 30 %\n"
      "2024/05/01 12:00:01.000, NVIDIA A100-SXM4-80GB, 00000000:07:00.0, 90 %\n"
      "2024/05/01 12:00:01.000, NVIDIA A100-SXM4-80GB, 00000000:0A:00.0, 0 %\n"
      "2024/05/01 12:00:01.000, NVIDIA A100-SXM4-80GB, 00000000:0B:00.0, 35 %\n";
  auto by_bus = read(write("smi_bus.csv", "timestamp, name, pci.bus_id, utilization.gpu [%]\n" + rows));
  ASSERT_FALSE(by_bus.error) << by_bus.error->to_string();
  ASSERT_EQ(by_bus.samples.size(), 6u);
  std::map<std::string, double> sum;
  for (size_t i = 0; i < by_bus.samples.size(); ++i) sum[by_bus.series[i]] += by_bus.samples[i].value;
  ASSERT_EQ(sum.size(), 3u);
  EXPECT_NE(by_bus.series[0].find("pci_bus_id=00000000:07:00.0"), std::string::npos) << by_bus.series[0];
  EXPECT_DOUBLE_EQ(sum[by_bus.series[0]], 185);
  EXPECT_DOUBLE_EQ(sum[by_bus.series[2]], 65);
  // The same rows without the bus id: the place under each timestamp is the index.
  std::string no_id = "timestamp, name, utilization.gpu [%]\n";
  std::istringstream lines(rows);
  for (std::string line; std::getline(lines, line);) {
    const size_t bus = line.find(", 0000");
    no_id += line.substr(0, bus) + line.substr(line.find(',', bus + 2)) + "\n";
  }
  auto by_place = read(write("smi_place.csv", no_id));
  ASSERT_FALSE(by_place.error) << by_place.error->to_string();
  std::map<std::string, double> place_sum;
  for (size_t i = 0; i < by_place.samples.size(); ++i) place_sum[by_place.series[i]] += by_place.samples[i].value;
  ASSERT_EQ(place_sum.size(), 3u);
  EXPECT_NE(by_place.series[1].find("gpu=1"), std::string::npos) << by_place.series[1];
  EXPECT_DOUBLE_EQ(place_sum[by_place.series[0]], 185);
  EXPECT_DOUBLE_EQ(place_sum[by_place.series[1]], 0);
  EXPECT_DOUBLE_EQ(place_sum[by_place.series[2]], 65);
}

TEST(Telemetry, DcgmExporterTextWithSentinelsAndHostnameSpellings) {
  auto c = read(write("dcgm.txt",
                      "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
                      "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
                      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"h1\",modelName=\"NVIDIA H100 80GB HBM3\"} 87 1700000000000\n"
                      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\",hostname=\"h1\"} 9223372036854775794 1700000000000\n"
                      "DCGM_FI_PROF_SM_ACTIVE{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"h1\"} 0.42 1700000000000\n"
                      "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"h1\"} 40000 1700000000000\n"
                      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 1980 1700000000000\n"
                      "# timestamp: 1700000060\n"
                      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"h1\",modelName=\"NVIDIA H100 80GB HBM3\"} 91\n"));
  ASSERT_FALSE(c.error) << c.error->to_string();
  EXPECT_EQ(c.stats.skipped["DCGM 'not supported' sentinel"], 1);
  EXPECT_EQ(c.stats.skipped["metric not used by the audit"], 1);
  ASSERT_EQ(c.samples.size(), 4u);
  EXPECT_DOUBLE_EQ(c.samples[0].time_s, 1700000000);
  EXPECT_DOUBLE_EQ(c.samples[3].time_s, 1700000060);
  EXPECT_NE(c.series[0].find("hostname=h1"), std::string::npos);  // Hostname normalised
}

TEST(Telemetry, NodeExporterCpuCountersBecomeHostRates) {
  // Two CPUs, scraped every 60 s: idle 30 s and iowait 6 s of each minute -> 50% busy, 10% iowait.
  std::string text = "# TYPE node_cpu_seconds_total counter\n";
  for (int i = 0; i < 4; ++i) {
    for (int cpu = 0; cpu < 2; ++cpu) {
      double t_ms = (1700000000 + i * 60) * 1000.0;
      text += "node_cpu_seconds_total{cpu=\"" + std::to_string(cpu) + "\",instance=\"node-a:9100\",mode=\"idle\"} " +
              std::to_string(100 + i * 30) + " " + std::to_string(static_cast<long long>(t_ms)) + "\n";
      text += "node_cpu_seconds_total{cpu=\"" + std::to_string(cpu) + "\",instance=\"node-a:9100\",mode=\"iowait\"} " +
              std::to_string(5 + i * 6) + " " + std::to_string(static_cast<long long>(t_ms)) + "\n";
      text += "node_cpu_seconds_total{cpu=\"" + std::to_string(cpu) + "\",instance=\"node-a:9100\",mode=\"user\"} 1 " +
              std::to_string(static_cast<long long>(t_ms)) + "\n";
    }
  }
  // A counter reset, and the recording rule for another host (a ratio).
  text += "node_cpu_seconds_total{cpu=\"0\",instance=\"node-a:9100\",mode=\"idle\"} 1 1700000300000\n";
  text += "instance:node_cpu_utilisation:rate5m{instance=\"node-b:9100\"} 0.25 1700000000000\n";
  auto c = read(write("node.prom", text));
  ASSERT_FALSE(c.error) << c.error->to_string();
  EXPECT_EQ(c.stats.skipped["counter reset"], 1);
  EXPECT_EQ(c.stats.skipped["node_cpu_seconds_total in a mode other than idle or iowait"], 8);
  TelemetryAggregator aggregator;
  for (const auto& sample : c.samples) aggregator.add(sample);
  const auto& a = aggregator.series().at("hostname=node-a");
  EXPECT_EQ(a.cpu_samples, 6);  // three intervals x two CPUs
  EXPECT_NEAR(a.cpu_sum / a.cpu_samples, 50, 1e-9);
  EXPECT_NEAR(a.iowait_sum / a.iowait_samples, 10, 1e-9);
  EXPECT_EQ(a.host_cpus, 2);
  const auto& b = aggregator.series().at("hostname=node-b");
  EXPECT_NEAR(b.cpu_sum / b.cpu_samples, 25, 1e-9);
  EXPECT_EQ(instance_host("[::1]:9100"), "[::1]");
  EXPECT_EQ(instance_host("gpu-node-7"), "gpu-node-7");
}

TEST(Telemetry, DmonAndPrometheusJson) {
  auto dmon = read(write("dmon.txt",
                         "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n"
                         "#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %      %      %    MHz    MHz\n"
                         " 20240501   12:00:00      0     70     40      -     35     10      0      0   1593   1410\n"
                         " 20240501   12:00:01      0      -     40      -     -      10      0      0   1593   1410\n"));
  ASSERT_FALSE(dmon.error) << dmon.error->to_string();
  EXPECT_EQ(dmon.samples.size(), 2u);  // pwr and sm of the first line
  EXPECT_EQ(dmon.stats.skipped["missing value ('-')"], 2);
  auto prom = read(write("range.json", R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"0","Hostname":"h"},"values":[[1700000000,"5"],[1700000060,"7"]]}]}})"));
  ASSERT_FALSE(prom.error) << prom.error->to_string();
  ASSERT_EQ(prom.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(prom.samples[1].value, 7);
}

TEST(Telemetry, NotTelemetryIsAnError) {
  EXPECT_TRUE(read(write("junk.csv", "name,age\nbob,3\n")).error.has_value());
  EXPECT_TRUE(read(write("junk.json", "{\"status\": \"error\"}")).error.has_value());
  EXPECT_TRUE(read(write("empty.txt", "")).error.has_value());
  EXPECT_TRUE(read(write("bin.dat", std::string("\0\1\2\3", 4))).error.has_value());
  ReadOptions dcgm;
  dcgm.format = TelemetryFormat::dcgm;
  EXPECT_TRUE(read(write("notdcgm.txt", "hello world\n"), dcgm).error.has_value());
}

// The Alibaba GenAI duty-cycle series, aggregated by the audit's reader, against an independent
// computation over the same CSV.
// The long-CSV reader's cells trimmed by its fast path: a cell padded with spaces, tabs or a
// Windows line end reads as the bare cell, in values, timestamps and series ids alike.
TEST(Telemetry, LongCsvCellsPaddedWithBlanksReadAsTheBareCells) {
  auto read = [](const std::string& name, const std::string& text) {
    ReadOptions options;
    options.long_csv.timestamp = "timestamp_anon";
    options.long_csv.series = "container_ip";
    options.long_csv.fixed_metric = "gpu_util_pct";
    std::vector<std::tuple<std::string, double, double>> samples;
    ReadStats stats;
    auto error = read_telemetry(write(name, text), options,
                                [&](const TelemetrySample& s) { samples.emplace_back(*s.series, s.time_s, s.value); }, stats);
    EXPECT_FALSE(error) << error->to_string();
    EXPECT_TRUE(stats.skipped.empty());
    return samples;
  };
  const auto bare = read("bare.csv", "value,timestamp_anon,container_ip\n12.5,60,a1\n0,60,b2\n99,120,a1\n");
  const auto padded = read("padded.csv", "value,timestamp_anon,container_ip\r\n 12.5 ,\t60, a1\r\n0\t, 60 ,b2 \r\n  99,120\t,\ta1\t\r\n");
  ASSERT_EQ(bare.size(), 3u);
  EXPECT_EQ(padded, bare);
  EXPECT_EQ(std::get<2>(bare[0]), 12.5);
}

TEST(Telemetry, AlibabaDutyCycleMatchesAnIndependentComputation) {
  auto dir = std::filesystem::temp_directory_path() / "gpuwise_alibaba";
  std::filesystem::create_directories(dir);
  std::string command = "tar xzf " + std::string(GPUWISE_SOURCE_DIR) +
                        "/examples/telemetry/pod_gpu_duty_cycle_anon.tar.gz -C " + dir.string();
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::string path = (dir / "pod_gpu_duty_cycle_anon.csv").string();
  // Independent: a plain loop over the lines.
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  double sum = 0, idle = 0, n = 0;
  std::map<std::string, std::pair<double, double>> pods;
  while (std::getline(in, line)) {
    std::stringstream cells(line);
    std::string value, time, pod;
    std::getline(cells, value, ',');
    std::getline(cells, time, ',');
    std::getline(cells, pod, ',');
    double v = std::stod(value);
    sum += v;
    idle += v < 5;
    n += 1;
    pods[pod].first += v;
    pods[pod].second += 1;
  }
  int under10 = 0;
  for (const auto& [pod, s] : pods) under10 += s.first / s.second < 10;
  // The reader and aggregator.
  ReadOptions options;
  options.long_csv.timestamp = "timestamp_anon";
  options.long_csv.series = "container_ip";
  options.long_csv.fixed_metric = "gpu_util_pct";
  TelemetryAggregator aggregator;
  ReadStats stats;
  ASSERT_FALSE(read_telemetry(path, options, [&](const TelemetrySample& s) { aggregator.add(s); }, stats));
  double util = 0, idle_samples = 0, samples = 0;
  int low = 0;
  for (const auto& [id, a] : aggregator.series()) {
    util += a.util_sum;
    idle_samples += static_cast<double>(a.idle_samples);
    samples += static_cast<double>(a.util_samples);
    low += a.mean_util() < 10;
  }
  EXPECT_EQ(samples, n);
  EXPECT_EQ(aggregator.series().size(), pods.size());
  EXPECT_NEAR(util / samples, sum / n, 1e-9);      // 7.03% mean duty cycle
  EXPECT_NEAR(idle_samples / samples, idle / n, 1e-12);  // 72% of samples idle
  EXPECT_EQ(low, under10);                          // 123 of 143 pods under 10%
  EXPECT_EQ(stats.samples, 157417);
}

}  // namespace
}  // namespace gw
