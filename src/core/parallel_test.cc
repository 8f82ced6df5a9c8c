#include "core/parallel.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gw {
namespace {

TEST(Parallel, EveryPieceOnceInItsSlot) {
  std::vector<long long> out(1000, -1);
  parallel_for(out.size(), 4, [&](size_t i) { out[i] = static_cast<long long>(i * i); });
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], static_cast<long long>(i * i));
  EXPECT_EQ(worker_count(4, 2), 2);
  EXPECT_EQ(worker_count(1, 100), 1);
  EXPECT_GE(worker_count(0, 100), 1);
}

TEST(Parallel, AFailureIsRethrownAfterAllStop) {
  EXPECT_THROW(parallel_for(100, 2, [](size_t i) {
                 if (i == 37) throw std::runtime_error("piece 37");
               }),
               std::runtime_error);
}

TEST(Parallel, WorkersSeeTheCallersStopFlag) {
  std::atomic<bool> stop{true};
  CancelScope scope(stop);
  std::vector<int> seen(8, 0);
  parallel_for(seen.size(), 4, [&](size_t i) { seen[i] = cancel_requested() ? 1 : 0; });
  for (int s : seen) EXPECT_EQ(s, 1);
}

}  // namespace
}  // namespace gw
