// Private quantiles (core/quantile.hpp, docs/quantiles.md): the grid, the
// buckets and the exponents against brute force, the exact law, and the
// sampler against it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/quantile.hpp"
#include "core/rng.hpp"
#include "core/selection.hpp"
#include "stats.hpp"

using namespace optdp;

namespace {

// Every property the grid promises, for bounds [lo, hi].
void check_grid(double lo, double hi) {
  SCOPED_TRACE(testing::Message() << "[" << lo << ", " << hi << "]");
  const QuantileGrid g(lo, hi);
  int e;
  ASSERT_EQ(std::frexp(g.g(), &e), 0.5) << "g is a power of two";
  ASSERT_GE(g.candidates(), 1);
  ASSERT_LE(g.candidates(), QuantileGrid::kMaxCandidates);
  // Every candidate a multiple of g, inside the bounds, increasing by g, and
  // exactly (integer) * g with the integer below 2^53 (long double has 64
  // bits: the difference of neighbours is exact).
  for (std::int64_t j = 0; j < g.candidates(); ++j) {
    const double c = g.candidate(j);
    ASSERT_GE(c, lo);
    ASSERT_LE(c, hi);
    const double k = c / g.g();
    ASSERT_EQ(k, std::floor(k)) << c;
    ASSERT_LT(std::fabs(k), 0x1p53);
    if (j > 0) {
      ASSERT_EQ(static_cast<long double>(c) - g.candidate(j - 1), static_cast<long double>(g.g()));
    }
  }
  // No multiple of g is left out at either end.
  EXPECT_LT(static_cast<long double>(g.candidate(0)) - g.g(), static_cast<long double>(lo));
  EXPECT_GT(static_cast<long double>(g.candidate(g.candidates() - 1)) + g.g(), static_cast<long double>(hi));
  // g is the smallest power of two that fits, unless the other two rules
  // (the doubles' spacing at the larger bound, 2^-1022) force it.
  const double magnitude = std::fmax(std::fabs(lo), std::fabs(hi));
  const bool forced = g.g() == std::ldexp(1.0, std::ilogb(magnitude) - 52) || g.g() == 0x1p-1022;
  if (!forced) {
    const double half = g.g() / 2;
    const double count = std::floor(hi / half) - std::ceil(lo / half) + 1;
    EXPECT_GT(count, static_cast<double>(QuantileGrid::kMaxCandidates));
  }
}

// d_j = |S_j - q n| in long double (exact for these small counts and q = k/8
// or q with few bits).
std::vector<long double> rank_errors(const std::vector<std::int64_t>& b, double q) {
  long double n = 0;
  for (auto c : b) n += static_cast<long double>(c);
  std::vector<long double> d;
  long double s = 0;
  for (std::size_t j = 0; j + 1 < b.size(); ++j) {
    s += static_cast<long double>(b[j]);
    d.push_back(std::fabs(s - static_cast<long double>(q) * n));
  }
  return d;
}

}  // namespace

TEST(QuantileGrid, PowerOfTwoInsideTheBoundsAtMostTheCap) {
  const double cases[][2] = {{0, 1},          {0, 1000},       {-1e9, 1e9},        {1e-3, 2e-3},     {-5, -4},
                             {0, 4095},       {0, 4096},       {0.1, 0.3},         {-1e300, 1e300},  {1e18, 1e18 + 1e6},
                             {1e18, 1e18 + 2048}, {1, 1 + 0x1p-52}, {-1, -1 + 0x1p-53}, {0, 5e-324},  {-5e-324, 0},
                             {0x1p-1022, 0x1p-1021}, {-1e-300, 1e-300}, {3, 3 + 1e-12}, {-0x1p62, 0x1p62}};
  for (const auto& b : cases) check_grid(b[0], b[1]);
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-60, 60);
  for (int i = 0; i < 300; ++i) {
    double a = std::ldexp(mantissa(gen), exponent(gen)), b = std::ldexp(mantissa(gen), exponent(gen));
    if (i % 3 == 0) b = a + std::ldexp(std::fabs(mantissa(gen)), exponent(gen));  // narrow ones too
    if (a == b) continue;
    check_grid(std::fmin(a, b), std::fmax(a, b));
  }
  EXPECT_EQ(QuantileGrid(0, 4095).g(), 1.0);
  EXPECT_EQ(QuantileGrid(0, 4095).candidates(), 4096);
  EXPECT_EQ(QuantileGrid(0, 4096).g(), 2.0);
  EXPECT_EQ(QuantileGrid(1e18, 1e18 + 2048).g(), 128.0);  // the doubles' spacing there
  EXPECT_EQ(QuantileGrid(0, 5e-324).candidates(), 1);     // only 0
  EXPECT_EQ(QuantileGrid(0, 5e-324).candidate(0), 0.0);
  EXPECT_THROW(QuantileGrid(1, 1), std::invalid_argument);
  EXPECT_THROW(QuantileGrid(2, 1), std::invalid_argument);
  EXPECT_THROW(QuantileGrid(0, INFINITY), std::invalid_argument);
  EXPECT_THROW(QuantileGrid(NAN, 1), std::invalid_argument);
  EXPECT_THROW(QuantileGrid(-1e308, 1e308), std::invalid_argument);   // the width overflows
  EXPECT_THROW(QuantileGrid(5e-324, 1e-323), std::invalid_argument);  // no multiple of 2^-1022 between
}

