#include "telemetry/readers.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <cstring>
#include <set>
#include <ctime>
#include <unordered_map>

#include "core/flat_index.h"
#include "core/limits.h"
#include "core/numbers.h"
#include "core/text.h"
#include "trace/request_trace.h"

namespace gw {

std::string_view metric_name(Metric metric) {
  switch (metric) {
    case Metric::gpu_util_pct: return "gpu_util_pct";
    case Metric::sm_active: return "sm_active";
    case Metric::tensor_active: return "tensor_active";
    case Metric::memory_used_bytes: return "memory_used_bytes";
    case Metric::memory_total_bytes: return "memory_total_bytes";
    case Metric::power_w: return "power_w";
    case Metric::cpu_util_pct: return "cpu_util_pct";
    case Metric::requests_per_s: return "requests_per_s";
    case Metric::cpu_iowait_pct: return "cpu_iowait_pct";
    case Metric::host_cpus: return "host_cpus";
    case Metric::dram_active: return "dram_active";
  }
  return "gpu_util_pct";
}

std::optional<MetricName> metric_by_name(std::string_view name) {
  constexpr double kMiBytes = 1024.0 * 1024.0;
  struct Entry {
    std::string_view name;
    Metric metric;
    double scale;
  };
  static constexpr Entry kNames[] = {
      {"gpu_util_pct", Metric::gpu_util_pct, 1}, {"duty_cycle", Metric::gpu_util_pct, 1}, {"gpu_util", Metric::gpu_util_pct, 1},
      {"DCGM_FI_DEV_GPU_UTIL", Metric::gpu_util_pct, 1}, {"utilization.gpu", Metric::gpu_util_pct, 1},
      {"sm_active", Metric::sm_active, 1}, {"DCGM_FI_PROF_SM_ACTIVE", Metric::sm_active, 1},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", Metric::sm_active, 1},
      {"tensor_active", Metric::tensor_active, 1}, {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", Metric::tensor_active, 1},
      {"dram_active", Metric::dram_active, 1}, {"DCGM_FI_PROF_DRAM_ACTIVE", Metric::dram_active, 1},
      {"memory_used_bytes", Metric::memory_used_bytes, 1}, {"memory_used", Metric::memory_used_bytes, 1},
      {"DCGM_FI_DEV_FB_USED", Metric::memory_used_bytes, kMiBytes}, {"memory.used", Metric::memory_used_bytes, kMiBytes},
      {"memory_total_bytes", Metric::memory_total_bytes, 1}, {"DCGM_FI_DEV_FB_TOTAL", Metric::memory_total_bytes, kMiBytes},
      {"memory.total", Metric::memory_total_bytes, kMiBytes},
      {"power_w", Metric::power_w, 1}, {"DCGM_FI_DEV_POWER_USAGE", Metric::power_w, 1}, {"power.draw", Metric::power_w, 1},
      {"cpu_util_pct", Metric::cpu_util_pct, 1}, {"cpu_iowait_pct", Metric::cpu_iowait_pct, 1},
      {"requests_per_s", Metric::requests_per_s, 1}, {"qps", Metric::requests_per_s, 1},
      {"host_cpus", Metric::host_cpus, 1},
  };
  for (const auto& e : kNames)
    if (e.name == name) return MetricName{e.metric, e.scale};
  return std::nullopt;
}

std::optional<TimestampUnit> parse_timestamp_unit(std::string_view text) {
  std::string name = to_lower(text);
  if (name.empty() || name == "auto") return TimestampUnit::automatic;
  if (name == "s" || name == "seconds") return TimestampUnit::seconds;
  if (name == "ms" || name == "milliseconds") return TimestampUnit::milliseconds;
  return std::nullopt;
}

std::optional<TelemetryFormat> parse_telemetry_format(std::string_view text) {
  std::string name = to_lower(text);
  if (name == "auto" || name.empty()) return TelemetryFormat::automatic;
  if (name == "nvidia-smi") return TelemetryFormat::nvidia_smi;
  if (name == "dmon") return TelemetryFormat::dmon;
  if (name == "dcgm") return TelemetryFormat::dcgm;
  if (name == "prometheus-json") return TelemetryFormat::prometheus_json;
  if (name == "long-csv") return TelemetryFormat::long_csv;
  return std::nullopt;
}

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Reads a file in large blocks and hands out lines as views: no allocation per line. The
// buffer is not zeroed (small files cost no 4 MiB memset) and grows for a long line up to
// kMaxLine; a longer "line" is handed out in pieces, which readers then skip as malformed.
class LineReader {
 public:
  explicit LineReader(std::ifstream& in) : in_(in), buffer_(new char[kBlock]), size_(kBlock) {}
  bool next(std::string_view& line) {
    while (true) {
      size_t newline = pending_.find('\n');
      if (newline != std::string_view::npos) {
        line = pending_.substr(0, newline);
        pending_.remove_prefix(newline + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return true;
      }
      if (eof_ || pending_.size() >= kMaxLine) {
        if (pending_.empty()) return false;
        line = pending_;
        pending_ = {};
        return true;
      }
      // Move the partial line to the front and read more behind it.
      size_t keep = pending_.size();
      if (keep > 0) std::memmove(buffer_.get(), pending_.data(), keep);
      if (keep == size_) {  // a very long line
        std::unique_ptr<char[]> larger(new char[size_ * 2]);
        std::memcpy(larger.get(), buffer_.get(), keep);
        buffer_ = std::move(larger);
        size_ *= 2;
      }
      in_.read(buffer_.get() + keep, static_cast<std::streamsize>(size_ - keep));
      size_t got = static_cast<size_t>(in_.gcount());
      if (got == 0) eof_ = true;
      pending_ = std::string_view(buffer_.get(), keep + got);
    }
  }

 private:
  static constexpr size_t kBlock = size_t{1} << 22;
  static constexpr size_t kMaxLine = size_t{1} << 28;
  std::ifstream& in_;
  std::unique_ptr<char[]> buffer_;
  size_t size_;
  std::string_view pending_;
  bool eof_ = false;
};

// "YYYY-MM-DD HH:MM:SS[.frac]" or with '/' separators, without allocating; else the general parser.
std::optional<double> fast_time(std::string_view text) {
  text = trim(text);
  auto digit = [&](size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  auto number = [&](size_t at, size_t width) {
    int v = 0;
    for (size_t i = at; i < at + width; ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  if (text.size() >= 19 && digit(0) && digit(3) && (text[4] == '-' || text[4] == '/') && (text[7] == '-' || text[7] == '/') &&
      (text[10] == ' ' || text[10] == 'T') && text[13] == ':' && text[16] == ':' && digit(17) && digit(18)) {
    int year = number(0, 4), month = number(5, 2), day = number(8, 2);
    if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
    // Days from civil (Hinnant), as in trace/request_trace.cc.
    long long y = year - (month <= 2);
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = static_cast<unsigned>(y - era * 400);
    unsigned doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    long long days = era * 146097 + static_cast<long long>(doe) - 719468;
    double t = static_cast<double>(days * 86400 + number(11, 2) * 3600 + number(14, 2) * 60 + number(17, 2));
    if (text.size() > 19 && text[19] == '.') {
      double scale = 0.1;
      for (size_t i = 20; i < text.size() && digit(i); ++i, scale /= 10) t += (text[i] - '0') * scale;
    }
    return t;
  }
  std::string copy(text);
  std::replace(copy.begin(), copy.end(), '/', '-');
  return parse_timestamp(copy);
}

struct ViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
};

// Interns series ids and labels so samples carry stable pointers (bounded by the series count).
class SeriesTable {
 public:
  // Thread-safe: audits may run in several threads of one program (the Python module's).
  std::pair<const std::string*, const Labels*> intern(Labels labels) {
    std::sort(labels.begin(), labels.end());
    std::string id;
    for (const auto& [k, v] : labels) id += (id.empty() ? "" : ",") + k + "=" + v;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = series_.find(id);
    if (it == series_.end()) {
      if (series_.size() >= input_limits().max_series)
        throw SeriesLimitExceeded(fmt::format("more than {} telemetry series (raise the limit with --max-series)",
                                              input_limits().max_series));
      it = series_.emplace(id, std::move(labels)).first;
    }
    return {&it->first, &it->second};
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, Labels> series_;  // node-based: pointers into it stay valid
};

SeriesTable& table() {
  static SeriesTable t;  // ids live as long as the process (one audit per run)
  return t;
}

// trim() for a cell, returning at once when neither end is blank, as most cells are (' ', '\t'
// and '\r' are all at or below ' '): a tenth of a long CSV's reading went to trimming.
inline std::string_view trim_cell(std::string_view text) {
  if (!text.empty() && static_cast<unsigned char>(text.front()) > ' ' && static_cast<unsigned char>(text.back()) > ' ') return text;
  return trim(text);
}

// Cells of a CSV line as views into it (no quoting in telemetry CSVs).
void split_views(std::string_view line, std::vector<std::string_view>& cells) {
  cells.clear();
  // A plain loop: cells are short, and memchr's set-up costs more than it saves here.
  const char* begin = line.data();
  const char* end = begin + line.size();
  const char* start = begin;
  for (const char* p = begin; p != end; ++p) {
    if (*p == ',') {
      cells.emplace_back(start, static_cast<size_t>(p - start));
      start = p + 1;
    }
  }
  cells.emplace_back(start, static_cast<size_t>(end - start));
}

// "45 %", "1024 MiB", "[N/A]", "N/A" -> number or nullopt.
bool smi_not_available(std::string_view text) {
  text = trim(text);
  return text.empty() || text.front() == '[' || text == "N/A" || text == "-";
}

// One pass: the first word is the number, what follows it is the unit.
std::optional<double> smi_number(std::string_view text) {
  size_t begin = 0, size = text.size();
  while (begin < size && (text[begin] == ' ' || text[begin] == '\t')) ++begin;
  size_t end = begin;
  while (end < size && text[end] != ' ' && text[end] != '\t') ++end;
  std::string_view word = text.substr(begin, end - begin);
  if (word.empty() || word.front() == '[' || word == "N/A" || word == "-") return std::nullopt;  // [N/A], [Not Supported]
  return parse_decimal(word);
}

std::optional<Error> read_nvidia_smi(std::ifstream& in, const std::string& path, const ReadOptions& o,
                                     const SampleHandler& emit, ReadStats& stats) {
  LineReader lines(in);
  std::string_view line;
  int number = 0;
  size_t header_size = 0;
  int time_col = -1, index_col = -1, uuid_col = -1, name_col = -1;
  struct Column {
    int index;
    Metric metric;
    double scale;
  };
  std::vector<Column> columns;
  std::vector<std::string_view> cells;
  // Series by the raw "index|uuid|name" cells, so labels are built once per GPU.
  struct Gpu {
    std::string key;
    std::array<std::string, 3> raw;  // the untrimmed index, uuid and name cells of its last row
    const std::string* id;
    const Labels* labels;
  };
  std::vector<Gpu> gpus;
  std::unordered_map<std::string, size_t, ViewHash, std::equal_to<>> known;
  size_t guess = 0;
  std::string key, last_stamp_storage;
  std::string_view last_stamp;
  std::optional<double> last_time;
  while (lines.next(line)) {
    ++number;
    ++stats.lines;
    if (trim(line).empty()) continue;
    split_views(line, cells);
    if (header_size == 0) {
      if (to_lower(trim(cells[0])).rfind("timestamp", 0) != 0)
        return Error{path, number, "", "not nvidia-smi --query-gpu CSV: expected a header starting with timestamp"};
      header_size = cells.size();
      for (size_t i = 0; i < cells.size(); ++i) {
        std::string c = to_lower(trim(cells[i]));
        int idx = static_cast<int>(i);
        if (c.rfind("timestamp", 0) == 0) time_col = idx;
        else if (c == "index") index_col = idx;
        else if (c == "uuid") uuid_col = idx;
        else if (c == "name") name_col = idx;
        else if (c.rfind("utilization.gpu", 0) == 0) columns.push_back({idx, Metric::gpu_util_pct, 1});
        else if (c.rfind("memory.used", 0) == 0) columns.push_back({idx, Metric::memory_used_bytes, kMiB});
        else if (c.rfind("memory.total", 0) == 0) columns.push_back({idx, Metric::memory_total_bytes, kMiB});
        else if (c.rfind("power.draw", 0) == 0) columns.push_back({idx, Metric::power_w, 1});
      }
      if (columns.empty()) return Error{path, number, "", "no utilization.gpu, memory.used or power.draw column"};
      continue;
    }
    if (cells.size() != header_size) {
      stats.skip("wrong number of columns");
      continue;
    }
    // Rows of one query share their timestamp: parse it once.
    std::string_view stamp = trim(cells[static_cast<size_t>(time_col)]);
    if (stamp != last_stamp) {
      last_stamp_storage.assign(stamp);
      last_stamp = last_stamp_storage;
      last_time = fast_time(stamp);
    }
    auto t = last_time;
    if (!t) {
      stats.skip("bad timestamp");
      continue;
    }
    const int key_cols[3] = {index_col, uuid_col, name_col};
    auto same_gpu = [&](const Gpu& g) {
      for (int k = 0; k < 3; ++k)
        if (key_cols[k] >= 0 && cells[static_cast<size_t>(key_cols[k])] != g.raw[static_cast<size_t>(k)]) return false;
      return true;
    };
    // Rows cycle through the GPUs in the same order: try the one after the last first.
    if (++guess >= gpus.size()) guess = 0;
    if (guess >= gpus.size() || !same_gpu(gpus[guess])) {
      key.clear();
      for (int c : key_cols) {
        if (c >= 0) key.append(trim(cells[static_cast<size_t>(c)]));
        key += '|';
      }
      auto it = known.find(std::string_view(key));
      if (it == known.end()) {
        Labels labels;
        if (!o.host.empty()) labels.emplace_back("host", o.host);
        if (uuid_col >= 0) labels.emplace_back("uuid", std::string(trim(cells[static_cast<size_t>(uuid_col)])));
        else if (index_col >= 0) labels.emplace_back("gpu", std::string(trim(cells[static_cast<size_t>(index_col)])));
        if (name_col >= 0) labels.emplace_back("model", std::string(trim(cells[static_cast<size_t>(name_col)])));
        auto [id, interned] = table().intern(std::move(labels));
        gpus.push_back({key, {}, id, interned});
        it = known.emplace(key, gpus.size() - 1).first;
      }
      guess = it->second;
      for (int k = 0; k < 3; ++k)
        if (key_cols[k] >= 0) gpus[guess].raw[static_cast<size_t>(k)].assign(cells[static_cast<size_t>(key_cols[k])]);
    }
    const Gpu& gpu = gpus[guess];
    for (const auto& c : columns) {
      auto v = smi_number(cells[static_cast<size_t>(c.index)]);
      if (!v) {
        stats.skip(smi_not_available(cells[static_cast<size_t>(c.index)]) ? "not available ([N/A])" : "value not a number");
        continue;
      }
      emit({gpu.id, gpu.labels, c.metric, *t, *v * c.scale});
      ++stats.samples;
    }
  }
  if (header_size == 0) return Error{path, 0, "", "empty file: not telemetry"};
  return std::nullopt;
}

std::optional<Error> read_dmon(std::ifstream& in, const std::string& path, const ReadOptions& o, const SampleHandler& emit,
                               ReadStats& stats) {
  std::string line;
  int number = 0;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++number;
    ++stats.lines;
    std::string_view view = trim(line);
    if (view.empty()) continue;
    if (view.front() == '#') {
      std::vector<std::string> words;
      for (auto& w : split(std::string(view.substr(1)), ' '))
        if (!trim(w).empty()) words.push_back(to_lower(std::string(trim(w))));
      if (!words.empty() && (words[0] == "date" || words[0] == "gpu" || words[0] == "time")) header = words;
      continue;  // units lines too
    }
    if (header.empty()) return Error{path, number, "", "not nvidia-smi dmon output: no '# gpu ...' header"};
    std::vector<std::string> cells;
    for (auto& w : split(std::string(view), ' '))
      if (!trim(w).empty()) cells.push_back(std::string(trim(w)));
    if (cells.size() != header.size()) {
      stats.skip("wrong number of columns");
      continue;
    }
    std::optional<double> t;
    std::string date, time, gpu;
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == "date") date = cells[i];
      if (header[i] == "time") time = cells[i];
      if (header[i] == "gpu" || header[i] == "idx") gpu = cells[i];
    }
    if (date.size() == 8) date = date.substr(0, 4) + "-" + date.substr(4, 2) + "-" + date.substr(6, 2);
    t = parse_timestamp(date + " " + time);
    if (!t) {
      stats.skip("bad timestamp (use dmon -o DT)");
      continue;
    }
    auto [id, labels] = table().intern(o.host.empty() ? Labels{{"gpu", gpu}} : Labels{{"gpu", gpu}, {"host", o.host}});
    for (size_t i = 0; i < header.size(); ++i) {
      std::optional<Metric> metric;
      if (header[i] == "sm") metric = Metric::gpu_util_pct;
      else if (header[i] == "pwr") metric = Metric::power_w;
      else if (header[i] == "fb") metric = Metric::memory_used_bytes;
      if (!metric) continue;
      auto v = smi_number(cells[i]);
      if (!v) {
        stats.skip("missing value ('-')");
        continue;
      }
      emit({id, labels, *metric, *t, *metric == Metric::memory_used_bytes ? *v * kMiB : *v});
      ++stats.samples;
    }
  }
  if (header.empty()) return Error{path, 0, "", "empty file: not telemetry"};
  return std::nullopt;
}

// name="value" pairs of a Prometheus label block, with \" \\ and \n escapes.
std::vector<std::pair<std::string, std::string>> parse_label_block(std::string_view block) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos < block.size()) {
    size_t eq = block.find('=', pos);
    if (eq == std::string_view::npos) break;
    std::string key(trim(block.substr(pos, eq - pos)));
    size_t q = block.find('"', eq);
    if (q == std::string_view::npos) break;
    std::string value;
    size_t i = q + 1;
    for (; i < block.size() && block[i] != '"'; ++i) {
      if (block[i] == '\\' && i + 1 < block.size()) {
        ++i;
        value += block[i] == 'n' ? '\n' : block[i];
      } else {
        value += block[i];
      }
    }
    if (i >= block.size()) break;  // unterminated value
    out.emplace_back(std::move(key), std::move(value));
    pos = i + 1;
    while (pos < block.size() && (block[pos] == ',' || block[pos] == ' ')) ++pos;
  }
  return out;
}

// Host CPU from node_exporter: per-CPU idle and iowait counters become rates between
// consecutive samples (as PromQL's rate would), emitted as the host's busy and iowait
// percentages; the recording rule instance:node_cpu_utilisation:rate5m passes through.
class HostCpuRates {
 public:
  void add(std::string_view block, Metric metric, double time_s, double value, const SampleHandler& emit, ReadStats& stats) {
    Series& series = resolve(block, metric);
    switch (series.kind) {
      case Kind::no_host: stats.skip("host CPU sample without an instance or hostname label"); return;
      case Kind::other_mode: stats.skip("node_cpu_seconds_total in a mode other than idle or iowait"); return;
      case Kind::rule:  // the recording rule, already a ratio x 100
        emit({series.id, series.labels, metric, time_s, std::clamp(value, 0.0, 100.0)});
        ++stats.samples;
        return;
      case Kind::idle:
      case Kind::iowait: break;
    }
    series.host->last_s = std::max(series.host->last_s, time_s);
    Counter& c = series.counter;
    if (c.time_s >= 0) {
      double dt = time_s - c.time_s;
      if (dt <= 0) {
        stats.skip("counter sample not after the previous one");
        return;
      }
      if (value < c.value) {
        stats.skip("counter reset");
      } else {
        double rate = std::clamp((value - c.value) / dt, 0.0, 1.0);
        bool idle = series.kind == Kind::idle;
        emit({series.id, series.labels, idle ? Metric::cpu_util_pct : Metric::cpu_iowait_pct, time_s,
              idle ? 100 * (1 - rate) : 100 * rate});
        ++stats.samples;
      }
    }
    c.time_s = time_s;
    c.value = value;
  }
  // The number of CPUs of each host, once its samples are all in.
  void finish(const SampleHandler& emit, ReadStats& stats) {
    for (const auto& [host, h] : hosts_) {
      emit({h.id, h.labels, Metric::host_cpus, h.last_s, static_cast<double>(h.cpus.size())});
      ++stats.samples;
    }
  }

