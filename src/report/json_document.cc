#include "report/json_document.h"

namespace gw {

nlohmann::json json_document(const std::string& command, nlohmann::json body) {
  nlohmann::json wrapped = {{"schema_version", 1}, {"command", command}};
  wrapped.update(body);
  return wrapped;
}

std::string json_text(const nlohmann::json& document) {
  return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace gw
