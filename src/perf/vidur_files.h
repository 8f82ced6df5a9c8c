// Where Vidur-layout profile files are: compute/<device>/<org>/<model>/<file> under a folder, or
// under catalog/profiles/<source>/ in the embedded catalog. One walk for every profile kind.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

struct VidurFile {
  std::string path, device, model;  // model: "<org>/<model>"
};
// Every compute/<device>/<org>/<model>/<filename> under dir, sorted by path.
std::vector<VidurFile> vidur_files(const std::string& dir, std::string_view filename);
// Every embedded profiles/<source>/compute/<device>/<org>/<model>/<filename>, with its text.
void for_each_embedded_vidur_file(std::string_view filename,
                                  const std::function<void(const VidurFile& file, std::string_view text)>& visit);

}  // namespace gw
