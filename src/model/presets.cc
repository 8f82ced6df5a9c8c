#include "model/presets.h"

#include <algorithm>

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
    const std::vector<std::string> hints = close_matches(name, preset_names());
    return Error{"", 0, "MODEL",
                 "unknown model '" + name + "': not a preset and not a file" +
                     (hints.empty() ? "" : " (did you mean " + quoted_alternatives(hints) + "?)") +
                     "; `gpuwise models` lists the presets, and a Hugging Face config.json (its path) describes any other"};
  }
  auto arch = parse_model_config(text, "<embedded>/" + path);
  if (arch.ok() && arch.value().name.rfind("<embedded>", 0) == 0) arch.value().name = lowered;
  return arch;
}

std::string preset_for_hub_id(const std::string& id) {
  size_t slash = id.find('/');
  if (slash == std::string::npos || slash == 0 || id.find('/', slash + 1) != std::string::npos) return "";
  std::string name = id.substr(slash + 1);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  // Fine-tunes and packagings of one architecture: the suffixes a hub name adds to the base.
  static const char* kSuffixes[] = {"-instruct", "-chat", "-hf", "-it", "-base", "-uncased", "-cased",
                                    "-4k", "-8k", "-32k", "-128k", "-v0.1", "-v0.2", "-v0.3", "-2407", "-2409"};
  for (bool changed = true; changed;) {
    changed = false;
    for (const char* suffix : kSuffixes) {
      std::string_view s(suffix);
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
        name.resize(name.size() - s.size());
        changed = true;
      }
    }
  }
  if (name.rfind("meta-", 0) == 0) name = name.substr(5);  // Meta-Llama-3.1-8B
  auto names = preset_names();
  return std::find(names.begin(), names.end(), name) != names.end() ? name : "";
}

Result<ModelArch> resolve_model(const std::string& name_or_path) {
  std::error_code ec;
  bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                         (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  if (looks_like_path || std::filesystem::is_regular_file(name_or_path, ec)) {
    std::filesystem::path path(name_or_path);
    // A Hugging Face id ("meta-llama/Llama-3.1-70B-Instruct") that is no local file: its preset.
    if (!std::filesystem::exists(path, ec)) {
      std::string preset = preset_for_hub_id(name_or_path);
      if (!preset.empty()) {
        auto arch = load_preset(preset);
        if (arch.ok())
          arch.value().assumptions.push_back("'" + name_or_path + "' is no local file: read as the preset " + preset +
                                             " (same architecture; give its config.json for another)");
        return arch;
      }
      bool hub_id = std::count(name_or_path.begin(), name_or_path.end(), '/') == 1 && name_or_path.front() != '/' &&
                    name_or_path.front() != '.' && name_or_path.find(".json") == std::string::npos;
      if (hub_id) {
        std::string base = name_or_path.substr(name_or_path.find('/') + 1);
        std::transform(base.begin(), base.end(), base.begin(), [](unsigned char c) { return std::tolower(c); });
        std::string hint = closest_match(base, preset_names());
        return Error{name_or_path, 0, "",
                     "no such file or folder, and no preset matches this Hugging Face id" +
                         (hint.empty() ? std::string() : " (the closest preset: '" + hint + "')") +
                         "; give the model's config.json (`gpuwise models` lists the presets)"};
      }
    }
    if (std::filesystem::is_directory(path, ec)) path /= "config.json";
    return load_model_config(path.string());
  }
  return load_preset(name_or_path);
}

}  // namespace gw
