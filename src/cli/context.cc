#include "cli/context.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/numbers.h"
#include "report/json_document.h"

namespace gw {

void fail(const std::string& field, const std::string& message) {
  throw InputError{Error{"", 0, field, message}};
}

std::optional<Calibration> load_calibration_option(const std::string& path) {
  if (path.empty()) return std::nullopt;
  auto loaded = Calibration::load(path);
  if (!loaded.ok()) throw InputError{loaded.error()};
  return loaded.value();
}

const Catalog& CommandContext::catalog() {
  if (catalog_) return *catalog_;
  auto embedded = Catalog::embedded();
  if (!embedded.ok()) throw InputError{embedded.error()};
  catalog_ = std::make_unique<Catalog>(std::move(embedded.value()));
  for (const auto& dir : options.catalog_dirs)
    if (auto error = catalog_->apply_overrides(dir)) throw InputError{*error};
  return *catalog_;
}

void CommandContext::emit(const std::string& text) {
  if (options.format == "html" && !emitting_document_)
    fail("--format", "html reports are available for fit, plan, simulate, train, audit, scale, mix and fleet; use md or json for this command");
  if (options.output.empty()) {
    out_ << text;
    out_.flush();
    return;
  }
  if (same_file(options.output, inputs_))
    throw InputError{Error{options.output, 0, "--output", "refusing to overwrite an input file"}};
  if (auto error = write_file_atomically(options.output, text)) throw InputError{*error};
}

void CommandContext::emit_json(nlohmann::json document, const std::string& command) {
  // The command ends once its document is out: the tree (an audit's holds thousands of series,
  // ~6% of such a run to free node by node) is left for the process's exit to release, as
  // compilers leave their syntax trees. Reachable from here, so leak checkers stay quiet.
  static auto* emitted = new std::vector<nlohmann::json>;
  emitted->push_back(json_document(command, std::move(document)));
  emit(json_text(emitted->back()));
}

void CommandContext::emit_table(const Table& table, const std::string& heading) {
  if (options.format == "csv") {
    emit(render_csv(table));
  } else if (options.format == "md") {
    emit((heading.empty() ? "" : "## " + heading + "\n\n") + render_markdown(table));
  } else {
    emit((heading.empty() ? "" : heading + "\n") + render_text(table));
  }
}

void CommandContext::emit_document(const Document& document) {
  if (!options.charts_dir.empty()) {
    std::error_code ignored;
    std::filesystem::create_directories(options.charts_dir, ignored);
    int n = 0;
    for (const auto& section : document.sections)
      for (const auto& chart : section.charts) {
        nlohmann::json spec = chart.spec;
        spec["title"] = chart.title;
        std::string path = (std::filesystem::path(options.charts_dir) / fmt::format("{}-{}.vl.json", document.kind, ++n)).string();
        if (auto error = write_file_atomically(path, spec.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"))
          throw InputError{*error};
      }
  }
  if (options.format != "html") {
    emit(render_markdown(document));
    return;
  }
  auto html = render_html(document);
  if (!html.ok()) throw InputError{html.error()};
  emitting_document_ = true;
  emit(html.value());
  emitting_document_ = false;
}

void CommandContext::note(const std::string& line) {
  if (!options.quiet) err_ << line << "\n";
}

CLI::Validator count_with_suffix() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto value = parse_count(text);
        if (!value) return "'" + text + "' is not a count (a number, optionally with k, M, B, T, Ki, Mi or Gi)";
        text = fmt::format("{:.17g}", *value);
        // Integer options parse the digits: write whole numbers without an exponent.
        if (std::floor(*value) == *value && std::fabs(*value) < 9e15) text = fmt::format("{:.0f}", *value);
        return "";
      },
      "COUNT[k|M|B|T|Ki]", "count with suffix");
}

}  // namespace gw
