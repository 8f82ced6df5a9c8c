// Reads SkyPilot's catalog format (vms.csv per cloud) into gpuwise offerings, so prices can be
// refreshed without a release. Knows the format's quirks: GCP machine types priced apart from
// their GPUs, TPU slice names, placeholder prices, spot prices equal to on-demand.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "catalog/catalog.h"

namespace gw {

struct SkypilotImport {
  std::vector<Offering> offerings;
  int rows_read = 0;
  std::map<std::string, int> skipped;  // reason -> rows
  std::vector<std::string> files_read;
};

struct SkypilotImportOptions {
  std::string as_of;   // date the prices were read, YYYY-MM-DD
  std::string source;  // how the files were obtained, appended to each row's source
};

// Reads DIR/<cloud>.csv or DIR/<cloud>/vms.csv for aws, gcp, azure, lambda, runpod, and any other
// DIR/<name>.csv in the same format. Accelerators are resolved against the catalog.
Result<SkypilotImport> import_skypilot(const std::string& dir, const Catalog& catalog,
                                       const SkypilotImportOptions& options);

// The same for one file's text; cloud is the provider name ("gcp").
Result<SkypilotImport> import_skypilot_csv(std::string_view text, const std::string& file,
                                           const std::string& cloud, const Catalog& catalog,
                                           const SkypilotImportOptions& options);

}  // namespace gw
