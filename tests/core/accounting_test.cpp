// zCDP accounting: the conversion against an independent computation, the
// accountant against the exact privacy curve of the discrete Gaussian, the
// composition decision at its boundary, monotonicity, and the planning helpers
// against the forward functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "core/accounting.hpp"

using namespace optdp::zcdp;

namespace {

// delta(eps) of the discrete Gaussian N_Z(0, sigma^2) against N_Z(Delta, sigma^2),
// summed over its privacy loss distribution: sum_z max(0, P(z) - e^eps Q(z)).
// Both directions have the same curve (the pair is symmetric under z -> Delta - z).
long double exact_delta(double sigma2, std::int64_t shift, double eps) {
  const long double s2 = sigma2;
  const auto bound = static_cast<std::int64_t>(60 * std::sqrt(sigma2) + 10 + shift);
  long double norm = 0, d = 0;
  for (std::int64_t z = -bound; z <= bound; ++z) norm += std::exp(-(long double)z * z / (2 * s2));
  const long double ee = std::exp((long double)eps);
  for (std::int64_t z = -bound; z <= bound + shift; ++z) {
    const long double p = std::exp(-(long double)z * z / (2 * s2));
    const long double q = std::exp(-(long double)(z - shift) * (z - shift) / (2 * s2));
    if (p > ee * q) d += p - ee * q;
  }
  return d / norm;
}

// The smallest eps with exact_delta <= delta (bisection to 1e-9).
double exact_epsilon(double sigma2, std::int64_t shift, double delta) {
  double lo = 0, hi = 50;
  while (hi - lo > 1e-9) {
    const double mid = (lo + hi) / 2;
    (exact_delta(sigma2, shift, mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

// The conversion's bound minimised over a fine grid of alpha, in long double:
// an independent evaluation of CKS Corollary 13 (never below the true minimum).
long double grid_delta(double rho, double eps) {
  long double best = 1;
  for (long double la = -15; la <= 15; la += 1e-3L) {  // alpha - 1 = e^la
    const long double x = std::exp(la), a = 1 + x;
    const long double v = x * (a * rho - eps) + x * std::log(x) - a * std::log(a);
    best = std::min(best, std::exp(v));
  }
  return best;
}

}  // namespace

TEST(Zcdp, GaussianRhoAndItsInverse) {
  EXPECT_EQ(rho_of_gaussian(1, 40000), 1.25e-5);  // 1/80000 is not a double: rounded up
  EXPECT_GE(rho_of_gaussian(1, 40000), 1.0L / 80000);
  EXPECT_EQ(rho_of_gaussian(2, 2), 1.0);
  for (double rho : {1e-6, 0.01, 0.3, 2.0}) {
    const double s2 = sigma2_for_rho(rho, 3.0);
    EXPECT_LE(rho_of_gaussian(3.0, s2), rho);
    EXPECT_GT(rho_of_gaussian(3.0, std::nextafter(s2, 0.0)), rho) << rho;
  }
  EXPECT_EQ(rho_of_pure(1.0), 0.5);
  EXPECT_GE((long double)rho_of_pure(0.1), 0.1L * 0.1L / 2);
  EXPECT_THROW(rho_of_gaussian(0, 1), std::invalid_argument);
  EXPECT_THROW(rho_of_gaussian(1, -1), std::invalid_argument);
}

TEST(Zcdp, ConversionAgreesWithAnIndependentGridMinimum) {
  for (double rho : {1e-4, 0.01, 0.1, 0.5, 1.0, 5.0})
    for (double eps : {0.0, 0.1, 0.5, 1.0, 3.0, 10.0}) {
      const double d = delta_of_rho(rho, eps);
      const long double g = grid_delta(rho, eps);
      EXPECT_LE(d, g * (1 + 1e-3L) + 1e-300L) << rho << " " << eps;  // the search finds the minimum
      EXPECT_GE(d, g * (1 - 1e-3L)) << rho << " " << eps;            // no better than the true minimum
    }
  EXPECT_EQ(delta_of_rho(0, 1), 0.0);
  EXPECT_LE(delta_of_rho(100, 0), 1.0);
}

TEST(Zcdp, TightConversionIsBelowBunSteinkeAndInvertsDelta) {
  for (double rho : {1e-5, 1e-3, 0.1, 1.0})
    for (double delta : {1e-3, 1e-6, 1e-10}) {
      const double e = epsilon_of_rho(rho, delta);
      EXPECT_LE(e, epsilon_bun_steinke(rho, delta));
      EXPECT_LE(delta_of_rho(rho, e), delta);  // safe side
      EXPECT_GT(delta_of_rho(rho, e * (1 - 1e-8)), delta) << rho << " " << delta;  // and tight
    }
}

TEST(Zcdp, NeverBelowTheExactCurveOfTheDiscreteGaussianAndWithinMargin) {
  // The accountant's delta for a discrete Gaussian release is at least the
  // exact delta of its privacy loss distribution, and, where that delta is
  // at least 1e-15, at most 8x it (the conversion is tight for zCDP, not for
  // this mechanism); its eps at a given delta is at least the exact one and at
  // most 40% above (the largest ratios seen are printed).
  double max_delta_ratio = 0, max_eps_ratio = 0;
  for (double sigma : {1.0, 3.0, 10.0, 50.0})
    for (std::int64_t shift : {1, 2}) {
      const double s2 = sigma * sigma;
      const double rho = rho_of_gaussian(static_cast<double>(shift), s2);
      for (double eps : {0.05, 0.2, 0.5, 1.0, 2.0}) {
        const long double exact = exact_delta(s2, shift, eps);
        const double acc = delta_of_rho(rho, eps);
        EXPECT_GE(acc, exact) << sigma << " " << shift << " " << eps;
        if (exact >= 1e-15L) {
          EXPECT_LE(acc, 8 * exact) << sigma << " " << shift << " " << eps << " ratio " << acc / exact;
          max_delta_ratio = std::max(max_delta_ratio, static_cast<double>(acc / exact));
        }
      }
      for (double delta : {1e-3, 1e-6, 1e-9}) {
        const double exact = exact_epsilon(s2, shift, delta);
        const double acc = epsilon_of_rho(rho, delta);
        EXPECT_GE(acc, exact - 1e-9) << sigma << " " << shift << " " << delta;
        EXPECT_LE(acc, exact * 1.4) << sigma << " " << shift << " " << delta << " ratio " << acc / exact;
        max_eps_ratio = std::max(max_eps_ratio, acc / exact);
      }
    }
  std::printf("largest accountant/exact ratios: delta %.3f (exact delta >= 1e-15), eps %.3f\n", max_delta_ratio,
              max_eps_ratio);
}

TEST(Zcdp, Monotone) {
  double prev = 2;
  for (double eps = 0; eps <= 5; eps += 0.25) {
    const double d = delta_of_rho(0.2, eps);
    EXPECT_LE(d, prev);
    prev = d;
  }
  prev = 0;
  for (double rho = 0.01; rho <= 2; rho *= 1.5) {
    const double d = delta_of_rho(rho, 1.0);
    EXPECT_GE(d, prev);
    prev = d;
    const double e = epsilon_of_rho(rho, 1e-6);
    EXPECT_GE(e, epsilon_of_rho(rho / 1.5, 1e-6));
  }
  for (double delta = 1e-12; delta < 0.5; delta *= 10)
    EXPECT_GE(epsilon_of_rho(0.1, delta), epsilon_of_rho(0.1, delta * 10));
}

TEST(Composition, PureOnlyIsTodaysLedger) {
  const Budget b{1.0, 1e-6};
  std::vector<Entry> h(4, Entry::pure(0.25));
  EXPECT_TRUE(account(h, b).basic_fits);
  h.push_back(Entry::pure(0.25));
  EXPECT_FALSE(account(h, b).basic_fits);
}

TEST(Composition, ZcdpDecisionAtItsBoundary) {
  const double rho = rho_of_gaussian(1, 200.0 * 200.0);
  std::vector<Entry> h(500, Entry::gaussian(rho));
  h.push_back(Entry::approximate(0.1, 1e-8));
  h.push_back(Entry::pure(0.05));
  const Budget loose{1.0, 1e-3};
  const Accounting a = account(h, loose);
  ASSERT_TRUE(a.zcdp_fits);
  EXPECT_GE(a.rho_total, 500 * rho + 0.1 * 0.1 / 2 + 0.05 * 0.05 / 2);
  // A budget whose delta is exactly what the zCDP accounting needs fits; one ulp less does not.
  const Budget exact{1.0, a.zcdp_delta};
  EXPECT_TRUE(account(h, exact).zcdp_fits);
  EXPECT_FALSE(account(h, Budget{1.0, std::nextafter(a.zcdp_delta, 0.0)}).zcdp_fits);
  // The partition-selection delta is added to the conversion's.
  EXPECT_GE(a.zcdp_delta, 1e-8 + delta_of_rho(a.rho_total, 1.0) * (1 - 1e-12));
}

TEST(Composition, BasicDecisionAtItsBoundary) {
  // Two Gaussian entries, an approximate one: the Gaussians share what delta is left.
  const std::vector<Entry> h{Entry::gaussian(1e-4), Entry::gaussian(1e-4), Entry::approximate(0.2, 4e-7)};
  const Budget b{1.0, 1e-6};
  const Accounting a = account(h, b);
  const double share = 3e-7;
  EXPECT_NEAR(a.basic_eps, 0.2 + 2 * epsilon_of_rho(1e-4, share), 1e-9);
  EXPECT_TRUE(a.basic_fits);
  EXPECT_FALSE(account(h, Budget{std::nextafter(a.basic_eps, 0.0), 1e-6}).basic_fits);
  // No delta left for the Gaussians: basic composition cannot account for them.
  const Accounting none = account(h, Budget{1.0, 4e-7});
  EXPECT_FALSE(none.basic_fits);
  EXPECT_TRUE(std::isinf(none.basic_eps));
}

TEST(Composition, FitsWhenEitherAccountingFits) {
  // Many small Gaussians: zCDP fits where basic does not.
  const std::vector<Entry> many(1500, Entry::gaussian(rho_of_gaussian(1, 40000)));
  const Accounting a = account(many, Budget{1.0, 1e-6});
  EXPECT_FALSE(a.basic_fits);
  EXPECT_TRUE(a.zcdp_fits);
  EXPECT_TRUE(a.fits());
  // One large pure release: basic fits where zCDP (eps^2/2 converted) does not.
  const std::vector<Entry> one{Entry::pure(0.9)};
  const Accounting b = account(one, Budget{1.0, 1e-6});
  EXPECT_TRUE(b.basic_fits);
  EXPECT_FALSE(b.zcdp_fits);
  EXPECT_TRUE(b.fits());
}

TEST(Planning, FurtherReleasesAgreesWithTheForwardDecision) {
  const Budget b{1.0, 1e-6};
  const std::vector<Entry> h{Entry::pure(0.1), Entry::approximate(0.1, 1e-7)};
  for (const Entry& e : {Entry::pure(0.01), Entry::gaussian(1e-4), Entry::gaussian(rho_of_gaussian(1, 40000))}) {
    const std::uint64_t n = further_releases(h, e, b);
    ASSERT_GT(n, 0u);
    EXPECT_TRUE(account(h, e, n, b).fits());
    EXPECT_FALSE(account(h, e, n + 1, b).fits());
  }
  EXPECT_EQ(further_releases(std::vector<Entry>(11, Entry::pure(0.1)), Entry::pure(0.01), b), 0u);
  EXPECT_EQ(further_releases(optdp::zcdp::History{}, Entry::pure(0.01), b, 7), 7u);
}

TEST(Planning, SigmaForFurtherAgreesWithTheForwardDecision) {
  const Budget b{1.0, 1e-6};
  const std::vector<Entry> h{Entry::pure(0.2), Entry::gaussian(1e-3)};
  for (std::uint64_t k : {1ull, 10ull, 1000ull}) {
    const double s2 = sigma2_for_further(h, k, 1.0, b);
    ASSERT_TRUE(std::isfinite(s2));
    EXPECT_TRUE(account(h, Entry::gaussian(rho_of_gaussian(1, s2)), k, b).fits());
    EXPECT_FALSE(account(h, Entry::gaussian(rho_of_gaussian(1, s2 * (1 - 1e-6))), k, b).fits()) << k;
  }
  // A spent history: no sigma fits for a sensitivity that is not an integer
  // (no shift: no PLD, core/ledger_rule.hpp's planned_gaussian). With an
  // integer one the privacy curve can still take a very noisy release.
  EXPECT_TRUE(std::isinf(sigma2_for_further(std::vector<Entry>(10, Entry::pure(0.1)), 1, 1.5, b)));
}

TEST(Planning, CountsWithNoiseStandardDeviationAt200) {
  // The figures of docs/accounting.md's table (printed, checked only for order).
  const Budget b{1.0, 1e-6};
  // Two-sided geometric with sd 200: sqrt(2 alpha)/(1 - alpha) = 200.
  double lo = 0.9, hi = 1 - 1e-9;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::sqrt(2 * mid) / (1 - mid) > 200 ? hi : lo) = mid;
  }
  const double eps_geo = -std::log(hi);  // sd just below 200
  const std::uint64_t geo_basic = further_releases(optdp::zcdp::History{}, Entry::pure(eps_geo), Budget{1.0, 0.0});
  const std::uint64_t geo_any = further_releases(optdp::zcdp::History{}, Entry::pure(eps_geo), b);
  const double rho = rho_of_gaussian(1, 200.0 * 200.0);
  std::uint64_t bs = 0;
  while (epsilon_bun_steinke((bs + 1) * rho, 1e-6) <= 1.0) ++bs;
  const std::uint64_t tight = further_releases(optdp::zcdp::History{}, Entry::gaussian(rho), b);
  std::printf("eps per geometric count %.6g: basic %llu, best of basic/zCDP/PLD %llu\n", eps_geo,
              (unsigned long long)geo_basic, (unsigned long long)geo_any);
  std::printf("discrete Gaussian sigma 200: Bun-Steinke %llu, tight %llu\n", (unsigned long long)bs,
              (unsigned long long)tight);
  EXPECT_LT(geo_basic, bs);
  EXPECT_LT(bs, tight);
  // The geometric counts by their privacy curve (core/pld.hpp): the exact
  // figure, 1,123 (the binomial of randomized response), never above it.
  EXPECT_GE(geo_any, 1100u);
  EXPECT_LE(geo_any, 1123u);
}
