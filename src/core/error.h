// Errors as values: what went wrong, and where (file, line, field), for messages users can act on.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gw {

struct Error {
  std::string file;     // empty when the input has no file (command-line values)
  int line = 0;         // 1-based; 0 when unknown or not line-oriented
  std::string field;    // the column, key or option at fault; may be empty
  std::string message;

  // "file:line: field 'x': message", leaving out the parts that are unknown.
  std::string to_string() const;
};

// An error in a command-line value or an API option: no file, no line, the option named.
inline Error option_error(const std::string& option, const std::string& message) { return Error{"", 0, option, message}; }

// A value or the Error that prevented it. REQUIRES: ok() before value(), !ok() before error().
template <typename T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}              // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}          // NOLINT: implicit by design
  bool ok() const { return state_.index() == 0; }
  T& value() { return std::get<0>(state_); }
  const T& value() const { return std::get<0>(state_); }
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Thrown only inside command implementations and caught at the CLI boundary; readers return
// Result instead.
struct InputError {
  Error error;
};

}  // namespace gw
