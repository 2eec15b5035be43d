#include <gtest/gtest.h>

#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

extern "C" {
#include <quadmath.h>
}

#include "core/gaussian.hpp"
#include "core/samplers.hpp"
#include "stats.hpp"
#include "test_rng.hpp"

using namespace optdp;

namespace {

constexpr double kAlphas[] = {0.1, 0.5, 0.9, 0.99};

// Two-sided p-value of a binomial count by the normal approximation.
double binomial_p(std::int64_t successes, std::int64_t n, double p) {
  const double mean = static_cast<double>(n) * p;
  const double sd = std::sqrt(static_cast<double>(n) * p * (1 - p));
  if (sd == 0) return static_cast<double>(successes) == mean ? 1.0 : 0.0;
  const double z = std::abs(static_cast<double>(successes) - mean) / sd;
  return 2 * boost::math::cdf(boost::math::complement(boost::math::normal(), z));
}

double two_sided(double alpha, std::int64_t k) {
  return (1 - alpha) / (1 + alpha) * std::pow(alpha, static_cast<double>(std::llabs(k)));
}

}  // namespace

// --- Bernoulli: exactness by scripted bytes -------------------------------

TEST(Bernoulli, ComparesBytesWithTheBinaryExpansion) {
  // p = 0.5 = 0.1000...b: U < p iff U's first bit is 0.
  {
    test::ScriptedRng r({0x7f, 0xff});
    EXPECT_TRUE(bernoulli(r, 0.5));
  }
  {
    test::ScriptedRng r({0x80});  // then zeros: U = 0.5 exactly is not < 0.5
    EXPECT_FALSE(bernoulli(r, 0.5));
  }
  // p = 0.75 = 0.11b; bytes 0xBF.. < 0xC0.. -> true; 0xC0 then zeros -> false.
  {
    test::ScriptedRng r({0xbf});
    EXPECT_TRUE(bernoulli(r, 0.75));
  }
  {
    test::ScriptedRng r({0xc0});
    EXPECT_FALSE(bernoulli(r, 0.75));
  }
}

TEST(Bernoulli, LooksPastTheFirst64BitsWhenTheyTie) {
  // p = 2^-70: the first 64 bits of p are 0; with U's first 64 bits 0 the
  // comparison continues into the second chunk, where p has bit 70 set:
  // 0x02 = bit 7 of that chunk... bit 70 is bit 6 of the chunk, i.e. 0x04 in its first byte.
  const double p = std::ldexp(1.0, -70);
  {
    std::vector<unsigned char> b(8, 0);
    b.push_back(0x03);  // bits 65..72 = 00000011 < 00000100
    test::ScriptedRng r(b);
    EXPECT_TRUE(bernoulli(r, p));
  }
  {
    std::vector<unsigned char> b(8, 0);
    b.push_back(0x04);  // equal, and p has no more digits: U >= p
    test::ScriptedRng r(b);
    EXPECT_FALSE(bernoulli(r, p));
  }
  {
    test::ScriptedRng r({0x00, 0x01});  // U >= 2^-16 > p
    EXPECT_FALSE(bernoulli(r, p));
  }
}

TEST(Bernoulli, SubnormalProbabilityIsNotZero) {
  const double p = std::numeric_limits<double>::denorm_min();  // 2^-1074
  std::vector<unsigned char> all_zero(140, 0);                  // U < 2^-1074 only if its first 1074 bits are 0
  test::ScriptedRng r(all_zero);
  // ScriptedRng continues with zeros, so U's 1074 first bits are 0 and the last compared bit of p is 1.
  EXPECT_TRUE(bernoulli(r, p));
}

TEST(Bernoulli, EdgesAndErrors) {
  SeededRng r(1);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_FALSE(bernoulli(r, 0.0));
    ASSERT_TRUE(bernoulli(r, 1.0));
  }
  EXPECT_THROW(bernoulli(r, -0.1), std::invalid_argument);
  EXPECT_THROW(bernoulli(r, 1.5), std::invalid_argument);
  EXPECT_THROW(bernoulli(r, std::nan("")), std::invalid_argument);
}

TEST(Bernoulli, FrequenciesMatch) {
  SeededRng r(2024);
  const std::int64_t n = 400000;
  for (double p : {0.5, 0.3, 1.0 / 3, 1e-3, 0.999, 0.7310585786300049}) {
    std::int64_t s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += bernoulli(r, p);
    EXPECT_GT(binomial_p(s, n, p), 1e-4) << "p=" << p << " successes=" << s;
  }
}