 private:
  enum class Kind { no_host, other_mode, rule, idle, iowait };
  struct Counter {
    double time_s = -1, value = 0;
  };
  struct Host {
    const std::string* id = nullptr;
    const Labels* labels = nullptr;
    double last_s = 0;
    std::set<std::string> cpus;
  };
  struct Series {
    Kind kind = Kind::no_host;
    const std::string* id = nullptr;
    const Labels* labels = nullptr;
    Host* host = nullptr;  // std::map nodes stay put
    Counter counter;
  };

  // A label block is parsed the first time it is seen; its counter lives with it.
  Series& resolve(std::string_view block, Metric metric) {
    auto& by_block = metric == Metric::cpu_util_pct ? rules_ : counters_;
    if (auto it = by_block.find(block); it != by_block.end()) return it->second;
    if (by_block.size() >= input_limits().max_series)  // each block is a node_exporter series
      throw SeriesLimitExceeded(fmt::format("more than {} telemetry series (raise the limit with --max-series)",
                                            input_limits().max_series));
    std::string host, cpu, mode;
    for (auto& [key, label] : parse_label_block(block)) {
      if (key == "instance" && host.empty()) host = instance_host(label);
      else if (key == "hostname" || key == "Hostname" || key == "nodename") host = label;
      else if (key == "cpu") cpu = label;
      else if (key == "mode") mode = label;
    }
    Series series;
    if (host.empty()) {
      series.kind = Kind::no_host;
    } else {
      std::tie(series.id, series.labels) = table().intern(Labels{{"hostname", host}});
      if (metric == Metric::cpu_util_pct) {
        series.kind = Kind::rule;
      } else if (mode != "idle" && mode != "iowait") {
        series.kind = Kind::other_mode;
      } else {
        series.kind = mode == "idle" ? Kind::idle : Kind::iowait;
        Host& h = hosts_[host];
        h.id = series.id;
        h.labels = series.labels;
        h.cpus.insert(cpu);
        series.host = &h;
      }
    }
    return by_block.emplace(std::string(block), series).first->second;
  }

