#include "plan/queueing.h"

#include <cmath>
#include <gtest/gtest.h>

namespace gw {
namespace {

// Erlang C against textbook values (Kleinrock, Queueing Systems vol. 1; also any Erlang C
// calculator): c = 2, a = 1 gives 1/3; c = 10, a = 8 gives 0.40918.
TEST(Queueing, ErlangCMatchesKnownValues) {
  EXPECT_NEAR(erlang_c(1, 0.5), 0.5, 1e-12);  // M/M/1: P(wait) = rho
  EXPECT_NEAR(erlang_c(2, 1.0), 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(erlang_c(10, 8.0), 0.40918, 1e-5);
  EXPECT_DOUBLE_EQ(erlang_c(3, 3.0), 1.0);
  EXPECT_LT(erlang_c(2000, 1500.0), 1e-10);  // large fleets: stable recursion, tiny waits
}

TEST(Queueing, MM1WaitingTimeQuantile) {
  // M/M/1 (cs2 = 1): P(W > t) = rho exp(-(mu - lambda) t), so the 0.99 quantile at rho = 0.8,
  // mu = 1 is ln(0.8 / 0.01) / 0.2.
  EXPECT_NEAR(mgc_wait_quantile(1, 0.8, 1.0, 1.0, 0.99), std::log(80.0) / 0.2, 1e-9);
  EXPECT_NEAR(mgc_mean_wait(1, 0.8, 1.0, 1.0), 4.0, 1e-9);  // rho / (mu - lambda)
  EXPECT_NEAR(mgc_mean_wait(1, 0.8, 1.0, 0.0), 2.0, 1e-9);  // M/D/1: half (Pollaczek-Khinchine)
  EXPECT_TRUE(std::isinf(mgc_wait_quantile(1, 1.0, 1.0, 1.0, 0.99)));
  EXPECT_EQ(mgc_wait_quantile(100, 10.0, 1.0, 1.0, 0.99), 0.0);  // lightly loaded: no wait
}

TEST(Queueing, PoissonQuantile) {
  EXPECT_EQ(poisson_quantile(0, 0.99), 0);
  EXPECT_GE(poisson_quantile(10, 0.99), 18);  // exact 0.99 quantile of Poisson(10) is 18
  EXPECT_LE(poisson_quantile(10, 0.99), 19);
}

TEST(Queueing, SmallPoissonQuantileIsSummedExactly) {
  EXPECT_EQ(small_poisson_quantile(0, 0.99), 0);
  // Mean 0.074: P(N = 0) = 0.929, P(N <= 1) = 0.9974: the 0.99 quantile is 1 (the normal
  // approximation gives 2).
  EXPECT_EQ(small_poisson_quantile(0.074, 0.99), 1);
  EXPECT_EQ(poisson_quantile(0.074, 0.99), 2);
  EXPECT_EQ(small_poisson_quantile(0.005, 0.99), 0);  // P(N = 0) = 0.995
  EXPECT_EQ(small_poisson_quantile(10, 0.99), 18);    // P(N <= 17) = 0.9857, P(N <= 18) = 0.9928
  EXPECT_EQ(small_poisson_quantile(400, 0.99), poisson_quantile(400, 0.99));  // past 50: the approximation
}

}  // namespace
}  // namespace gw
