// A table of text cells and its writers: aligned terminal text, Markdown, CSV. The seed of the
// report document model every command shares.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gw {

enum class Align { left, right };

struct Table {
  std::vector<std::string> columns;
  std::vector<Align> align;  // per column; left when missing
  std::vector<std::vector<std::string>> rows;

  void add_row(std::vector<std::string> row) { rows.push_back(std::move(row)); }
};

std::string render_text(const Table& table);
std::string render_markdown(const Table& table);
// Text from users or telemetry for Markdown: markup characters escaped, newlines (which would end
// a paragraph or a table row) as spaces.
std::string markdown_escape(std::string_view text);
std::string render_csv(const Table& table);

// Number formatting for people: thousands separators, fixed decimals, "-" for missing.
std::string format_number(double value, int decimals);
std::string format_gib(double bytes);
std::string format_usd(double usd);
std::string format_count(double value);  // 8.03B, 124.4M, 12.3k

}  // namespace gw
