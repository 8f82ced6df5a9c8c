// A table of text cells and its writers: aligned terminal text, Markdown, CSV. The seed of the
// report document model every command shares.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/formatting.h"  // the writers format numbers one way

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

}  // namespace gw
