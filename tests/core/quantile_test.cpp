// Private quantiles (core/quantile.hpp, docs/quantiles.md): the grid, the
// buckets against brute force, the exponents, and the sampler's law.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/quantile.hpp"
#include "core/rng.hpp"
#include "core/selection.hpp"
#include "stats.hpp"

using namespace optdp;

TEST(QuantileGrid, PowerOfTwoInsideTheBoundsAtMostTheCap) {
  struct B {
    double lo, hi;
  } cases[] = {{0, 1}, {0, 1000}, {-1e9, 1e9}, {1e-3, 2e-3}, {-5, -4}, {1e18, 1e18 + 1e6}, {0, 4095}, {0, 4096},
               {0.1, 0.3}, {-1e300, 1e300}};
  for (const auto& b : cases) {
    const QuantileGrid g(b.lo, b.hi);
    int e;
    EXPECT_EQ(std::frexp(g.g(), &e), 0.5) << "g is a power of two";
    EXPECT_GE(g.candidates(), 1);
    EXPECT_LE(g.candidates(), QuantileGrid::kMaxCandidates);
    EXPECT_GE(g.candidate(0), b.lo);
    EXPECT_LE(g.candidate(g.candidates() - 1), b.hi);
    // In long double, exact at these magnitudes (1e18 needs 60 bits).
    const long double step = g.g();
    EXPECT_LT(static_cast<long double>(g.candidate(0)) - step, static_cast<long double>(b.lo))
        << "the first grid point inside";
    EXPECT_GT(static_cast<long double>(g.candidate(g.candidates() - 1)) + step, static_cast<long double>(b.hi))
        << "the last grid point inside";
    // g is the smallest power of two that fits (unless the magnitude forces it).
    if (std::fmax(std::fabs(b.lo), std::fabs(b.hi)) / g.g() < 1e15) {
      const double half = g.g() / 2;
      const double count = std::floor(b.hi / half) - std::ceil(b.lo / half) + 1;
      EXPECT_GT(count, static_cast<double>(QuantileGrid::kMaxCandidates)) << b.lo << " " << b.hi;
    }
  }
  EXPECT_EQ(QuantileGrid(0, 4095).g(), 1.0);
  EXPECT_EQ(QuantileGrid(0, 4095).candidates(), 4096);
  EXPECT_THROW(QuantileGrid(1, 1), std::invalid_argument);
  EXPECT_THROW(QuantileGrid(2, 1), std::invalid_argument);
  EXPECT_THROW(QuantileGrid(0, INFINITY), std::invalid_argument);
  EXPECT_THROW(QuantileGrid(-1e308, 1e308), std::invalid_argument);  // width overflows
}

TEST(QuantileGrid, BucketsGivePrefixCountsBelowEachCandidate) {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(-20, 120);
  const QuantileGrid g(0, 100);
  std::vector<double> xs(3000);
  for (double& x : xs) x = std::round(u(gen) * 4) / 4;  // many ties and grid hits
  std::vector<std::int64_t> buckets(static_cast<std::size_t>(g.candidates()) + 1, 0);
  for (double x : xs) ++buckets[static_cast<std::size_t>(g.bucket(x))];
  std::int64_t prefix = 0;
  for (std::int64_t j = 0; j < g.candidates(); ++j) {
    prefix += buckets[static_cast<std::size_t>(j)];
    std::int64_t brute = 0;
    for (double x : xs) brute += std::fmin(std::fmax(x, 0.0), 100.0) < g.candidate(j);
    ASSERT_EQ(prefix, brute) << "candidate " << g.candidate(j);
  }
}

TEST(QuantileExponents, ScoreIsRankErrorTimesHalfEps) {
  // Candidates c_0..c_3, buckets: 2 rows below c_0, 1 in [c_0, c_1), 3, 0, 4 above c_3; n = 10.
  const std::vector<std::int64_t> b = {2, 1, 3, 0, 4};
  const auto g = quantile_exponents(b, 0.5, 2.0);  // q n = 5; #{x < c_j} = 2, 3, 6, 6
  const double want[] = {3 - 1, 2 - 1, 1 - 1, 1 - 1};  // (|S - 5| - 1) * eps / 2
  ASSERT_EQ(g.size(), 4u);
  for (std::size_t j = 0; j < 4; ++j) EXPECT_DOUBLE_EQ(static_cast<double>(g[j]), want[j]);
  const auto empty = quantile_exponents(std::vector<std::int64_t>{0, 0, 0}, 0.3, 1.0);
  for (auto x : empty) EXPECT_EQ(static_cast<double>(x), 0.0);
}

TEST(QuantileSampler, ChiSquareAgainstTheLaw) {
  const std::vector<std::int64_t> b = {5, 2, 8, 1, 0, 3, 6, 2, 4};
  for (double q : {0.1, 0.5, 0.9}) {
    const auto gamma = quantile_exponents(b, q, 1.5);
    const auto law = selection_probabilities(gamma, SelectionMethod::Exponential);
    SeededRng rng(static_cast<std::uint64_t>(q * 100));
    std::vector<std::int64_t> counts(law.size(), 0);
    for (int i = 0; i < 30000; ++i) ++counts[static_cast<std::size_t>(sample_quantile(rng, b, q, 1.5))];
    const auto r = test::chi_square(counts, 0, [&](std::int64_t v) { return law[static_cast<std::size_t>(v)]; }, 0, 0);
    EXPECT_GT(r.p_value, 1e-4) << "q " << q << " chi2 " << r.statistic;
  }
}
