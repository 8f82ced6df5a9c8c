#include "plan/queueing.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <vector>

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

// A request's TPOT averages its output - 1 steps: one length shrinks a step's excess by
// sqrt(output - 1); half one-gap answers and half 100-gap ones put the p99 at the short half's
// p98 (the long half's average is never that far out); answers of one token have no TPOT.
TEST(Queueing, MeanGapExcessShareWeighsShortAnswers) {
  EXPECT_NEAR(mean_gap_excess_share({101}, 0.99), 0.1, 1e-9);
  EXPECT_NEAR(mean_gap_excess_share({101, 101, 1}, 0.99), 0.1, 1e-9);
  EXPECT_EQ(mean_gap_excess_share({1, 1}, 0.99), 1.0);
  EXPECT_EQ(mean_gap_excess_share({}, 0.99), 1.0);
  std::vector<double> mixed;
  for (int i = 0; i < 500; ++i) mixed.insert(mixed.end(), {2, 101});
  // Phi^-1(0.98) / Phi^-1(0.99) = 2.053749 / 2.326348.
  EXPECT_NEAR(mean_gap_excess_share(mixed, 0.99), 2.053749 / 2.326348, 1e-4);
}

// Against sampling: lognormal answers (median 13 tokens, as a code-completion trace's), each
// step's excess over the mean standard normal; the p99 of the requests' mean excess over
// their gaps, in units of one step's p99 (2.326), is the share within sampling error.
TEST(Queueing, MeanGapExcessShareMatchesSampledRequests) {
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> answer(std::log(13.0), 1.0);
  std::normal_distribution<double> excess(0, 1);
  std::vector<double> outputs, means;
  for (int i = 0; i < 40000; ++i) {
    const double o = std::floor(answer(random));
    outputs.push_back(o);
    if (o < 2) continue;
    double sum = 0;
    for (int k = 0; k < o - 1; ++k) sum += excess(random);
    means.push_back(sum / (o - 1));
  }
  std::sort(means.begin(), means.end());
  const double sampled = means[static_cast<size_t>(0.99 * static_cast<double>(means.size()))] / 2.326348;
  const double share = mean_gap_excess_share(outputs, 0.99);
  EXPECT_NEAR(share, sampled, 0.03 * sampled) << share << " against " << sampled;
  // One mean-length answer's share is far below: the mix's short answers dominate the p99.
  double mean = 0;
  for (double o : outputs) mean += o / static_cast<double>(outputs.size());
  EXPECT_GT(share, 1.3 / std::sqrt(mean - 1));
}

// Thinned answers keep their spread: evenly spaced order statistics of output - 1.
TEST(Queueing, AnswerGapSampleThinsToOrderStatistics) {
  std::vector<double> outputs;
  for (int i = 1; i <= 1000; ++i) outputs.push_back(i);
  const std::vector<double> gaps = answer_gap_sample(outputs, 10);
  ASSERT_EQ(gaps.size(), 10u);
  EXPECT_EQ(gaps.front(), 50);  // the 50th of 999 gaps (1..999), the first bin's middle
  EXPECT_EQ(gaps.back(), 950);  // the last bin's
  EXPECT_TRUE(std::is_sorted(gaps.begin(), gaps.end()));
  EXPECT_EQ(answer_gap_sample({1, 1, 3}, 10), std::vector<double>{2});
}

// One gap count: the gamma's own quantile. Shape 25 (mean 1, variance 1/25): 2 x 25 x X is
// chi-square with 50 degrees of freedom, whose 0.99 quantile is 76.154 (any chi-square table).
// A mix with one-gap requests weighs their wider spread.
TEST(Queueing, GammaMixtureQuantileMatchesChiSquare) {
  EXPECT_NEAR(gamma_mixture_quantile({1}, 1.0, 0.04, 0.99), 76.154 / 50, 0.002);
  EXPECT_NEAR(gamma_mixture_quantile({4}, 1.0, 0.16, 0.99), 76.154 / 50, 0.002);  // variance 0.16 / 4
  EXPECT_GT(gamma_mixture_quantile({1, 100}, 1.0, 0.04, 0.99), gamma_mixture_quantile({100}, 1.0, 0.04, 0.99));
  EXPECT_EQ(gamma_mixture_quantile({}, 0.5, 0.04, 0.99), 0.5);
  EXPECT_EQ(gamma_mixture_quantile({3}, 0.5, 0, 0.99), 0.5);
}

}  // namespace
}  // namespace gw
