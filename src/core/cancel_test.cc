#include "core/cancel.h"

#include <gtest/gtest.h>

#include <thread>

namespace gw {
namespace {

TEST(Cancel, ScopesNestAndStayOnTheirThread) {
  EXPECT_FALSE(cancel_requested());
  std::atomic<bool> outer{false}, inner{true};
  {
    CancelScope a(outer);
    EXPECT_FALSE(cancel_requested());
    {
      CancelScope b(inner);
      EXPECT_TRUE(cancel_requested());
      bool other_thread = true;
      std::thread([&] { other_thread = cancel_requested(); }).join();
      EXPECT_FALSE(other_thread);
    }
    EXPECT_FALSE(cancel_requested());
    outer = true;
    EXPECT_TRUE(cancel_requested());
  }
  EXPECT_FALSE(cancel_requested());
}

}  // namespace
}  // namespace gw
