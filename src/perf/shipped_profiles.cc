#include "perf/shipped_profiles.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

#include "perf/layer_operators.h"

namespace gw {

const char* const kShippedProfilesSource = "microsoft/vidur 7d47513 data/profiling (MIT), medians of per-operator times, fp16";

std::vector<ShippedProfile> shipped_profiles() {
  struct Entry {
    std::set<int> tensor_parallel;
    double min_tokens = 1e300, max_tokens = 0;
    size_t rows = 0;
  };
  std::map<std::pair<std::string, std::string>, Entry> entries;
  for (const auto& row : embedded_layer_profiles()) {
    Entry& e = entries[{row.device, row.model}];
    e.tensor_parallel.insert(row.dims.tensor_parallel);
    e.min_tokens = std::min(e.min_tokens, row.tokens);
    e.max_tokens = std::max(e.max_tokens, row.tokens);
    ++e.rows;
  }
  std::vector<ShippedProfile> out;
  for (const auto& [key, e] : entries)
    out.push_back({key.first, profiled_accelerator(key.first), key.second,
                   std::vector<int>(e.tensor_parallel.begin(), e.tensor_parallel.end()), e.min_tokens, e.max_tokens, e.rows});
  return out;
}

nlohmann::json to_json(const std::vector<ShippedProfile>& profiles) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : profiles)
    list.push_back({{"device", p.device},
                    {"accelerator", p.accelerator},
                    {"model", p.model},
                    {"tensor_parallel", p.tensor_parallel},
                    {"min_tokens", p.min_tokens},
                    {"max_tokens", p.max_tokens},
                    {"rows", p.rows}});
  return list;
}

Table profiles_table(const std::vector<ShippedProfile>& profiles) {
  Table table;
  table.columns = {"device", "accelerator", "model", "tensor_parallel", "tokens", "rows"};
  table.align = {Align::left, Align::left, Align::left, Align::left, Align::right, Align::right};
  for (const auto& p : profiles) {
    std::string degrees;
    for (int tp : p.tensor_parallel) degrees += (degrees.empty() ? "" : ",") + std::to_string(tp);
    table.add_row({p.device, p.accelerator, p.model, degrees, fmt::format("{:.0f}-{:.0f}", p.min_tokens, p.max_tokens),
                   std::to_string(p.rows)});
  }
  return table;
}

}  // namespace gw
