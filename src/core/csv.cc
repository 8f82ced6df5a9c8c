#include "core/csv.h"

#include "core/text.h"
#include <fmt/format.h>

#include "core/numbers.h"

namespace gw {

int CsvTable::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

namespace {

bool is_skippable_line(std::string_view text, size_t pos) {
  // A blank line or a '#' comment at the start of a record.
  size_t end = text.find('\n', pos);
  std::string_view line = text.substr(pos, end == std::string_view::npos ? text.size() - pos : end - pos);
  line = trim(line);
  return line.empty() || line.front() == '#';
}

}  // namespace

Result<CsvTable> parse_csv(std::string_view text, const std::string& file) {
  CsvTable table;
  table.file = file;
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  if (auto problem = encoding_problem(text)) return Error{file, 0, "", *problem + ": not a CSV text file"};

  size_t pos = 0;
  int line = 1;
  bool have_header = false;
  while (pos < text.size()) {
    if (is_skippable_line(text, pos)) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) break;
      pos = end + 1;
      ++line;
      continue;
    }
    CsvRow row;
    row.line = line;
    std::string cell;
    bool in_quotes = false;
    bool record_done = false;
    while (!record_done) {
      if (pos >= text.size()) {
        if (in_quotes) return Error{file, row.line, "", "unterminated quoted field"};
        row.cells.push_back(std::move(cell));
        record_done = true;
        break;
      }
      char c = text[pos++];
      if (in_quotes) {
        if (c == '"') {
          if (pos < text.size() && text[pos] == '"') {
            cell += '"';
            ++pos;
          } else {
            in_quotes = false;
          }
        } else {
          if (c == '\n') ++line;
          cell += c;
        }
      } else if (c == '"' && cell.empty()) {
        in_quotes = true;
      } else if (c == ',') {
        row.cells.push_back(std::move(cell));
        cell.clear();
      } else if (c == '\n') {
        ++line;
        row.cells.push_back(std::move(cell));
        record_done = true;
      } else if (c != '\r') {
        cell += c;
      }
    }
    for (auto& value : row.cells) value = std::string(trim(value));
    if (!have_header) {
      table.header = std::move(row.cells);
      have_header = true;
      continue;
    }
    if (row.cells.size() != table.header.size()) {
      return Error{file, row.line, "",
                   fmt::format("expected {} columns as in the header, found {}",
                               table.header.size(), row.cells.size())};
    }
    table.rows.push_back(std::move(row));
  }
  if (!have_header) return Error{file, 0, "", "empty file: expected a header row"};
  return table;
}

std::string CsvRecord::text(std::string_view column) const {
  int index = table_.column(column);
  if (index < 0) return {};
  return row_.cells[static_cast<size_t>(index)];
}

void CsvRecord::fail(std::string_view column, std::string message) {
  if (!error_) error_ = Error{table_.file, row_.line, std::string(column), std::move(message)};
}

std::string CsvRecord::required_text(std::string_view column) {
  std::string value = text(column);
  if (value.empty()) fail(column, "required value is empty");
  return value;
}

double CsvRecord::number(std::string_view column, double min, double max) {
  std::string value = text(column);
  if (value.empty()) {
    fail(column, "required number is empty");
    return 0;
  }
  auto parsed = optional_number(column, min, max);
  return parsed.value_or(0);
}

std::optional<double> CsvRecord::optional_number(std::string_view column, double min, double max) {
  std::string value = text(column);
  if (value.empty()) return std::nullopt;
  auto parsed = parse_finite_double(value);
  if (!parsed) {
    fail(column, fmt::format("'{}' is not a finite number", value));
    return std::nullopt;
  }
  if (*parsed < min || *parsed > max) {
    fail(column, fmt::format("{} is outside [{}, {}]", value, min, max));
    return std::nullopt;
  }
  return parsed;
}

}  // namespace gw