TEST(Bernoulli128, ExactFraction) {
  Fraction128 f{0x8000000000000000ull, 0};  // exactly 1/2
  test::ScriptedRng lo({0x7f});
  EXPECT_TRUE(bernoulli(lo, f));
  test::ScriptedRng hi({0x80});
  EXPECT_FALSE(bernoulli(hi, f));
  Fraction128 tiny{0, 1};  // 2^-128
  std::vector<unsigned char> zeros(16, 0);
  test::ScriptedRng z(zeros);  // U's first 128 bits 0 -> U < 2^-128 only if ... they equal p's bits except the last
  EXPECT_TRUE(bernoulli(z, tiny));
}

// --- Geometric --------------------------------------------------------------

TEST(Geometric, RejectsBadAlpha) {
  for (double a : {0.0, 1.0, -0.5, 1.5, std::nan(""), double(INFINITY), -double(INFINITY)}) {
    EXPECT_THROW(Geometric{a}, std::invalid_argument) << a;
  }
  try {
    Geometric g(1.5);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "alpha must be in (0, 1), but is 1.5");
  }
}

TEST(Geometric, DigitProbabilitiesMatchRepeatedSquaring) {
  // Repeated squaring in binary128 is correctly rounded step by step; for
  // moderate alpha and few digits its error is far below 2^-100.
  for (double alpha : {0.1, 0.5, 0.9, 0.99}) {
    Geometric g(alpha);
    __float128 a = alpha;
    for (int j = 0; j < g.digits() && j < 12; ++j) {
      const __float128 p = a / (1 + a);
      const auto& f = g.digit_probability(j);
      const __float128 got = ldexpq(static_cast<__float128>(f.hi), -64) + ldexpq(static_cast<__float128>(f.lo), -128);
      EXPECT_LT(fabsq(got - p), ldexpq(1, -100)) << "alpha=" << alpha << " digit " << j;
      a = a * a;
    }
  }
}

TEST(Geometric, DigitCountsAsDocumented) {
  EXPECT_EQ(Geometric(0.5).digits(), 7);
  EXPECT_EQ(Geometric(1 - 1e-9).digits(), 37);
  EXPECT_LE(Geometric(std::nextafter(1.0, 0.0)).digits(), Geometric::kMaxDigits);
  EXPECT_EQ(Geometric(1e-300).digits(), 0);  // alpha/(1+alpha) < 2^-128: G = 0
}

TEST(Geometric, ChiSquareAgainstExactPmf) {
  SeededRng r(7);
  for (double alpha : kAlphas) {
    Geometric g(alpha);
    std::vector<std::int64_t> samples(200000);
    for (auto& s : samples) s = static_cast<std::int64_t>(g(r));
    auto pmf = [alpha](std::int64_t k) { return k < 0 ? 0.0 : (1 - alpha) * std::pow(alpha, static_cast<double>(k)); };
    auto chi = test::chi_square_samples(samples, pmf);
    EXPECT_GT(chi.p_value, 1e-4) << "alpha=" << alpha << " chi2=" << chi.statistic << " dof=" << chi.dof;
  }
}

TEST(Geometric, LargeAlphaFollowsTheCdf) {
  // alpha = 1 - 1e-9: mean 1e9. Bin by exact quantiles: P[G >= k] = alpha^k.
  const double alpha = 1 - 1e-9;
  Geometric g(alpha);
  SeededRng r(99);
  const int bins = 20, n = 40000;
  std::vector<double> edges;  // k_i with P[G < k_i] ~ i/bins
  for (int i = 1; i < bins; ++i) edges.push_back(std::ceil(std::log1p(-i / static_cast<double>(bins)) / std::log(alpha)));
  std::vector<std::int64_t> counts(bins, 0);
  for (int i = 0; i < n; ++i) {
    const double v = static_cast<double>(g(r));
    int b = 0;
    while (b < bins - 1 && v >= edges[b]) ++b;
    ++counts[b];
  }
  auto cdf = [&](double k) { return 1 - std::exp(k * std::log(alpha)); };  // P[G < k]
  auto pmf = [&](std::int64_t b) {
    const double lo = b == 0 ? 0 : cdf(edges[b - 1]);
    const double hi = b == bins - 1 ? 1 : cdf(edges[b]);
    return hi - lo;
  };
  auto chi = test::chi_square(counts, 0, pmf, 0, 0);
  EXPECT_GT(chi.p_value, 1e-4) << chi.statistic;
}

// --- Two-sided geometric -----------------------------------------------------

