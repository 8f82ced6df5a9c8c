// nvidia-smi --query-gpu CSV and nvidia-smi dmon.
#include "telemetry/format_readers.h"
#include "telemetry/reader_support.h"

namespace gw::reader_support {

namespace {

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

}  // namespace

std::optional<Error> read_nvidia_smi(std::ifstream& in, const std::string& path, const ReadOptions& o,
                                     const SampleHandler& emit, ReadStats& stats) {
  LineReader lines(in);
  std::string_view line;
  int number = 0;
  size_t header_size = 0;
  int time_col = -1, index_col = -1, uuid_col = -1, bus_col = -1, name_col = -1;
  struct Column {
    int index;
    Metric metric;
    double scale;
  };
  std::vector<Column> columns;
  std::vector<std::string_view> cells;
  // Series by the raw "index|uuid|pci.bus_id|name" cells, so labels are built once per GPU. A
  // query without index, uuid or pci.bus_id lists the GPUs in index order under each timestamp:
  // a row's place under its timestamp is its index then (rows of three GPUs were one series).
  struct Gpu {
    std::string key;
    std::array<std::string, 4> raw;  // the untrimmed index, uuid, bus id and name cells of its last row
    int place;  // its row's place under a timestamp, where that is what tells GPUs apart
    const std::string* id;
    const Labels* labels;
  };
  std::vector<Gpu> gpus;
  std::string place_stamp;  // the timestamp the row places count under
  int place = 0;
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
        else if (c == "pci.bus_id") bus_col = idx;
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
    const int key_cols[4] = {index_col, uuid_col, bus_col, name_col};
    const bool by_place = index_col < 0 && uuid_col < 0 && bus_col < 0;
    if (stamp != place_stamp) place_stamp.assign(stamp), place = 0;
    else ++place;
    auto same_gpu = [&](const Gpu& g) {
      if (by_place && g.place != place) return false;
      for (int k = 0; k < 4; ++k)
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
      if (by_place) key += std::to_string(place);
      auto it = known.find(std::string_view(key));
      if (it == known.end()) {
        Labels labels;
        if (!o.host.empty()) labels.emplace_back("host", o.host);
        if (uuid_col >= 0) labels.emplace_back("uuid", std::string(trim(cells[static_cast<size_t>(uuid_col)])));
        else if (bus_col >= 0) labels.emplace_back("pci_bus_id", std::string(trim(cells[static_cast<size_t>(bus_col)])));
        else if (index_col >= 0) labels.emplace_back("gpu", std::string(trim(cells[static_cast<size_t>(index_col)])));
        else labels.emplace_back("gpu", std::to_string(place));
        if (name_col >= 0) labels.emplace_back("model", std::string(trim(cells[static_cast<size_t>(name_col)])));
        auto [id, interned] = table().intern(std::move(labels));
        gpus.push_back({key, {}, by_place ? place : 0, id, interned});
        it = known.emplace(key, gpus.size() - 1).first;
      }
      guess = it->second;
      for (int k = 0; k < 4; ++k)
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


}  // namespace gw::reader_support
