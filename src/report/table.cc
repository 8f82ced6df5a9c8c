#include "report/table.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/text.h"

namespace gw {

namespace {

// Display width in columns: counts UTF-8 code points, not bytes.
size_t display_width(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++width;
  return width;
}

Align align_of(const Table& table, size_t column) {
  return column < table.align.size() ? table.align[column] : Align::left;
}

}  // namespace

std::string render_text(const Table& table) {
  std::vector<size_t> widths(table.columns.size(), 0);
  for (size_t c = 0; c < table.columns.size(); ++c) widths[c] = display_width(table.columns[c]);
  for (const auto& row : table.rows)
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < widths.size(); ++c) {
      std::string cell = c < cells.size() ? cells[c] : "";
      std::string pad(widths[c] - display_width(cell), ' ');
      if (c > 0) out += "  ";
      out += align_of(table, c) == Align::right ? pad + cell : cell + (c + 1 < widths.size() ? pad : "");
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(table.columns);
  std::vector<std::string> rule;
  for (size_t width : widths) rule.emplace_back(width, '-');
  out += line(rule);
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string markdown_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      out += ' ';
      continue;
    }
    if (std::string_view("\\`*_[]<>|#").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string render_markdown(const Table& table) {
  auto escape = [](const std::string& cell) { return markdown_escape(cell); };
  std::string out = "|";
  for (const auto& column : table.columns) out += " " + escape(column) + " |";
  out += "\n|";
  for (size_t c = 0; c < table.columns.size(); ++c) out += align_of(table, c) == Align::right ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + escape(cell) + " |";
    out += "\n";
  }
  return out;
}

std::string render_csv(const Table& table) {
  auto cell = [](const std::string& text) { return csv_quote(text); };
  std::string out;
  for (size_t c = 0; c < table.columns.size(); ++c) out += (c ? "," : "") + cell(table.columns[c]);
  out += "\n";
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + cell(row[c]);
    out += "\n";
  }
  return out;
}

}  // namespace gw
