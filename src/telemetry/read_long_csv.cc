// Long CSV telemetry: one sample per row.
#include "telemetry/format_readers.h"
#include "telemetry/reader_support.h"

namespace gw::reader_support {

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

}  // namespace gw::reader_support
