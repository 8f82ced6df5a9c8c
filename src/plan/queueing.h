// Queueing formulas the planner screens candidates with: Erlang C for M/M/c, the Allen-Cunneen
// correction for general service times, and the exponential tail of the waiting time.
#pragma once

#include <cstddef>
#include <vector>

namespace gw {

// Probability that an arrival waits in M/M/c with offered load a = lambda/mu (a < c).
double erlang_c(int servers, double offered_load);

// The q-quantile of the waiting time in M/G/c: P(W > t) ~ C * exp(-2 (c mu - lambda) t / (1 + cs2)),
// with service-time squared coefficient of variation cs2 (0 deterministic, 1 exponential).
// Returns +infinity when lambda >= c mu.
double mgc_wait_quantile(int servers, double arrival_rate, double mean_service_s, double cs2, double q);

// Mean waiting time in M/G/c (Allen-Cunneen): Wq(M/M/c) x (1 + cs2) / 2.
double mgc_mean_wait(int servers, double arrival_rate, double mean_service_s, double cs2);

// The q-quantile of a Poisson count with mean m (normal approximation with continuity; exact
// enough for the step-level bursts the planner needs).
double poisson_quantile(double mean, double q);

// The q-quantile of a Poisson count with a small mean (at most 50), summed exactly: the smallest k
// with P(N <= k) >= q. Where the mean is well under one the normal approximation above rounds a
// rare event up to one or two (0.07 gives 2 there, 1 here); larger means take the approximation.
double small_poisson_quantile(double mean, double q);

// A request's time per output token is the mean of its output - 1 gaps (one step each; a
// request of one token has none). Where each step exceeds the mean step by a normal excess, the
// q-quantile over requests of that mean's excess, as a share of one step's q-quantile excess:
// u / z_q where u solves mean_i P(Z > u sqrt(m_i)) = 1 - q over the requests' gaps m_i. One
// length m gives 1 / sqrt(m); a mix gives more, its short answers averaging over few steps.
// outputs: output token counts (any order); 1 where no request has two tokens or more.
double mean_gap_excess_share(const std::vector<double>& outputs, double q);

// The gap counts (output - 1) of the answers of two tokens or more, sorted, thinned to at most
// `most` evenly spaced order statistics (a trace's 20,000 answers need not each be summed).
std::vector<double> answer_gap_sample(const std::vector<double>& outputs, std::size_t most);

// The q-quantile over requests of a time per token whose mean is `mean` and whose variance is
// unit_variance / m for a request of m gaps (`gaps`: one per request, equally likely), each
// gamma distributed (Wilson-Hilferty's cube-root normal): the skew a busy period's length has.
double gamma_mixture_quantile(const std::vector<double>& gaps, double mean, double unit_variance, double q);

}  // namespace gw
