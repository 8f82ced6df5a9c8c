#include "model/presets.h"

#include <filesystem>

#include "catalog/embedded.h"
#include "core/text.h"
#include "model/hf_config.h"

namespace gw {

namespace {
constexpr std::string_view kPrefix = "models/";
constexpr std::string_view kSuffix = ".json";
}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& file : embedded_catalog_files()) {
    std::string_view path = file.path;
    if (path.substr(0, kPrefix.size()) != kPrefix || path.size() <= kPrefix.size() + kSuffix.size() ||
        path.substr(path.size() - kSuffix.size()) != kSuffix)
      continue;
    names.emplace_back(path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size()));
  }
  return names;
}

Result<ModelArch> load_preset(const std::string& name) {
  std::string lowered = to_lower(name);
  std::string path = std::string(kPrefix) + lowered + std::string(kSuffix);
  std::string_view text = embedded_catalog_file(path);
  if (text.empty()) {
    std::string hint = closest_match(name, preset_names());
    return Error{"", 0, "MODEL",
                 "unknown model '" + name + "': not a preset and not a file" +
                     (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                     "; `gpuwise models` lists the presets"};
  }
  auto arch = parse_model_config(text, "<embedded>/" + path);
  if (arch.ok() && arch.value().name.rfind("<embedded>", 0) == 0) arch.value().name = lowered;
  return arch;
}

Result<ModelArch> resolve_model(const std::string& name_or_path) {
  std::error_code ec;
  bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                         (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  if (looks_like_path || std::filesystem::is_regular_file(name_or_path, ec)) {
    std::filesystem::path path(name_or_path);
    if (std::filesystem::is_directory(path, ec)) path /= "config.json";
    return load_model_config(path.string());
  }
  return load_preset(name_or_path);
}

}  // namespace gw
