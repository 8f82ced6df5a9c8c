// The shipped operator profiles as listed: every device and model once, the catalog's name for
// each device, degrees ascending, and the JSON and table carrying the same entries.
#include "perf/shipped_profiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace gw {
namespace {

TEST(ShippedProfiles, EachDeviceAndModelOnceWithWhatWasProfiled) {
  auto profiles = shipped_profiles();
  ASSERT_GE(profiles.size(), 7u);
  std::set<std::pair<std::string, std::string>> seen;
  std::set<std::string> accelerators;
  for (const auto& p : profiles) {
    EXPECT_TRUE(seen.insert({p.device, p.model}).second) << p.device << " " << p.model;
    accelerators.insert(p.accelerator);
    EXPECT_TRUE(std::is_sorted(p.tensor_parallel.begin(), p.tensor_parallel.end()));
    EXPECT_FALSE(p.tensor_parallel.empty());
    EXPECT_GT(p.rows, 0u);
    EXPECT_LE(p.min_tokens, p.max_tokens);
  }
  EXPECT_TRUE(accelerators.count("H100") && accelerators.count("A100-80GB")) << "the Vidur profiles cover A100 and H100";
  auto json = to_json(profiles);
  ASSERT_EQ(json.size(), profiles.size());
  EXPECT_EQ(json[0]["device"], profiles[0].device);
  EXPECT_EQ(json[0]["tensor_parallel"].size(), profiles[0].tensor_parallel.size());
  EXPECT_EQ(profiles_table(profiles).rows.size(), profiles.size());
  EXPECT_NE(std::string(kShippedProfilesSource).find("MIT"), std::string::npos);
}

}  // namespace
}  // namespace gw
