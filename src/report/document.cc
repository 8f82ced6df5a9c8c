#include "report/document.h"

#include <fmt/format.h>

namespace gw {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string script_safe_json(const nlohmann::json& value) {
  // Invalid UTF-8 from telemetry is replaced rather than thrown on.
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

const char* kStyle = R"css(
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #d9dee7; --accent: #2458a6; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       max-width: 1120px; margin: 2rem auto; padding: 0 1.25rem; }
h1 { font-size: 1.6rem; margin: 0 0 .75rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
.facts { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; }
.fact { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .8rem; min-width: 11rem; }
.fact .label { color: var(--muted); font-size: .8rem; }
.fact .value { font-size: 1.15rem; font-weight: 600; }
.table { overflow-x: auto; }
table { border-collapse: collapse; margin: .75rem 0; font-size: .85rem; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: #f4f6f9; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.chart { margin: 1rem 0; break-inside: avoid; }
.chart h3 { font-size: 1rem; margin: .5rem 0; }
.assumptions { color: var(--muted); font-size: .85rem; }
footer { color: var(--muted); font-size: .8rem; margin-top: 2rem; }
@media print { body { margin: 0; max-width: none; } .chart { page-break-inside: avoid; } }
)css";

std::string table_html(const Table& table) {
  auto right = [&](size_t c) { return c < table.align.size() && table.align[c] == Align::right; };
  std::string out = "<div class=\"table\"><table>\n<thead><tr>";
  for (size_t c = 0; c < table.columns.size(); ++c)
    out += fmt::format("<th{}>{}</th>", right(c) ? " class=\"num\"" : "", html_escape(table.columns[c]));
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (size_t c = 0; c < row.size(); ++c)
      out += fmt::format("<td{}>{}</td>", right(c) ? " class=\"num\"" : "", html_escape(row[c]));
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table></div>\n";
}

}  // namespace

Result<std::string> render_html(const Document& d) {
  const WebAssets& assets = web_assets();
  if (assets.vega.empty())
    return Error{"", 0, "--format", "this gpuwise was built without the chart libraries; run scripts/bootstrap (npm ci in web/) and rebuild"};
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may load from elsewhere: the report must work offline and leak nothing.
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; "
         "style-src 'unsafe-inline'; img-src data: blob:\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", html_escape(d.title), kStyle);
  out += fmt::format("<h1>{}</h1>\n", html_escape(d.title));
  if (!d.facts.empty()) {
    out += "<div class=\"facts\">\n";
    for (const auto& [label, value] : d.facts)
      out += fmt::format("<div class=\"fact\"><div class=\"label\">{}</div><div class=\"value\">{}</div></div>\n",
                         html_escape(label), html_escape(value));
    out += "</div>\n";
  }
  nlohmann::json charts = nlohmann::json::array();
  for (const auto& section : d.sections) {
    if (!section.heading.empty()) out += fmt::format("<h2>{}</h2>\n", html_escape(section.heading));
    for (const auto& paragraph : section.paragraphs) out += fmt::format("<p>{}</p>\n", html_escape(paragraph));
    for (const auto& chart : section.charts) {
      out += fmt::format("<div class=\"chart\"><h3>{}</h3><div id=\"chart-{}\" data-chart=\"{}\"></div></div>\n",
                         html_escape(chart.title), charts.size(), charts.size());
      charts.push_back(chart.spec);
    }
    for (const auto& table : section.tables) out += table_html(table);
  }
  if (!d.assumptions.empty()) {
    out += "<h2>Assumptions</h2>\n<ul class=\"assumptions\">\n";
    for (const auto& a : d.assumptions) out += "<li>" + html_escape(a) + "</li>\n";
    out += "</ul>\n";
  }
  out += fmt::format("<footer>gpuwise {} report; charts by {}.</footer>\n", html_escape(d.kind), html_escape(assets.versions));
  out += "<script type=\"application/json\" id=\"gpuwise-charts\">" + script_safe_json(charts) + "</script>\n";
  out += "<script>\n" + std::string(assets.vega) + "\n</script>\n";
  out += "<script>\n" + std::string(assets.vega_lite) + "\n</script>\n";
  out += "<script>\n" + std::string(assets.vega_embed) + "\n</script>\n";
  // Each chart draws as SVG (crisp when printed); a failure shows in the page, not silently.
  out += R"js(<script>
(function () {
  var specs = JSON.parse(document.getElementById('gpuwise-charts').textContent);
  window.gpuwiseCharts = Promise.all(specs.map(function (spec, i) {
    var target = document.getElementById('chart-' + i);
    return vegaEmbed(target, spec, {renderer: 'svg', actions: false}).then(function (result) {
      target.setAttribute('data-rendered', 'true');
      return result.view;
    }).catch(function (error) {
      target.textContent = 'chart failed: ' + error;
      throw error;
    });
  }));
})();
</script>
</body>
</html>
)js";
  return out;
}

std::string render_markdown(const Document& d) {
  std::string out = "# " + markdown_escape(d.title) + "\n\n";
  for (const auto& [label, value] : d.facts) out += "- **" + markdown_escape(label) + "**: " + markdown_escape(value) + "\n";
  if (!d.facts.empty()) out += "\n";
  for (const auto& section : d.sections) {
    if (!section.heading.empty()) out += "## " + markdown_escape(section.heading) + "\n\n";
    for (const auto& paragraph : section.paragraphs) out += markdown_escape(paragraph) + "\n\n";
    for (const auto& table : section.tables) out += render_markdown(table) + "\n";
  }
  if (!d.assumptions.empty()) {
    out += "## Assumptions\n\n";
    for (const auto& a : d.assumptions) out += "- " + markdown_escape(a) + "\n";
  }
  return out;
}

}  // namespace gw