  std::map<std::string, Host> hosts_;
  std::unordered_map<std::string, Series, ViewHash, std::equal_to<>> counters_, rules_;
};

// Prometheus text: name{labels} value [timestamp_ms]; "# timestamp: <s>" lines set the time of
// untimestamped samples (scrapes saved one after another).
std::optional<Error> read_dcgm(std::ifstream& in, const std::string& path, double seconds_per_unit, const SampleHandler& emit,
                               ReadStats& stats) {
  LineReader lines(in);
  std::string_view view;
  int number = 0;
  std::optional<double> scrape_time;
  bool any_metric = false;
  // Series by the raw label block, so labels are parsed once per series.
  std::unordered_map<std::string, std::pair<const std::string*, const Labels*>, ViewHash, std::equal_to<>> known;
  HostCpuRates hosts;
  while (lines.next(view)) {
    ++number;
    ++stats.lines;
    view = trim(view);
    if (view.empty()) continue;
    if (view.front() == '#') {
      if (view.rfind("# timestamp:", 0) == 0) scrape_time = parse_finite_double(view.substr(12));
      continue;
    }
    size_t brace = view.find('{');
    size_t space = view.find(' ');
    size_t name_end = std::min(brace, space);
    if (name_end == std::string_view::npos) {
      stats.skip("not a sample line");
      continue;
    }
    std::string_view name = view.substr(0, name_end);
    std::optional<Metric> metric;
    double scale = 1;
    if (name == "DCGM_FI_DEV_GPU_UTIL") {
      metric = Metric::gpu_util_pct;  // the commonest line, as metric_by_name has it, without the search
    } else if (name.rfind("DCGM_FI_", 0) == 0) {
      if (auto known = metric_by_name(name)) {
        metric = known->metric;
        scale = known->scale;
      }
    } else if (name == "node_cpu_seconds_total") metric = Metric::cpu_iowait_pct;  // idle or iowait: HostCpuRates sorts it out
    else if (name == "instance:node_cpu_utilisation:rate5m") { metric = Metric::cpu_util_pct; scale = 100; }
    if (!metric && !any_metric && number > 50)
      return Error{path, number, "", "not dcgm-exporter or node_exporter output: no DCGM_ or node CPU metrics"};
    if (!metric) {
      stats.skip("metric not used by the audit");
      continue;
    }
    any_metric = true;
    std::string_view block;
    size_t rest = name_end;
    if (brace != std::string_view::npos && brace == name_end) {
      size_t close = view.find('}', brace);
      if (close == std::string_view::npos) {
        stats.skip("unterminated labels");
        continue;
      }
      block = view.substr(brace + 1, close - brace - 1);
      rest = close + 1;
    }
    std::string_view fields = trim(view.substr(rest));
    size_t gap = fields.find(' ');
    std::string_view value_text = fields.substr(0, gap);
    auto value = parse_decimal(value_text);
    if (!value) {
      bool special = value_text == "NaN" || value_text == "+Inf" || value_text == "-Inf" || value_text == "Inf";
      stats.skip(value_text.empty() ? "no value" : special ? "NaN or infinite value" : "value not a number");
      continue;
    }
    std::optional<double> t = scrape_time;
    if (gap != std::string_view::npos) {
      auto stamp = parse_finite_double(fields.substr(gap + 1));
      t = stamp ? std::optional<double>(*stamp * seconds_per_unit) : std::nullopt;
    }
    if (!t) {
      stats.skip("no timestamp (add one per sample or '# timestamp: <s>' per scrape)");
      continue;
    }
    if (*metric == Metric::cpu_util_pct || *metric == Metric::cpu_iowait_pct) {
      hosts.add(block, *metric, *t, *value * scale, emit, stats);
      continue;
    }
    auto it = known.find(block);
    if (it == known.end()) {
      Labels labels;
      for (auto& [key, label] : parse_label_block(block)) {
        std::string canonical = canonical_label_key(key);
        if (identifies_series(canonical)) labels.emplace_back(std::move(canonical), std::move(label));
      }
      it = known.emplace(std::string(block), table().intern(std::move(labels))).first;
    }
    // DCGM's blank sentinels (int64 values from 0x7ffffff0..., int32 2147483632...) mean "not supported".
    if (*value >= 9.2e18 || (*value >= 2147483632.0 && *value <= 2147483647.0)) {
      stats.skip("DCGM 'not supported' sentinel");
      continue;
    }
    emit({it->second.first, it->second.second, *metric, *t, *value * scale});
    ++stats.samples;
  }
  hosts.finish(emit, stats);
  if (!any_metric) return Error{path, 0, "", "not dcgm-exporter or node_exporter output: no DCGM_ or node CPU metrics"};
  return std::nullopt;
}

std::optional<Error> read_prometheus_json(const std::string& path, const SampleHandler& emit, ReadStats& stats) {
  std::string text, message;
  if (!read_file(path, text, message)) return Error{path, 0, "", "cannot read: " + message};
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Error{path, line_of_offset(text, e.byte > 0 ? e.byte - 1 : 0), "", "invalid JSON: " + without_exception_id(e.what())};  } catch (const nlohmann::json::exception& e) {  // numbers out of range, and the like
    return Error{path, 0, "", "invalid JSON: " + without_exception_id(e.what())};
  }
  // Shapes are checked before use: nlohmann's accessors throw on the wrong type.
  if (!doc.is_object() || !doc.contains("status") || doc["status"] != "success" || !doc.contains("data") ||
      !doc["data"].is_object() || !doc["data"].contains("result") || !doc["data"]["result"].is_array())
    return Error{path, 1, "status", "not a successful Prometheus query response"};
  std::set<std::pair<const std::string*, int>> seen;
  for (const auto& series : doc["data"]["result"]) {
    if (!series.is_object() || !series.contains("metric") || !series["metric"].is_object()) {
      stats.skip("malformed series (no metric labels)");
      continue;
    }
    const auto& labels_json = series["metric"];
    std::string name = labels_json.contains("__name__") && labels_json["__name__"].is_string() ? labels_json["__name__"].get<std::string>() : "";
    std::optional<Metric> metric;
    double scale = 1;
    if (auto known = metric_by_name(name)) {
      metric = known->metric;
      scale = known->scale;
    }
    if (!metric) {
      stats.skip("series without a known __name__");
      continue;
    }
    Labels labels;
    for (const auto& [k, v] : series["metric"].items())
      if (k != "__name__" && v.is_string()) labels.emplace_back(canonical_label_key(k), v.get<std::string>());
    auto [id, interned] = table().intern(std::move(labels));
    // The same series twice (merged responses): count it once.
    if (!seen.insert({id, static_cast<int>(*metric)}).second) {
      stats.skip("duplicate series");
      continue;
    }
    if (!series.contains("values") || !series["values"].is_array()) {
      stats.skip("malformed series (no values list)");
      continue;
    }
    for (const auto& point : series["values"]) {
      ++stats.lines;
      if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_string()) {
        stats.skip("malformed point");
        continue;
      }
      auto v = parse_finite_double(point[1].get<std::string>());
      if (!v) {
        stats.skip("value not a number");
        continue;
      }
      emit({id, interned, *metric, point[0].get<double>(), *v * scale});
      ++stats.samples;
    }
  }
  return std::nullopt;
}

