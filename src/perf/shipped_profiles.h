// The measured operator profiles that ship in the catalog, listed one entry per device and
// model with the tensor-parallel degrees and token counts profiled (`gpuwise catalog profiles`).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/table.h"

namespace gw {

struct ShippedProfile {
  std::string device;       // as the profile names it (a100, h100, a40)
  std::string accelerator;  // the catalog's name for it
  std::string model;
  std::vector<int> tensor_parallel;  // degrees profiled, ascending
  double min_tokens = 0, max_tokens = 0;
  size_t rows = 0;
};

// Where the profiles come from, with licence and commit.
extern const char* const kShippedProfilesSource;

// By device, then model.
std::vector<ShippedProfile> shipped_profiles();
nlohmann::json to_json(const std::vector<ShippedProfile>& profiles);
Table profiles_table(const std::vector<ShippedProfile>& profiles);

}  // namespace gw
