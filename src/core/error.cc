#include "core/error.h"

namespace gw {

std::string Error::to_string() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) out += ":" + std::to_string(line);
    out += ": ";
  } else if (line > 0) {
    out += "line " + std::to_string(line) + ": ";
  }
  if (!field.empty()) out += "field '" + field + "': ";
  out += message;
  return out;
}

}  // namespace gw