TEST(TwoSidedGeometric, ChiSquareAgainstExactPmf) {
  SeededRng r(8);
  for (double alpha : kAlphas) {
    TwoSidedGeometric z(alpha);
    std::vector<std::int64_t> samples(200000);
    for (auto& s : samples) s = z(r);
    auto pmf = [alpha](std::int64_t k) {
      return (1 - alpha) / (1 + alpha) * std::pow(alpha, static_cast<double>(std::llabs(k)));
    };
    auto chi = test::chi_square_samples(samples, pmf);
    EXPECT_GT(chi.p_value, 1e-4) << "alpha=" << alpha << " chi2=" << chi.statistic << " dof=" << chi.dof;
  }
}

TEST(TwoSidedGeometric, SymmetricAndVarianceMatches) {
  const double alpha = 0.9;
  TwoSidedGeometric z(alpha);
  SeededRng r(9);
  const int n = 200000;
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) {
    const double v = static_cast<double>(z(r));
    sum += v;
    sq += v * v;
  }
  const double var = 2 * alpha / ((1 - alpha) * (1 - alpha));  // 180
  EXPECT_LT(std::abs(sum / n), 5 * std::sqrt(var / n));
  // Var of the sample second moment: E[Z^4] - var^2; bound it generously at 10 var^2.
  EXPECT_LT(std::abs(sq / n - var), 5 * std::sqrt(10 * var * var / n));
}

TEST(TwoSidedGeometric, SeededIsReproducible) {
  TwoSidedGeometric z(0.5);
  SeededRng a(5), b(5);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(z(a), z(b));
}

// The goodness-of-fit tests above have power: the same sample size tells
// alpha = 0.5 from alpha = 0.52, and the exact law from one with P[0] doubled
// counted (the classic two-sided bug of not rejecting (-, 0)).
TEST(TwoSidedGeometric, ChiSquareHasPowerAgainstNearbyLaws) {
  SeededRng r(10);
  TwoSidedGeometric z(0.5);
  std::vector<std::int64_t> samples(200000);
  for (auto& s : samples) s = z(r);
  auto wrong_alpha = test::chi_square_samples(
      samples, [](std::int64_t k) { return (1 - 0.52) / (1 + 0.52) * std::pow(0.52, static_cast<double>(std::llabs(k))); });
  EXPECT_LT(wrong_alpha.p_value, 1e-6);
  // Without rejecting (-, 0): P[0] = (1 - a), P[+-k] = (1 - a) a^k / 2, renormalised.
  Geometric g(0.5);
  std::vector<std::int64_t> naive(200000);
  for (auto& s : naive) {
    const auto m = static_cast<std::int64_t>(g(r));
    s = r.coin() ? -m : m;
  }
  auto naive_fit = test::chi_square_samples(naive, [](std::int64_t k) { return two_sided(0.5, k); });
  EXPECT_LT(naive_fit.p_value, 1e-6);
}

// The digits kept for the last few parameters (kept_digits) are the ones a
// construction computes: alphas and discrete Gaussian scales built in one
// order, then again in others, more of them than are kept, each time have the
// digits computed here without the cache (repeated squaring for alpha, expq
// for the Gaussian's scale t).
TEST(KeptDigits, SameDigitsWhateverWasBuiltBefore) {
  std::vector<double> alphas, sigma2s;
  for (int i = 1; i <= 20; ++i) {
    alphas.push_back(1 - std::ldexp(0.75, -i));
    sigma2s.push_back(static_cast<double>(i * i * i) + 0.5);
  }
  auto frac = [](const Fraction128& f) {
    return ldexpq(static_cast<__float128>(f.hi), -64) + ldexpq(static_cast<__float128>(f.lo), -128);
  };
  auto check_geometric = [&](double alpha) {
    const Geometric g(alpha);
    __float128 a = alpha;
    int n = 0;
    for (int j = 0; j < Geometric::kMaxDigits && a / (1 + a) >= ldexpq(1, -128); ++j, a = a * a) {
      if (j < g.digits() && j < 12) {
        EXPECT_LT(fabsq(frac(g.digit_probability(j)) - a / (1 + a)), ldexpq(1, -100)) << alpha << " digit " << j;
      }
      ++n;
    }
    EXPECT_EQ(g.digits(), n) << alpha;
  };
  auto check_gaussian = [&](double sigma2) {
    const DiscreteGaussian d(sigma2);
    int n = 0;
    for (int j = 0; j < Geometric::kMaxDigits; ++j) {
      const __float128 a = expq(-ldexpq(1, j) / static_cast<__float128>(d.t()));
      if (to_fraction128(a / (1 + a)).is_zero()) break;
      ++n;
    }
    EXPECT_EQ(d.digits(), n) << sigma2;
  };
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < alphas.size(); ++i) {
      const std::size_t k = round == 1 ? alphas.size() - 1 - i : (i * 7) % alphas.size();
      check_geometric(alphas[k]);
      check_gaussian(sigma2s[k]);
    }
}
