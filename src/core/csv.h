// CSV (RFC 4180: quoted fields, doubled quotes, CRLF) read into rows that remember their line,
// and a row view that reads typed fields by column name with errors naming file, line and field.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace gw {

struct CsvRow {
  int line = 0;  // 1-based line where the record starts
  std::vector<std::string> cells;
};

struct CsvTable {
  std::string file;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;

  // Column index by name, or -1.
  int column(std::string_view name) const;
};

// Parses a whole CSV text with a header row. Blank lines and lines starting with '#' are skipped.
// Errors: binary content, an unterminated quote, a row whose cell count differs from the header.
Result<CsvTable> parse_csv(std::string_view text, const std::string& file);

// Reads one row's fields by column name; the first failure is kept in error().
class CsvRecord {
 public:
  CsvRecord(const CsvTable& table, const CsvRow& row) : table_(table), row_(row) {}

  // Empty string when the column is missing.
  std::string text(std::string_view column) const;
  // A required number (error when empty or not a number), optionally bounded.
  double number(std::string_view column, double min, double max);
  // An optional number: nullopt when empty; error when present but not a number or out of range.
  std::optional<double> optional_number(std::string_view column, double min, double max);
  // A required non-empty text.
  std::string required_text(std::string_view column);

  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }
  int line() const { return row_.line; }

 private:
  void fail(std::string_view column, std::string message);

  const CsvTable& table_;
  const CsvRow& row_;
  std::optional<Error> error_;
};

}  // namespace gw
