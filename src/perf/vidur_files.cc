#include "perf/vidur_files.h"

#include <algorithm>
#include <filesystem>

#include "catalog/embedded.h"

namespace gw {

std::vector<VidurFile> vidur_files(const std::string& dir, std::string_view filename) {
  namespace fs = std::filesystem;
  std::vector<VidurFile> out;
  std::error_code ec;
  fs::path compute = fs::path(dir) / "compute";
  for (fs::recursive_directory_iterator it(compute, ec), end; it != end && !ec; it.increment(ec)) {
    if (it->path().filename() != filename) continue;
    fs::path relative = it->path().lexically_relative(compute);  // <device>/<org>/<model>/<filename>
    std::string device = relative.begin()->string();
    out.push_back({it->path().string(), device, relative.parent_path().lexically_relative(device).string()});
  }
  std::sort(out.begin(), out.end(), [](const VidurFile& a, const VidurFile& b) { return a.path < b.path; });
  return out;
}

void for_each_embedded_vidur_file(std::string_view filename,
                                  const std::function<void(const VidurFile& file, std::string_view text)>& visit) {
  for (const auto& file : embedded_catalog_files()) {
    std::string_view path = file.path;
    size_t compute = path.find("/compute/");
    if (path.rfind("profiles/", 0) != 0 || compute == std::string_view::npos || path.size() < filename.size() + 1 ||
        path.substr(path.size() - filename.size()) != filename || path[path.size() - filename.size() - 1] != '/')
      continue;
    std::string_view rest = path.substr(compute + 9, path.size() - compute - 9 - filename.size() - 1);
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) continue;
    visit({"catalog/" + std::string(path), std::string(rest.substr(0, slash)), std::string(rest.substr(slash + 1))},
          file.contents);
  }
}

}  // namespace gw
