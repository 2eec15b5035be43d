// Exact noise intervals (core/intervals.hpp): each half-width is the smallest
// that reaches the confidence, checked exactly against the law summed term by
// term; seeded releases fall inside at least as often as the confidence says
// (a one-sided binomial test, Boost.Math); forward and inverse agree.
#include <gtest/gtest.h>

#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <cstdint>

#include "core/intervals.hpp"
#include "core/rng.hpp"
#include "core/samplers.hpp"
#include "core/staircase.hpp"

using namespace optdp;

namespace {

// P(|N| <= h) summed term by term from the sampler's own pmf (long double).
long double mass_within(const IntegerStaircase& s, std::int64_t h) {
  long double p = s.pmf(0);
  for (std::int64_t m = 1; m <= h; ++m) p += 2.0L * s.pmf(m);
  return p;
}

// The p-value of seeing at most `inside` of n inside if the true coverage were
// exactly `confidence` (small: the coverage is below the confidence).
double coverage_p(std::int64_t inside, std::int64_t n, double confidence) {
  return boost::math::cdf(boost::math::binomial(static_cast<double>(n), confidence), static_cast<double>(inside));
}

}  // namespace

TEST(NoiseIntervals, GeometricIsTheSmallestThatReachesTheConfidence) {
  for (double alpha : {0.1, 0.5, 0.8, 0.95, 0.995}) {
    for (double c : {0.5, 0.9, 0.95, 0.99, 0.999}) {
      const std::int64_t h = geometric_half_width(alpha, c);
      long double p = (1 - alpha) / (1 + alpha), within = p;
      for (std::int64_t m = 1; m <= h; ++m) within += 2 * p * std::pow(static_cast<long double>(alpha), m);
      EXPECT_GE(within, c) << alpha << " " << c << " h=" << h;
      if (h > 0) {
        const long double less = within - 2 * p * std::pow(static_cast<long double>(alpha), h);
        EXPECT_LT(less, c) << alpha << " " << c << " h=" << h << ": one step less still reaches it";
      }
    }
  }
}

TEST(NoiseIntervals, StaircaseIsTheSmallestThatReachesTheConfidence) {
  for (auto [eps, D, r] : {std::tuple{1.0, std::int64_t{5}, std::int64_t{2}}, {0.5, 20, 7}, {2.0, 3, 3},
                           {0.1, 50, 1}, {1.0, 1, 1}}) {
    const IntegerStaircase s(eps, D, r);
    for (double c : {0.5, 0.9, 0.99}) {
      const std::int64_t h = staircase_half_width(s.b(), D, r, c);
      EXPECT_GE(mass_within(s, h), c) << eps << " " << D << " " << r << " c=" << c;
      if (h > 0) {
        EXPECT_LT(mass_within(s, h - 1), c) << eps << " " << D << " " << r << " c=" << c;
      }
    }
  }
}

TEST(NoiseIntervals, ReleasesFallInsideAtLeastAsOftenAsTheConfidence) {
  SeededRng rng(2211);
  const std::int64_t n = 20000;
  for (double alpha : {0.5, 0.9}) {
    const TwoSidedGeometric g(alpha);
    for (double c : {0.8, 0.95}) {
      const std::int64_t h = geometric_half_width(alpha, c);
      std::int64_t inside = 0;
      for (std::int64_t i = 0; i < n; ++i) inside += std::llabs(g(rng)) <= h;
      EXPECT_GT(coverage_p(inside, n, c), 1e-6) << "geometric " << alpha << " c=" << c << ": " << inside << "/" << n;
      // One step less is too small: at alpha 0.9, c = 0.8 (h = 15) its exact
      // coverage is 0.7835, and the test sees that it is below 0.8.
      std::int64_t inside_less = 0;
      SeededRng again(2212);
      for (std::int64_t i = 0; i < n; ++i) inside_less += std::llabs(g(again)) <= h - 1;
      if (c == 0.8 && alpha == 0.9) {
        EXPECT_EQ(h, 15);
        EXPECT_LT(coverage_p(inside_less, n, c), 1e-6) << inside_less << "/" << n;
      }
    }
  }
  for (auto [eps, D, r] : {std::tuple{1.0, std::int64_t{5}, std::int64_t{2}}, {0.5, 20, 7}}) {
    const IntegerStaircase s(eps, D, r);
    for (double c : {0.8, 0.95}) {
      const std::int64_t h = staircase_half_width(s.b(), D, r, c);
      std::int64_t inside = 0;
      for (std::int64_t i = 0; i < n; ++i) inside += std::llabs(s(rng)) <= h;
      EXPECT_GT(coverage_p(inside, n, c), 1e-6) << "staircase " << eps << " c=" << c << ": " << inside << "/" << n;
    }
  }
}

TEST(NoiseIntervals, InverseAndForwardAgree) {
  for (std::int64_t h : {0, 1, 4, 30, 1000}) {
    for (double c : {0.5, 0.95, 0.999}) {
      const double alpha = geometric_alpha_for(h, c);
      EXPECT_LE(geometric_half_width(alpha, c), h) << h << " " << c;
      // The largest such alpha: the next double up needs a wider interval.
      EXPECT_GT(geometric_half_width(std::nextafter(alpha, 1.0), c), h) << h << " " << c;
    }
  }
}

TEST(NoiseIntervals, BadConfidenceIsRefused) {
  for (double c : {0.0, 1.0, -0.5, 2.0, std::nan("")}) EXPECT_THROW(geometric_half_width(0.5, c), std::invalid_argument);
  EXPECT_THROW(geometric_half_width(1.0, 0.9), std::invalid_argument);
}

TEST(QuantileRankError, IsTheExponentialMechanismBound) {
  // (2 / eps) ln((M - 1) c / (1 - c)): at eps = 1, M = 7, c = 0.95: 2 ln(6 * 19).
  EXPECT_NEAR(quantile_rank_error(1.0, 7, 0.95), 2 * std::log(6 * 0.95 / 0.05), 1e-12);
  EXPECT_EQ(quantile_rank_error(1.0, 1, 0.95), 0);    // one candidate: no error
  EXPECT_EQ(quantile_rank_error(1.0, 2, 0.4), 0);     // (M - 1) c / (1 - c) < 1
  EXPECT_GT(quantile_rank_error(0.5, 100, 0.95), quantile_rank_error(1.0, 100, 0.95));
}
