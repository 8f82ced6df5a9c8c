#include "report/json_document.h"

namespace gw {

nlohmann::json json_document(const std::string& command, nlohmann::json body) {
  // The body's own keys win, as an update would give them; the body is moved, not copied
  // (an audit's document holds thousands of series).
  if (!body.is_object()) {
    nlohmann::json wrapped = {{"schema_version", 1}, {"command", command}};
    wrapped.update(body);  // null adds nothing; anything else is refused as before
    return wrapped;
  }
  if (!body.contains("schema_version")) body["schema_version"] = 1;
  if (!body.contains("command")) body["command"] = command;
  return body;
}

std::string json_text(const nlohmann::json& document) {
  return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace gw
