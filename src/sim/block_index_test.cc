#include "sim/block_index.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace gw::sim_detail {
namespace {

// Random inserts and erases (small consecutive ids, as traces give, and random 64-bit ones)
// agree with std::unordered_map after every operation, through growth and wrapped runs.
TEST(BlockIndex, AgreesWithAHashMap) {
  for (int seed = 0; seed < 20; ++seed) {
    std::mt19937_64 random(static_cast<unsigned long long>(seed));
    BlockIndex index;
    std::unordered_map<unsigned long long, int> truth;
    const bool small = seed % 2 == 0;
    for (int op = 0; op < 20000; ++op) {
      const unsigned long long id = small ? random() % 3000 : random();
      if (random() % 3 != 0) {
        if (!truth.count(id)) {
          truth[id] = op;
          index.insert(id, op);
        }
      } else {
        const unsigned long long victim = truth.empty() || random() % 4 == 0 ? id : truth.begin()->first;
        truth.erase(victim);
        index.erase(victim);
      }
      ASSERT_EQ(index.size(), truth.size());
      if (op % 97 == 0) {
        for (const auto& [key, slot] : truth) ASSERT_EQ(index.find(key), slot) << "seed " << seed << " op " << op;
      }
      ASSERT_EQ(index.find(id), truth.count(id) ? truth[id] : -1);
    }
    size_t seen = 0;
    index.for_each([&](unsigned long long key, int slot) {
      ++seen;
      EXPECT_EQ(truth.at(key), slot);
    });
    EXPECT_EQ(seen, truth.size());
  }
}

}  // namespace
}  // namespace gw::sim_detail
