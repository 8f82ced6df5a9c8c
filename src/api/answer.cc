#include "gpuwise/answer.h"

#include "api/handles.h"
#include "report/json_document.h"

namespace gpuwise {

const std::string& Answer::command() const { return impl_->command; }
int Answer::exit_code() const { return impl_->exit_code; }
std::string Answer::to_json() const { return gw::json_text(gw::json_document(impl_->command, impl_->body)); }
std::string Answer::to_text(bool explain) const { return impl_->text(explain); }

std::string Answer::to_markdown(bool explain) const {
  if (!impl_->markdown) throw Error("", 0, "format", "'" + impl_->command + "' has no Markdown report, only the table and JSON");
  return impl_->markdown(explain);
}

std::string Answer::to_html() const {
  if (!impl_->document) throw Error("", 0, "format", "'" + impl_->command + "' has no HTML report, only the table and JSON");
  return gw::value_or_throw(gw::render_html(impl_->document()));
}

const std::vector<std::string>& Answer::warnings() const { return impl_->warnings; }

}  // namespace gpuwise
