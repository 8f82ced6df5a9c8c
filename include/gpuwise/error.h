// gpuwise::Error: what every gpuwise call throws for input it cannot take.
//
// Thread safety: immutable after construction; safe to copy and read from any thread.
#pragma once

#include <stdexcept>
#include <string>

namespace gpuwise {

class Error : public std::runtime_error {
 public:
  // What kind of failure, as the CLI's exit status says it: 1 bad input (a spec, a file, an
  // option), 3 the question has no answer within its constraints (used by callers that treat an
  // unmet plan as an error; the entry points themselves return such results).
  // 130 the call was stopped through an InterruptScope (gpuwise/interrupt.h), as Ctrl-C stops the CLI.
  enum class Kind { bad_input = 1, infeasible = 3, interrupted = 130 };

  Error(std::string file, int line, std::string field, std::string message, Kind kind = Kind::bad_input);

  // The file at fault, empty when the input has no file (an option, a string).
  const std::string& file() const noexcept { return file_; }
  // 1-based line in file(); 0 when unknown or the input is not line-oriented.
  int line() const noexcept { return line_; }
  // The key, column or option at fault ("services.chat.slo"); may be empty.
  const std::string& field() const noexcept { return field_; }
  // The message without file, line and field.
  const std::string& message() const noexcept { return message_; }
  Kind kind() const noexcept { return kind_; }
  // what(): "file:line: field 'x': message", the parts that are unknown left out; the CLI prints
  // the same after "gpuwise: error: ".

 private:
  std::string file_;
  int line_;
  std::string field_;
  std::string message_;
  Kind kind_;
};

}  // namespace gpuwise
