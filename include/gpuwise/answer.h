// gpuwise::Answer: the result of one of the questions without a result type of its own (fit,
// perf, train, scale, mix, fleet, audit), in every writer the CLI has for it.
//
// Ownership: a cheap handle on shared, immutable data; copies share it, and it keeps alive the
// catalog data it was computed from.
// Thread safety: immutable; safe to read from many threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace gpuwise {

class Answer {
 public:
  // The command that answered ("fit", "audit", ...), as the JSON's `command` says.
  const std::string& command() const;
  // The CLI's exit status for this answer: 0 answered, 3 no configuration meets the question's
  // constraints (nothing fits, an SLO or deadline missed), 4 a partial Prometheus answer.
  int exit_code() const;
  // `gpuwise COMMAND --format json`, byte for byte (schemas/COMMAND.schema.json).
  std::string to_json() const;
  // The table format, without colour; explain adds the assumptions (--explain).
  std::string to_text(bool explain = false) const;
  // --format md. Throws gpuwise::Error for a command without a Markdown report (perf).
  std::string to_markdown(bool explain = false) const;
  // --format html, self-contained. Throws gpuwise::Error for a command without a report, or a
  // library built without the chart libraries.
  std::string to_html() const;
  // The lines the CLI writes to stderr beside the answer ("gpuwise: warning: ...").
  const std::vector<std::string>& warnings() const;

  struct Impl;
  explicit Answer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace gpuwise
