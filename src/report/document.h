// The report document every command can fill: a title, headline figures, sections of text,
// tables and charts (Vega-Lite specs with their data inline), and the assumptions. Writers turn
// it into Markdown (pull requests, wikis) and one self-contained HTML file (charts drawn offline
// by vega, vega-lite and vega-embed, inlined from web/node_modules at build time).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "report/table.h"

namespace gw {

struct Chart {
  std::string title;
  nlohmann::json spec;  // Vega-Lite, data inline
};

struct Section {
  std::string heading;
  std::vector<std::string> paragraphs;
  std::vector<Table> tables;
  std::vector<Chart> charts;
};

struct Document {
  std::string kind;   // audit, plan, ...: the JSON schema's name
  std::string title;
  std::vector<std::pair<std::string, std::string>> facts;  // headline figures: label, value
  std::vector<Section> sections;
  std::vector<std::string> assumptions;
};

// One HTML file that works offline: text escaped, chart data embedded as JSON that cannot close
// its <script>, no request leaves the page. Errors when the binary was built without the chart
// libraries.
Result<std::string> render_html(const Document& document);
std::string render_markdown(const Document& document);

// Text for HTML element content and attribute values.
std::string html_escape(std::string_view text);
// JSON for a <script type="application/json"> block: <, >, & and the line separators escaped.
std::string script_safe_json(const nlohmann::json& value);

// The chart libraries compiled in (empty when web/node_modules was missing at build time).
struct WebAssets {
  std::string_view vega, vega_lite, vega_embed;
  std::string_view versions;  // "vega 6.4.0, vega-lite 6.4.3, vega-embed 7.3.0"
};
const WebAssets& web_assets();

}  // namespace gw
