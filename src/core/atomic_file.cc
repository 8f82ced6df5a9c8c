#include "core/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace gw {

std::optional<Error> write_file_atomically(const std::string& path, std::string_view contents) {
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return Error{path, 0, "", std::string("cannot write: ") + std::strerror(errno)};
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      return Error{path, 0, "", "write failed (disk full?)"};
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string message = std::strerror(errno);
    std::remove(temporary.c_str());
    return Error{path, 0, "", "cannot rename into place: " + message};
  }
  return std::nullopt;
}

bool same_file(const std::string& output, const std::vector<std::string>& inputs) {
  std::error_code ec;
  for (const auto& input : inputs) {
    if (input.empty()) continue;
    if (std::filesystem::exists(output, ec) && std::filesystem::equivalent(output, input, ec)) return true;
    if (std::filesystem::weakly_canonical(output, ec) == std::filesystem::weakly_canonical(input, ec)) return true;
  }
  return false;
}

}  // namespace gw
