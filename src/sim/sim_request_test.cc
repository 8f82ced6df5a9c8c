#include "sim/sim_request.h"

#include <gtest/gtest.h>

namespace gw::sim_detail {
namespace {

// Slots are reused after release, and a slot's version only grows: an entry a heap kept for the
// earlier occupant (its id and version) never matches the next one.
TEST(RequestPool, ReusesSlotsAndNeverRepeatsAVersion) {
  RequestPool pool;
  Request r;
  r.input = 100;
  int a = pool.add(r), b = pool.add(r);
  EXPECT_NE(a, b);
  EXPECT_TRUE(pool[a].live);
  const unsigned first = pool[a].version;
  pool[a].version++;  // a preemption
  pool.release(a);
  EXPECT_FALSE(pool[a].live);
  r.input = 7;
  int c = pool.add(r);
  EXPECT_EQ(c, a);  // the freed slot
  EXPECT_TRUE(pool[c].live);
  EXPECT_EQ(pool[c].input, 7);
  EXPECT_GT(pool[c].version, first + 1);
  EXPECT_EQ(pool.size(), 2u);
}

}  // namespace
}  // namespace gw::sim_detail
