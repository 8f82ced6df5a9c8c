// The flat index against std::map on many keys: every key found with its value after any
// number of growths, absent keys not found, and colliding hashes told apart by the key; the
// byte hash spreading similar ids.
#include "core/flat_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <set>
#include <vector>
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

TEST(FlatIndex, StringKeysEqualOnlyByteForByte) {
  // Same hash on purpose: only the bytes tell them apart, at every length around the 8-byte steps.
  FlatIndex<std::string, int> index;
  const std::string base = "0123456789abcdef0123456789abcdef";
  for (size_t length = 0; length <= base.size(); ++length) index.insert(base.substr(0, length), 7, static_cast<int>(length));
  for (size_t length = 0; length <= base.size(); ++length) {
    std::string probe = base.substr(0, length);
    ASSERT_NE(index.find(std::string_view(probe), 7), nullptr) << length;
    EXPECT_EQ(*index.find(std::string_view(probe), 7), static_cast<int>(length));
    if (length == 0) continue;
    for (size_t at : {size_t{0}, length / 2, length - 1}) {  // one byte off: in a word or in the tail
      std::string other = probe;
      other[at] = '#';
      EXPECT_EQ(index.find(std::string_view(other), 7), nullptr) << length << " at " << at;
    }
  }
  EXPECT_TRUE(same_bytes("", ""));
  EXPECT_FALSE(same_bytes("abcdefgh1", "abcdefgh"));
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// Ids that differ in one character, in their length or only past the first eight bytes spread
// over the low bits a table masks: 100,000 of them land in 2^17 slots about as a uniform hash
// would put them (no slot holds more than a handful), and none hash alike.
TEST(HashBytes, SpreadsSimilarIdsOverTheLowBits) {
  std::set<uint64_t> hashes;
  std::vector<int> slots(1 << 17, 0);
  int fullest = 0;
  for (int i = 0; i < 100000; ++i) {
    std::string id = fmt::format("{:032x}", static_cast<unsigned long long>(i));
    if (i % 3 == 1) id = "pod-" + std::to_string(i);
    if (i % 3 == 2) id = "GPU-00000000-0000-0000-0000-" + std::to_string(i);
    uint64_t h = hash_bytes(id);
    hashes.insert(h);
    fullest = std::max(fullest, ++slots[h & ((1 << 17) - 1)]);
  }
  EXPECT_EQ(hashes.size(), 100000u);
  EXPECT_LE(fullest, 9);  // a uniform hash: about 7 at most, for 100,000 keys in 131,072 slots
  EXPECT_NE(hash_bytes(""), hash_bytes(std::string_view("\0", 1)));
  EXPECT_NE(hash_bytes("abcdefgh"), hash_bytes(std::string_view("abcdefgh\0", 9)));
}

}  // namespace
}  // namespace gw
