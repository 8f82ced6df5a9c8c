// The flat index against std::map on many keys: every key found with its value after any
// number of growths, absent keys not found, and colliding hashes told apart by the key.
#include "core/flat_index.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace gw {
namespace {

TEST(FlatIndex, FindsEveryKeyAcrossGrowthAndNothingElse) {
  FlatIndex<std::string, int> index;
  std::map<std::string, int> truth;
  auto hash = [](std::string_view key) { return std::hash<std::string_view>{}(key); };
  for (int i = 0; i < 5000; ++i) {
    std::string key = "GPU-" + std::to_string(i * 7919);
    ASSERT_EQ(index.find(key, hash(key)), nullptr);
    index.insert(key, hash(key), i);
    truth[key] = i;
  }
  EXPECT_EQ(index.size(), truth.size());
  for (const auto& [key, value] : truth) {
    int* found = index.find(key, hash(key));
    ASSERT_NE(found, nullptr) << key;
    EXPECT_EQ(*found, value);
  }
  EXPECT_EQ(index.find(std::string("GPU-1"), hash("GPU-1")), nullptr);
}

TEST(FlatIndex, EqualHashesAreToldApartByTheKey) {
  FlatIndex<const void*, int> index;
  int a = 0, b = 0, c = 0;
  index.insert(&a, 42, 1);
  index.insert(&b, 42, 2);
  EXPECT_EQ(*index.find(static_cast<const void*>(&a), 42), 1);
  EXPECT_EQ(*index.find(static_cast<const void*>(&b), 42), 2);
  EXPECT_EQ(index.find(static_cast<const void*>(&c), 42), nullptr);
  EXPECT_NE(mix_hash(0x1000), mix_hash(0x2000));
  EXPECT_NE(mix_hash(0x1000) & 63, mix_hash(0x1040) & 63);  // aligned addresses spread over the low bits
}

}  // namespace
}  // namespace gw
