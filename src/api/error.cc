#include "gpuwise/error.h"

#include "api/handles.h"
#include "core/cancel.h"
#include "model/presets.h"

namespace gpuwise {

Error::Error(std::string file, int line, std::string field, std::string message, Kind kind)
    : std::runtime_error(gw::Error{file, line, field, message}.to_string()),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)),
      message_(std::move(message)),
      kind_(kind) {}

}  // namespace gpuwise

namespace gw {

gpuwise::Error public_error(const Error& error) { return gpuwise::Error(error.file, error.line, error.field, error.message); }

std::optional<Calibration> load_public_calibration(const std::string& path) {
  if (path.empty()) return std::nullopt;
  auto loaded = Calibration::load(path);
  if (!loaded.ok()) throw public_error(loaded.error());
  return std::move(loaded.value());
}

void throw_if_interrupted() {
  if (cancel_requested()) throw gpuwise::Error("", 0, "", "interrupted", gpuwise::Error::Kind::interrupted);
}

ModelArch public_model(const std::string& name_or_path) { return value_or_throw(resolve_model(name_or_path)); }

}  // namespace gw