TEST(QuantileGrid, BucketsGivePrefixCountsBelowEachCandidate) {
  std::mt19937_64 gen(5);
  const double bounds[][2] = {{0, 100}, {-3.5, 2.25}, {-1e-300, 1e-300}, {1e18, 1e18 + 1e6}, {0, 4095}, {-1e6, 1e6}};
  for (const auto& bd : bounds) {
    const QuantileGrid g(bd[0], bd[1]);
    const double w = bd[1] - bd[0];
    std::uniform_real_distribution<double> u(bd[0] - w / 5, bd[1] + w / 5);
    std::vector<double> xs(3000);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      xs[i] = u(gen);
      if (i % 3 == 0) xs[i] = g.candidate(static_cast<std::int64_t>(i) % g.candidates());  // grid hits
      if (i % 3 == 1) xs[i] = std::nextafter(g.candidate(static_cast<std::int64_t>(i) % g.candidates()), -INFINITY);
    }
    xs.insert(xs.end(), {-5e-324, 5e-324, -0.0, 0.0, -1e-310, bd[0], bd[1], 1e308, -1e308});
    std::vector<std::int64_t> buckets(static_cast<std::size_t>(g.candidates()) + 1, 0);
    for (double x : xs) ++buckets[static_cast<std::size_t>(g.bucket(x))];
    std::int64_t prefix = 0;
    for (std::int64_t j = 0; j < g.candidates(); ++j) {
      prefix += buckets[static_cast<std::size_t>(j)];
      std::int64_t brute = 0;
      for (double x : xs) brute += std::fmin(std::fmax(x, bd[0]), bd[1]) < g.candidate(j);
      ASSERT_EQ(prefix, brute) << "[" << bd[0] << ", " << bd[1] << "], candidate " << g.candidate(j);
    }
  }
}

TEST(QuantileExponents, ScoreIsRankErrorTimesHalfEps) {
  // Candidates c_0..c_3, buckets: 2 rows below c_0, 1 in [c_0, c_1), 3, 0, 4 above c_3; n = 10.
  const std::vector<std::int64_t> b = {2, 1, 3, 0, 4};
  const auto g = quantile_exponents(b, 0.5, 2.0);      // q n = 5; #{x < c_j} = 2, 3, 6, 6
  const double want[] = {3 - 1, 2 - 1, 1 - 1, 1 - 1};  // (|S - 5| - 1) * eps / 2
  ASSERT_EQ(g.size(), 4u);
  for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(static_cast<double>(g[j]), want[j]);
  const auto empty = quantile_exponents(std::vector<std::int64_t>{0, 0, 0}, 0.3, 1.0);
  for (auto x : empty) EXPECT_EQ(static_cast<double>(x), 0.0);
  // q n = 1.5 half-way between S = 1 and S = 2: both best, exactly 0.
  const auto tie = quantile_exponents(std::vector<std::int64_t>{1, 1, 1}, 0.5, 1.0);
  EXPECT_EQ(static_cast<double>(tie[0]), 0.0);
  EXPECT_EQ(static_cast<double>(tie[1]), 0.0);
  EXPECT_THROW(quantile_exponents(std::vector<std::int64_t>{1}, 0.5, 1.0), std::invalid_argument);
  EXPECT_THROW(quantile_exponents(b, 1.5, 1.0), std::invalid_argument);
  EXPECT_THROW(quantile_exponents(b, 0.5, 0.0), std::invalid_argument);
}

