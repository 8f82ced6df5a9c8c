#include "plan/training_table.h"

#include <fmt/format.h>

namespace gw {

Table training_frontier_table(const std::vector<TrainingCandidate>& candidates) {
  Table table;
  table.columns = {"accelerator", "count", "offering", "pricing", "days", "gpu_hours", "usd_per_run", "mfu"};
  table.align = {Align::left, Align::right, Align::left, Align::left, Align::right, Align::right, Align::right, Align::right};
  for (const auto& c : candidates)
    table.add_row({c.offering->accelerator, std::to_string(c.devices),
                   fmt::format("{} {} {} x{}", c.offering->cloud, offering_place(*c.offering, c.pricing), c.offering->instance_type, c.instances),
                   std::string(pricing_name(c.pricing)), format_number(c.expected_time_s / 86400, 2),
                   format_number(c.expected_time_s / 3600 * c.devices, 0), format_usd(c.usd),
                   fmt::format("{:.0f}%", c.estimate.mfu * 100)});
  return table;
}

}  // namespace gw