std::optional<Error> read_long_csv(std::ifstream& in, const std::string& path, const LongCsvMapping& m,
                                   const SampleHandler& emit, ReadStats& stats) {
  LineReader lines(in);
  std::string_view line;
  int number = 0;
  std::vector<std::string> header;
  int time_col = -1, series_col = -1, metric_col = -1, value_col = -1;
  std::vector<bool> model_or_instance;  // per column
  std::optional<Metric> fixed;
  std::optional<MetricName> fixed_name;
  if (!m.fixed_metric.empty()) {
    fixed_name = metric_by_name(m.fixed_metric);
    if (!fixed_name) return Error{path, 0, "--metric", "unknown metric '" + m.fixed_metric + "'"};
    fixed = fixed_name->metric;
  }
  // Metric names repeat on every row: look each up once.
  std::unordered_map<std::string, std::optional<MetricName>, ViewHash, std::equal_to<>> names;
  // The series a row belongs to, by the raw bytes of the cells that make its labels (the series
  // id, the label columns, the model and instance type): interned once, then found by one hash
  // lookup per row. Cells are views into the line, so a row allocates nothing.
  FlatIndex<std::string, std::pair<const std::string*, const Labels*>> series_by_cells;
  std::string series_key;
  std::vector<bool> label_column;  // per column: kept as a label (--label-columns)
  bool keyed_by_more = false;      // some cell besides the series id makes the labels
  std::vector<std::string_view> cells;
  auto split_into_views = [&cells](std::string_view text) {
    cells.clear();
    size_t start = 0;
    while (true) {
      size_t comma = text.find(',', start);
      cells.push_back(trim_cell(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  };
  // Long CSVs are written a timestamp at a time, one row per series: the previous row's time
  // cell usually repeats, and its parsed value with it.
  std::string last_time_cell;
  double last_time_s = 0;
  while (lines.next(line)) {
    ++number;
    ++stats.lines;
    if (trim(line).empty()) continue;
    split_into_views(line);
    if (header.empty()) {
      header.assign(cells.begin(), cells.end());
      label_column.assign(header.size(), false);
      for (size_t i = 0; i < header.size(); ++i)
        label_column[i] = std::find(m.label_columns.begin(), m.label_columns.end(), header[i]) != m.label_columns.end();
      for (size_t i = 0; i < cells.size(); ++i) {
        if (cells[i] == m.timestamp) time_col = static_cast<int>(i);
        if (cells[i] == m.series) series_col = static_cast<int>(i);
        if (cells[i] == m.metric) metric_col = static_cast<int>(i);
        if (cells[i] == m.value) value_col = static_cast<int>(i);
      }
      // The GPU model and the instance type are kept whenever present: they price the series.
      model_or_instance.assign(cells.size(), false);
      for (size_t i = 0; i < cells.size(); ++i) {
        std::string key = canonical_label_key(cells[i]);
        model_or_instance[i] = (key == "model" || key == "instance_type") && static_cast<int>(i) != time_col &&
                               static_cast<int>(i) != series_col && static_cast<int>(i) != value_col &&
                               static_cast<int>(i) != metric_col;
      }
      for (size_t i = 0; i < cells.size(); ++i) keyed_by_more = keyed_by_more || label_column[i] || model_or_instance[i];
      if (time_col < 0 || series_col < 0 || value_col < 0 || (metric_col < 0 && !fixed))
        return Error{path, number, "", fmt::format("not a long telemetry CSV: needs columns {}, {}, {}{}", m.timestamp,
                                                   m.series, m.value, fixed ? "" : " and " + m.metric)};
      continue;
    }
    if (cells.size() != header.size()) {
      stats.skip("wrong number of columns");
      continue;
    }
    const std::string_view time_cell = cells[static_cast<size_t>(time_col)];
    std::optional<double> t;
    if (!last_time_cell.empty() && time_cell == last_time_cell) {
      t = last_time_s;
    } else if ((t = parse_timestamp(time_cell))) {
      last_time_cell.assign(time_cell);
      last_time_s = *t;
    }
    auto v = parse_decimal(cells[static_cast<size_t>(value_col)]);  // trimmed by the split
    if (!t) {
      stats.skip("bad timestamp");
      continue;
    }
    if (!v) {
      stats.skip("value not a number");
      continue;
    }
    std::optional<MetricName> metric = fixed_name;
    if (!fixed) {
      std::string_view name = cells[static_cast<size_t>(metric_col)];
      auto known = names.find(name);
      if (known == names.end()) known = names.emplace(std::string(name), metric_by_name(name)).first;
      metric = known->second;
    }
    if (!metric) {
      stats.skip("unknown metric");
      continue;
    }
    if (cells[static_cast<size_t>(series_col)].empty()) {
      stats.skip("empty series id");
      continue;
    }
    // The series id alone is the key when no other cell makes the labels (no copy then).
    std::string_view key = cells[static_cast<size_t>(series_col)];
    if (keyed_by_more) {
      series_key.assign(key);
      for (size_t i = 0; i < cells.size(); ++i)
        if (label_column[i] || model_or_instance[i]) {
          series_key += '\x1f';  // a byte no CSV cell here holds: the key maps back to one set of cells
          series_key += cells[i];
        }
      key = series_key;
    }
    const uint64_t key_hash = hash_bytes(key);
    auto* found = series_by_cells.find(key, key_hash);
    if (!found) {
      Labels labels{{"series", std::string(cells[static_cast<size_t>(series_col)])}};
      for (size_t i = 0; i < cells.size(); ++i)
        if (label_column[i])
          labels.emplace_back(canonical_label_key(header[i]), std::string(cells[i]));
        else if (model_or_instance[i] && !cells[i].empty())
          labels.emplace_back(canonical_label_key(header[i]), std::string(cells[i]));  // what runs, for its price
      found = &series_by_cells.insert(std::string(key), key_hash, table().intern(std::move(labels)));
    }
    auto [id, interned] = *found;
    emit({id, interned, metric->metric, *t, *v * metric->scale});
    ++stats.samples;
  }
  if (header.empty()) return Error{path, 0, "", "empty file: not telemetry"};
  return std::nullopt;
}

TelemetryFormat detect(const std::string& path, const std::string& first_line) {
  std::string lower = to_lower(first_line);
  if (path.size() > 5 && path.substr(path.size() - 5) == ".json") return TelemetryFormat::prometheus_json;
  if (!first_line.empty() && first_line[0] == '{') return TelemetryFormat::prometheus_json;
  if (lower.rfind("timestamp", 0) == 0 && lower.find("utilization") != std::string::npos) return TelemetryFormat::nvidia_smi;
  bool dmon_columns = lower.find(" sm") != std::string::npos || lower.find(" pwr") != std::string::npos;
  if ((lower.rfind("#date", 0) == 0 || lower.rfind("# gpu ", 0) == 0 || lower.rfind("#gpu ", 0) == 0) && dmon_columns)
    return TelemetryFormat::dmon;
  if (lower.rfind("# help", 0) == 0 || lower.rfind("# type", 0) == 0 || lower.rfind("dcgm_", 0) == 0 ||
      lower.rfind("node_", 0) == 0 || lower.rfind("instance:node_", 0) == 0 ||
      lower.rfind("# timestamp", 0) == 0)
    return TelemetryFormat::dcgm;
  return TelemetryFormat::long_csv;
}

// OpenMetrics text ends with '# EOF' (and carries timestamps in seconds).
bool ends_with_eof_marker(std::ifstream& in) {
  in.clear();
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size <= 0) {
    in.seekg(0);
    return false;
  }
  std::streamoff from = std::max<std::streamoff>(0, size - 64);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  in.clear();
  in.seekg(0);
  std::string_view view(tail);
  while (!view.empty() && (view.back() == '\n' || view.back() == '\r' || view.back() == ' ' || view.back() == '\t'))
    view.remove_suffix(1);
  return view.size() >= 5 && view.substr(view.size() - 5) == "# EOF";
}


}  // namespace

// A value no device can report: skipped and counted, never averaged. Ratios get 0.1% of slack
// for rounding in the exporters.
const char* outside_physical_range(const TelemetrySample& s) {
  switch (s.metric) {
    case Metric::gpu_util_pct:
      return s.value < 0 || s.value > 100 ? "out of range: utilization outside 0-100%" : nullptr;
    case Metric::sm_active:
    case Metric::tensor_active:
    case Metric::dram_active:
      return s.value < -1e-3 || s.value > 1.001 ? "out of range: activity ratio outside 0-1" : nullptr;
    case Metric::memory_used_bytes:
    case Metric::memory_total_bytes: return s.value < 0 ? "out of range: negative memory" : nullptr;
    case Metric::power_w: return s.value < 0 ? "out of range: negative power" : nullptr;
    case Metric::cpu_util_pct:
    case Metric::cpu_iowait_pct:
      return s.value < 0 || s.value > 100.001 ? "out of range: CPU utilization outside 0-100%" : nullptr;
    case Metric::requests_per_s: return s.value < 0 ? "out of range: negative request rate" : nullptr;
    case Metric::host_cpus: return s.value < 0 ? "out of range: negative CPU count" : nullptr;
  }
  return nullptr;
}

std::string canonical_label_key(std::string_view key) {
  if (key == "Hostname") return "hostname";
  if (key == "UUID") return "uuid";
  if (key == "modelName" || key == "model_name" || key == "gpu_model") return "model";
  if (key == "node.kubernetes.io/instance-type" || key == "node_kubernetes_io_instance_type" ||
      key == "label_node_kubernetes_io_instance_type" || key == "beta_kubernetes_io_instance_type" ||
      key == "label_beta_kubernetes_io_instance_type" || key == "instance-type" || key == "instance_type")
    return "instance_type";
  return std::string(key);
}

bool identifies_series(std::string_view key) {
  for (const char* kept : {"gpu", "uuid", "hostname", "pod", "namespace", "container", "model", "GPU_I_ID", "job", "team",
                           "instance_type"})
    if (key == kept) return true;
  return false;
}

// "[::1]:9100" -> [::1]; a bare host stays as it is.
std::string instance_host(std::string_view instance) {
  size_t colon = instance.rfind(':');
  if (colon != std::string_view::npos && (instance.front() != '[' || (colon > 0 && instance[colon - 1] == ']')))
    instance = instance.substr(0, colon);
  return std::string(instance);
}

std::optional<Error> read_telemetry(const std::string& path, const ReadOptions& o, const SampleHandler& emit, ReadStats& stats) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path, 0, "", "cannot read the telemetry file"};
  TelemetryFormat format = o.format;
  if (format == TelemetryFormat::automatic) {
    std::string first;
    std::getline(in, first);
    if (auto problem = encoding_problem(first)) return Error{path, 1, "", *problem + ": not telemetry"};
    format = detect(path, first);
    in.clear();
    in.seekg(0);
  }
  // One check for every format: a time about 3,000 years from 1970 is garbage, and would
  // overflow the hour-of-week arithmetic downstream.
  double first_s = 1e300, last_s = -1e300;
  long long timed = 0;
  const SampleHandler checked = [&](const TelemetrySample& s) {
    if (std::abs(s.time_s) > 1e11) {
      stats.skip("timestamp out of range");
      --stats.samples;  // readers count every sample they hand over
      return;
    }
    first_s = std::min(first_s, s.time_s);
    last_s = std::max(last_s, s.time_s);
    ++timed;
    if (const char* reason = outside_physical_range(s)) {
      stats.skip(reason);
      --stats.samples;
      TelemetrySample flagged = s;
      flagged.in_range = false;
      emit(flagged);  // its timestamp still tells when the series was scraped
      return;
    }
    emit(s);
  };
  TimestampUnit unit = o.timestamp_unit;
  bool openmetrics = false;
  if (format == TelemetryFormat::dcgm && unit == TimestampUnit::automatic) {
    openmetrics = ends_with_eof_marker(in);
    unit = openmetrics ? TimestampUnit::seconds : TimestampUnit::milliseconds;
  }
  std::optional<Error> error;
  try {
    switch (format) {
      case TelemetryFormat::nvidia_smi: error = read_nvidia_smi(in, path, o, checked, stats); break;
      case TelemetryFormat::dmon: error = read_dmon(in, path, o, checked, stats); break;
      case TelemetryFormat::dcgm:
        error = read_dcgm(in, path, unit == TimestampUnit::seconds ? 1.0 : 1e-3, checked, stats);
        break;
      case TelemetryFormat::prometheus_json: error = read_prometheus_json(path, checked, stats); break;
      default: error = read_long_csv(in, path, o.long_csv, checked, stats); break;
    }
  } catch (const SeriesLimitExceeded& e) {
    return Error{path, static_cast<int>(std::min<long long>(stats.lines, 1 << 30)), "", e.what()};
  }
  if (error) return error;
  // Times that make no sense for telemetry name the likely unit mistake instead of a quiet $0.
  if (timed > 0) {
    const double now_s = static_cast<double>(std::time(nullptr));
    std::string hint = format == TelemetryFormat::dcgm
                           ? (unit == TimestampUnit::seconds ? " (read as seconds" + std::string(openmetrics ? ", OpenMetrics" : "") +
                                                                   "; --timestamp-unit ms if they are milliseconds)"
                                                             : " (read as milliseconds, the Prometheus text format; "
                                                               "--timestamp-unit s if they are seconds, as in OpenMetrics)")
                           : "";
    if (last_s > now_s + 86400)
      stats.warnings.push_back(fmt::format("{}: samples lie in the future (up to {:.0f} days ahead){}", path,
                                           (last_s - now_s) / 86400, hint));
    else if (last_s - first_s > 10 * 365.25 * 86400)
      stats.warnings.push_back(fmt::format("{}: samples span {:.0f} years{}", path, (last_s - first_s) / (365.25 * 86400), hint));
    else if (timed >= 100 && last_s - first_s < 60)
      stats.warnings.push_back(fmt::format("{}: {} samples span only {:.1f} seconds{}", path, timed, last_s - first_s, hint));
    else if (format == TelemetryFormat::dcgm && last_s > 0 && last_s < 3.2e8 && first_s > 0)
      stats.warnings.push_back(fmt::format("{}: samples fall in the 1970s{}", path, hint));
  }
  return std::nullopt;
}

}  // namespace gw