TEST(QuantileExponents, AgainstBruteForce) {
  std::mt19937_64 gen(9);
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t m = 1 + gen() % 40;
    std::vector<std::int64_t> b(m + 1);
    const int sparse = static_cast<int>(gen() % 3);  // many empty buckets, or none
    for (auto& c : b) c = (sparse && gen() % 4) ? 0 : static_cast<std::int64_t>(gen() % 7);
    const double qs[] = {0, 1, 0.5, 0.25, 0.1, 0.9, 1.0 / 3, static_cast<double>(gen() % 1000) / 1000};
    const double q = qs[trial % 8];
    const double eps = trial % 2 ? 1.0 : 0.37;
    const auto gamma = quantile_exponents(b, q, eps);
    const auto d = rank_errors(b, q);
    ASSERT_EQ(gamma.size(), m);
    long double best = d[0];
    for (auto x : d) best = std::fmin(best, x);
    for (std::size_t j = 0; j < m; ++j) {
      const long double want = static_cast<long double>(eps) / 2 * (d[j] - best);
      const long double got = static_cast<long double>(gamma[j]);
      ASSERT_GE(got, 0.0L);
      // Long double rank errors are exact to 64 bits; binary128 to 112.
      ASSERT_NEAR(static_cast<double>(got), static_cast<double>(want), 1e-15 * (1 + static_cast<double>(want)))
          << "trial " << trial << " j " << j << " q " << q;
      if (d[j] == best) {
        ASSERT_EQ(got, 0.0L) << "a best candidate's exponent is exactly 0";
      }
    }
  }
}

TEST(QuantileProbabilities, TheExponentialMechanismsLaw) {
  const std::vector<std::int64_t> b = {5, 2, 8, 1, 0, 3, 6, 2, 4};
  for (double q : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    const auto law = quantile_probabilities(b, q, 1.5);
    const auto d = rank_errors(b, q);
    long double total = 0;
    for (auto x : d) total += std::exp(-0.75L * x);
    double sum = 0;
    for (std::size_t j = 0; j < law.size(); ++j) {
      EXPECT_NEAR(law[j], static_cast<double>(std::exp(-0.75L * d[j]) / total), 1e-15) << q << " " << j;
      sum += law[j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-14);
  }
  // No rows: uniform.
  for (double p : quantile_probabilities(std::vector<std::int64_t>(101, 0), 0.5, 1.0)) EXPECT_DOUBLE_EQ(p, 0.01);
}

TEST(QuantileSampler, ChiSquareAgainstTheLaw) {
  const std::vector<std::int64_t> b = {5, 2, 8, 1, 0, 3, 6, 2, 4};
  for (double q : {0.1, 0.5, 0.9}) {
    const auto law = quantile_probabilities(b, q, 1.5);
    SeededRng rng(static_cast<std::uint64_t>(q * 100));
    std::vector<std::int64_t> counts(law.size(), 0);
    for (int i = 0; i < 30000; ++i) ++counts[static_cast<std::size_t>(sample_quantile(rng, b, q, 1.5))];
    const auto r = test::chi_square(counts, 0, [&](std::int64_t v) { return law[static_cast<std::size_t>(v)]; }, 0, 0);
    EXPECT_GT(r.p_value, 1e-4) << "q " << q << " chi2 " << r.statistic;
  }
  // A full grid's worth of candidates (4096), rows spread over it.
  const QuantileGrid grid(0, 4095);
  std::vector<std::int64_t> wide(static_cast<std::size_t>(grid.candidates()) + 1, 0);
  for (int i = 0; i < 400; ++i) ++wide[static_cast<std::size_t>(grid.bucket((i * 7919) % 4096))];
  const auto law = quantile_probabilities(wide, 0.3, 0.2);
  SeededRng rng(77);
  // Pooled into 16 bins of 256 candidates.
  std::vector<std::int64_t> counts(16, 0);
  std::vector<double> p(16, 0.0);
  for (std::size_t j = 0; j < law.size(); ++j) p[j / 256] += law[j];
  for (int i = 0; i < 3000; ++i) ++counts[static_cast<std::size_t>(sample_quantile(rng, wide, 0.3, 0.2)) / 256];
  const auto r = test::chi_square(counts, 0, [&](std::int64_t v) { return p[static_cast<std::size_t>(v)]; }, 0, 0);
  EXPECT_GT(r.p_value, 1e-4) << "chi2 " << r.statistic << " dof " << r.dof;
}
