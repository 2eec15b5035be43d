// Tests of core/pld.hpp: each mechanism's PLD against its pmf, composition
// against closed forms (randomized response's binomial [KOV15], the mu-GDP
// curve), pessimism (never below the exact curve), and the counts the issue's
// table claims. Every comparison is also run on a deliberately wrong input,
// to show that it can fail.
#include <cstdlib>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

#include "core/pld.hpp"
#include "core/staircase.hpp"

using optdp::pld::Pld;

namespace {

// A pmf on [lo, lo + p.size()), evaluated independently of core/pld.cpp in long double.
struct Pmf {
  long lo = 0;
  std::vector<long double> p;
  long double at(long z) const { return z < lo || z >= lo + static_cast<long>(p.size()) ? 0 : p[z - lo]; }
};

Pmf geometric_pmf(long double alpha, long half) {
  Pmf f{-half, {}};
  for (long z = -half; z <= half; ++z) f.p.push_back((1 - alpha) / (1 + alpha) * std::pow(alpha, std::fabs(static_cast<long double>(z))));
  return f;
}
Pmf gaussian_pmf(long double sigma2, long half) {
  Pmf f{-half, {}};
  long double s = 0;
  for (long z = -half; z <= half; ++z) s += std::exp(-static_cast<long double>(z) * z / (2 * sigma2));
  for (long z = -half; z <= half; ++z) f.p.push_back(std::exp(-static_cast<long double>(z) * z / (2 * sigma2)) / s);
  return f;
}
Pmf staircase_pmf(long double b, long D, long r, long half) {
  Pmf f{-half, {}};
  const long double a = (1 - b) / (2 * r + 2 * b * (D - r) - (1 - b));
  for (long z = -half; z <= half; ++z) {
    const long m = std::labs(z), k = m / D, u = m % D;
    f.p.push_back(a * std::pow(b, static_cast<long double>(k + (u < r ? 0 : 1))));
  }
  return f;
}

// The exact hockey-stick divergence of P against P shifted by s:
// sum_z max(0, P(z) - e^eps P(z - s)).
long double exact_delta(const Pmf& f, long s, long double eps) {
  long double d = 0;
  for (long z = f.lo; z < f.lo + static_cast<long>(f.p.size()) + std::labs(s); ++z) {
    const long double v = f.at(z) - std::exp(eps) * f.at(z - s);
    if (v > 0) d += v;
  }
  return d;
}

// The bound check every comparison uses: bound >= exact and bound <= exact
// (1 + rel) + abs. Each test asserts it on the right input and asserts that
// it FAILS on a wrong one.
bool upper_and_close(long double bound, long double exact, long double rel, long double abs = 0) {
  return bound >= exact && bound <= exact * (1 + rel) + abs;
}

// A grid PLD whose losses were each rounded up by less than `shift` in all:
// its curve is never below the exact one, and shifted right by `shift` it is
// at most the exact one (up to the mass moved to +inf, <= abs).
bool sandwiched(const Pld& grid, double shift, double E, long double exact, double abs = 1e-14) {
  return grid.delta(E) >= exact && grid.delta(E + shift) <= exact + abs;
}

// The geometric's alpha at noise standard deviation 200: sqrt(2 alpha) / (1 - alpha) = 200,
// i.e. 40000 y^2 + 2 y - 2 = 0 with y = 1 - alpha.
double alpha_at_sd200() {
  const double y = (-2 + std::sqrt(4.0 + 320000.0)) / 80000.0;
  return 1 - y;
}

}  // namespace

TEST(Pld, IdentityAndArguments) {
  const Pld id;
  EXPECT_EQ(id.delta(0), 0);
  EXPECT_EQ(id.inf_mass(), 0);
  EXPECT_THROW(Pld::pure(-1), std::invalid_argument);
  EXPECT_THROW(Pld::geometric(1), std::invalid_argument);
  EXPECT_THROW(Pld::staircase(0.5, 3, 4), std::invalid_argument);
  EXPECT_THROW(Pld::discrete_gaussian(0, 1), std::invalid_argument);
  EXPECT_THROW(Pld(0.5), std::invalid_argument);
  EXPECT_THROW(Pld::pure(1, 100).compose(Pld::pure(1, 1000)), std::invalid_argument);
  EXPECT_EQ(Pld::approximate(1, 1).delta(5), 1);
}

// The geometric count's PLD, for the shift +1 and -1 (adding or removing a
// row; replacing one shifts a count by 0), read from the pmf: exactly two
// losses, +-eps, with masses 1/(1 + alpha) and alpha/(1 + alpha):
// randomized response's.
TEST(Pld, GeometricCountIsRandomizedResponse) {
  for (double alpha : {0.3, 0.9, 0.993}) {
    const long double a = alpha, eps = -std::log(a);
    const Pmf f = geometric_pmf(a, 20000);
    for (long s : {1L, -1L}) {
      std::map<long, long double> by_loss;  // loss in units of eps
      for (long z = f.lo + 1; z < f.lo + static_cast<long>(f.p.size()) - 1; ++z) {
        if (f.at(z) < 1e-4000L || f.at(z - s) < 1e-4000L) continue;  // underflowed: nothing to read
        const long double l = std::log(f.at(z) / f.at(z - s)) / eps;
        by_loss[std::lround(l)] += f.at(z);
        EXPECT_NEAR(static_cast<double>(l), std::lround(l), 1e-9);
      }
      ASSERT_EQ(by_loss.size(), 2u);
      EXPECT_NEAR(static_cast<double>(by_loss[1]), static_cast<double>(1 / (1 + a)), 1e-12);
      EXPECT_NEAR(static_cast<double>(by_loss[-1]), static_cast<double>(a / (1 + a)), 1e-12);
    }
    const Pld p = Pld::geometric(alpha, 1e6);
    // Two masses, at ceil(eps N) and ceil(-eps N), rounded down by at most 2^-90 relative.
    double m_plus = 0, m_minus = 0;
    for (std::size_t i = 0; i < p.masses().size(); ++i) {
      const long idx = p.lowest_index() + static_cast<long>(i);
      if (idx == static_cast<long>(std::ceil(eps * 1e6))) m_plus = p.masses()[i];
      else if (idx == static_cast<long>(std::ceil(-eps * 1e6))) m_minus = p.masses()[i];
      else EXPECT_EQ(p.masses()[i], 0) << idx;
    }
    EXPECT_LE(m_plus, 1 / (1 + a));
    EXPECT_NEAR(m_plus, static_cast<double>(1 / (1 + a)), 1e-15);
    EXPECT_NEAR(m_minus, static_cast<double>(a / (1 + a)), 1e-15);
    // One release: delta(E) = (1 - e^(E - eps)) / (1 + alpha) for 0 <= E < eps.
    for (long double E : {0.0L, eps / 2}) {
      const long double exact = exact_delta(f, 1, E);
      EXPECT_NEAR(static_cast<double>(exact), static_cast<double>(-std::expm1(E - eps) / (1 + a)), 1e-13);
      EXPECT_TRUE(sandwiched(p, 1e-6, static_cast<double>(E), exact));
      // Wrong input: a less private alpha's exact curve is above the bound.
      const Pmf g = geometric_pmf(a * a, 20000);
      EXPECT_FALSE(sandwiched(p, 1e-6, static_cast<double>(E), exact_delta(g, 1, E)));
    }
  }
}

// The staircase: for every shift |s| <= D the loss takes only -eps, 0, eps,
// the +eps mass grows with |s|, and Pld::staircase holds the masses of s = D.
TEST(Pld, StaircaseHasThreeLossesAndShiftDDominates) {
  for (long D : {1L, 2L, 3L, 5L, 8L}) {
    for (long r = 1; r <= D; ++r) {
      const long double b = 0.8L, eps = -std::log(b);
      const Pmf f = staircase_pmf(b, D, r, 200 * D);
      long double t_prev = 0, t_D = 0;
      for (long s = 1; s <= D; ++s) {
        long double plus = 0, minus = 0;  // the masses of losses +eps and -eps; the third value is 0
        for (long z = f.lo + D; z < f.lo + static_cast<long>(f.p.size()) - D; ++z) {
          const long double l = std::log(f.at(z) / f.at(z - s));
          if (std::fabs(l - eps) < 1e-9) plus += f.at(z);
          else if (std::fabs(l + eps) < 1e-9) minus += f.at(z);
          else if (!(std::fabs(l) < 1e-9))
            ADD_FAILURE() << "loss " << static_cast<double>(l) << " at D " << D << " r " << r << " s " << s;
        }
        EXPECT_NEAR(static_cast<double>(minus), static_cast<double>(plus * b), 1e-12);
        EXPECT_GE(plus, t_prev - 1e-15);
        t_prev = plus;
        if (s == D) t_D = plus;
      }
      const Pld p = Pld::staircase(static_cast<double>(b), D, r, 1e6);
      // The same delta(E) as the pmf at shift D, for E in [0, eps): t_D (1 - e^(E - eps)).
      for (long double E : {0.0L, 0.1L}) {
        const long double exact = exact_delta(f, D, E);
        EXPECT_NEAR(static_cast<double>(exact), static_cast<double>(t_D * -std::expm1(E - eps)), 1e-12);
        EXPECT_TRUE(sandwiched(p, 1e-6, static_cast<double>(E), exact)) << D << " " << r;
        // Wrong input: the two-point PLD (p0 = 0) is above it whenever p0 > 0,
        // so as "the exact value" it makes the check fail.
        if (1 - t_D * (1 + b) > 1e-6) {
          EXPECT_FALSE(sandwiched(p, 1e-6, static_cast<double>(E), Pld::pure(static_cast<double>(eps), 1e6).delta(static_cast<double>(E))));
        }
      }
    }
  }
}

TEST(Pld, DiscreteLaplaceFromItsPmf) {
  for (long D : {2L, 3L, 7L}) {
    const double alpha = std::exp(-0.5 / static_cast<double>(D));  // eps = 0.5 for the sum
    const Pmf f = geometric_pmf(alpha, 4000);
    const Pld p = Pld::discrete_laplace(alpha, D, 1e6);
    for (long double E : {0.0L, 0.1L, 0.3L}) {
      const long double exact = std::max(exact_delta(f, D, E), exact_delta(f, -D, E));
      EXPECT_TRUE(sandwiched(p, 1e-6, static_cast<double>(E), exact)) << D << " " << static_cast<double>(E);
      // Smaller shifts are dominated.
      for (long s = 1; s < D; ++s) EXPECT_LE(exact_delta(f, s, E), exact);
      // Wrong input: sensitivity D + 1.
      EXPECT_FALSE(sandwiched(p, 1e-6, static_cast<double>(E), exact_delta(f, D + 1, E)));
    }
  }
}

TEST(Pld, DiscreteGaussianFromItsPmf) {
  for (double sigma : {1.0, 3.0, 10.0, 50.0}) {
    for (long Delta : {1L, 2L}) {
      const Pmf f = gaussian_pmf(sigma * sigma, static_cast<long>(sigma * 12) + 10);
      const Pld p = Pld::discrete_gaussian(sigma * sigma, Delta, 1e6);
      for (long double E : {0.0L, 0.05L, 0.5L, 2.0L}) {
        const long double exact = exact_delta(f, Delta, E);
        if (exact < 1e-12) continue;
        EXPECT_TRUE(upper_and_close(p.delta(static_cast<double>(E)), exact, 1e-3, 1e-15))
            << sigma << " " << Delta << " " << static_cast<double>(E) << ": " << p.delta(static_cast<double>(E)) << " vs "
            << static_cast<double>(exact);
        // Wrong input: a 1 % smaller sigma.
        const Pmf g = gaussian_pmf(0.98 * sigma * sigma, static_cast<long>(sigma * 12) + 10);
        EXPECT_FALSE(upper_and_close(p.delta(static_cast<double>(E)), exact_delta(g, Delta, E), 1e-3, 1e-15));
      }
    }
  }
}

// The reference binomial itself, for small k, against direct enumeration.
TEST(Pld, RandomizedResponseClosedFormAgainstEnumeration) {
  for (double eps : {0.1, 1.0}) {
    for (unsigned k : {1u, 2u, 5u, 12u}) {
      for (double E : {-0.5, 0.0, 0.3, 2.0}) {
        const long double p = 1 / (1 + std::exp(-static_cast<long double>(eps)));
        long double d = 0;
        for (unsigned mask = 0; mask < (1u << k); ++mask) {
          const int j = __builtin_popcount(mask);
          const long double l = (2.0L * j - k) * eps;
          if (l > E) d += std::pow(p, j) * std::pow(1 - p, k - j) * -std::expm1(E - l);
        }
        const double closed = optdp::pld::rr_composed_delta(eps, k, E);
        EXPECT_TRUE(upper_and_close(closed, d, 1e-15, 1e-300)) << eps << " " << k << " " << E;
        // Wrong input: eps 1 % larger.
        if (d > 1e-300 && E >= 0) {  // below -k eps, delta = 1 - e^E whatever eps
          EXPECT_FALSE(upper_and_close(optdp::pld::rr_composed_delta(eps * 1.01, k, E), d, 1e-15, 1e-300));
        }
      }
    }
  }
}

// k geometric counts composed on the grid: never below the binomial closed
// form, and at most the grid's rounding above it: each release's losses are
// rounded up by less than one step 1/N, so the grid's curve shifted right by
// k / N (1 / N for geometric_composed, which rounds once) is below the exact
// one, up to the mass moved to +inf (<= 1e-14 here).
TEST(Pld, ComposedGeometricMatchesTheBinomial) {
  const double alpha = alpha_at_sd200(), N = 1e5;
  for (std::uint64_t k : {1u, 10u, 100u, 1123u}) {
    const Pld each = Pld::geometric(alpha, N).self_compose(k);
    const Pld once = Pld::geometric_composed(alpha, k, N);
    for (double E : {0.0, 0.1, 0.5, 1.0}) {
      const double exact = optdp::pld::geometric_composed_delta(alpha, k, E);
      if (exact < 1e-15) continue;
      EXPECT_TRUE(sandwiched(each, static_cast<double>(k) / N, E, exact)) << k << " " << E << ": " << each.delta(E) << " vs " << exact;
      EXPECT_TRUE(sandwiched(once, 1 / N, E, exact)) << k << " " << E << ": " << once.delta(E) << " vs " << exact;
      EXPECT_LE(once.delta(E), each.delta(E));
      // Wrong input: eps 5 % larger.
      const double wrong = optdp::pld::geometric_composed_delta(std::pow(alpha, 1.05), k, E);
      EXPECT_FALSE(sandwiched(once, 1 / N, E, wrong));
      EXPECT_FALSE(sandwiched(each, static_cast<double>(k) / N, E, wrong));
    }
  }
}

// The same composition by one release at a time (compose, as a ledger that
// kept its history's PLD would extend it), mixing in an (eps, delta) release:
// delta adds on top, within the grid's rounding.
TEST(Pld, ComposesOneAtATime) {
  const Pld g = Pld::geometric(0.9, 1e5);
  Pld acc = g;
  for (int i = 1; i < 50; ++i) acc = acc.compose(g);
  const Pld direct = g.self_compose(50);
  for (double E : {0.5, 2.0}) {
    const double exact = optdp::pld::geometric_composed_delta(0.9, 50, E);
    EXPECT_TRUE(upper_and_close(acc.delta(E), exact, 0.02)) << E;
    EXPECT_NEAR(acc.delta(E), direct.delta(E), 1e-3 * exact);
  }
  // An (eps, delta) release with eps = 0: the curve moves up by at most delta.
  const Pld with = acc.compose(Pld::approximate(0, 1e-4, 1e5));
  EXPECT_GE(with.delta(2.0), acc.delta(2.0));
  EXPECT_LE(with.delta(2.0), acc.delta(2.0) + 1e-4 + 1e-12);
}

// Composed discrete Gaussians against their exact curve, computed here
// independently: the k-fold loss is (k Delta^2 - 2 Delta S) / (2 sigma^2) with
// S the sum of the k noises, whose pmf is convolved directly in long double.
TEST(Pld, ComposedDiscreteGaussianNeverBelowItsExactCurve) {
  for (double sigma : {2.0, 5.0}) {
    const long half = static_cast<long>(sigma * 12) + 10;
    const Pmf one = gaussian_pmf(sigma * sigma, half);
    Pmf sum = one;
    const double N = 2 * sigma * sigma;  // every loss on the grid: no rounding
    for (std::uint64_t k = 1; k <= 16; ++k) {
      if (k > 1) {
        Pmf next{sum.lo + one.lo, std::vector<long double>(sum.p.size() + one.p.size() - 1, 0)};
        for (std::size_t i = 0; i < sum.p.size(); ++i)
          for (std::size_t j = 0; j < one.p.size(); ++j) next.p[i + j] += sum.p[i] * one.p[j];
        sum = next;
      }
      if (k != 1 && k != 2 && k != 5 && k != 16) continue;
      auto exact = [&](const Pmf& f, double Delta, long double E) {
        long double d = 0;
        for (std::size_t i = 0; i < f.p.size(); ++i) {
          const long double S = f.lo + static_cast<long>(i);
          const long double L = (k * Delta * Delta - 2 * Delta * S) / (2 * sigma * sigma);
          if (L > E) d += f.p[i] * -std::expm1(E - L);
        }
        return d;
      };
      const Pld grid = Pld::discrete_gaussian(sigma * sigma, 1, N).self_compose(k);
      for (long double E : {0.0L, 0.5L, 1.0L, 2.0L}) {
        const long double ex = exact(sum, 1, E);
        if (ex < 1e-12) continue;
        // No rounding of losses here; the masses' rounding moves about 1e-14 per release and 3e-14 per composition to +inf.
        EXPECT_TRUE(upper_and_close(grid.delta(static_cast<double>(E)), ex, 1e-9, 5e-14 * static_cast<double>(k)))
            << sigma << " " << k << " " << static_cast<double>(E) << ": " << grid.delta(static_cast<double>(E)) << " vs " << static_cast<double>(ex);
        // Wrong input: the same curve with sensitivity 1.02.
        EXPECT_FALSE(upper_and_close(grid.delta(static_cast<double>(E)), exact(sum, 1.02, E), 1e-9, 5e-14 * static_cast<double>(k)));
      }
    }
  }
}

// Composed discrete Gaussians against the mu-GDP curve of continuous ones
// (mu = sqrt(k) / sigma). The discrete Gaussian is not dominated by the
// continuous one: one release at small sigma is above the continuous curve at
// some E and below at others (its loss takes lattice values), and k releases
// are slightly below it (the discrete noise's variance is below sigma^2);
// they agree closely once sigma and k grow (docs/accounting.md).
TEST(Pld, ComposedDiscreteGaussianIsCloseToGdp) {
  for (double sigma : {5.0, 20.0}) {
    for (std::uint64_t k : {1u, 16u, 100u}) {
      const double N = 2 * sigma * sigma;  // losses (1 - 2z) / (2 sigma^2) exactly on the grid
      const Pld many = Pld::discrete_gaussian(sigma * sigma, 1, N).self_compose(k);
      const double mu = std::sqrt(static_cast<double>(k)) / sigma;
      for (double E : {0.0, 0.5, 1.0, 2.0}) {
        const double gdp = optdp::pld::gdp_delta(mu, E);
        if (gdp < 1e-12) continue;
        const double grid = many.delta(E);
        std::printf("sigma %g k %llu E %g: grid %.10g  gdp %.10g  ratio %.8f\n", sigma, static_cast<unsigned long long>(k), E, grid, gdp, grid / gdp);
        const double tol = (sigma < 10 && k == 1) ? 0.05 : 2e-3;
        EXPECT_NEAR(grid / gdp, 1.0, tol) << sigma << " " << k << " " << E;
        // Wrong input: mu 15 % larger.
        EXPECT_GT(std::fabs(grid / optdp::pld::gdp_delta(mu * 1.15, E) - 1), tol) << sigma << " " << k << " " << E;
      }
    }
  }
}

// k discrete Gaussians composed at once (the sum's law from Poisson
// summation, core/pld.hpp) against the exact curve from the pmf convolved k
// times in long double: never below it, and within the masses' rounding of
// it where no loss is rounded (sigma^2 and rho exact, the grid 1 / (2 sigma^2)).
// Fails with the sum's variance taken as k sigma^2 (1 + 1e-3) or with
// sensitivity 1.02 in the exact curve (both checked).
TEST(Pld, ComposedDiscreteGaussianClosedFormAgainstItsPmf) {
  for (const double sigma2 : {16.0, 64.0}) {
    for (const long shift : {1L, 2L}) {
      const double rho = static_cast<double>(shift * shift) / (2 * sigma2);  // exact: powers of two
      const long half = static_cast<long>(std::sqrt(sigma2) * 12) + 10;
      const Pmf one = gaussian_pmf(sigma2, half);
      Pmf sum = one;
      const double N = 2 * sigma2;
      for (std::uint64_t k = 1; k <= 9; ++k) {
        if (k > 1) {
          Pmf next{sum.lo + one.lo, std::vector<long double>(sum.p.size() + one.p.size() - 1, 0)};
          for (std::size_t i = 0; i < sum.p.size(); ++i)
            for (std::size_t j = 0; j < one.p.size(); ++j) next.p[i + j] += sum.p[i] * one.p[j];
          sum = next;
        }
        if (k != 1 && k != 3 && k != 9) continue;
        auto exact = [&](double D, long double E) {
          long double d = 0;
          for (std::size_t i = 0; i < sum.p.size(); ++i) {
            const long double S = sum.lo + static_cast<long>(i);
            const long double L = (k * D * D - 2 * D * S) / (2 * sigma2);
            if (L > E) d += sum.p[i] * -std::expm1(E - L);
          }
          return d;
        };
        const Pld grid = Pld::discrete_gaussian_composed(rho, shift, k, N);
        for (long double E : {0.0L, 0.25L, 0.5L, 1.0L}) {
          const long double ex = exact(static_cast<double>(shift), E);
          if (ex < 1e-12) continue;
          const double got = grid.delta(static_cast<double>(E));
          EXPECT_TRUE(upper_and_close(got, ex, 1e-9, 5e-14))
              << sigma2 << " " << shift << " " << k << " " << static_cast<double>(E) << ": " << got << " vs "
              << static_cast<double>(ex);
          EXPECT_FALSE(upper_and_close(got, exact(1.02 * static_cast<double>(shift), E), 1e-9, 5e-14));
        }
      }
    }
  }
  // Below sigma 4 the error bound is not small: refused.
  EXPECT_THROW(Pld::discrete_gaussian_composed(1.0 / 30, 1, 4), std::invalid_argument);
  EXPECT_NO_THROW(Pld::discrete_gaussian_composed(1.0 / 32, 1, 4));
}

// At sigma 200 from (1, 1e-6): the closed form takes at least 2,200 releases
// and never more than the exact 2,241 (CountsAtNoiseSd200ComposedOneAtATime
// computes it on the exact lattice); about 45 ms per evaluation.
TEST(Pld, ComposedDiscreteGaussianCountsAtSigma200) {
  const double rho = 1.0 / 80000;  // sigma^2 = 40000 in binary128
  EXPECT_LE(Pld::discrete_gaussian_composed(rho, 1, 2200).delta(1.0), 1e-6);
  EXPECT_GT(Pld::discrete_gaussian_composed(rho, 1, 2242).delta(1.0), 1e-6);
  // Against mu-GDP (close, not an order: docs/accounting.md): within 1 %.
  const double g = Pld::discrete_gaussian_composed(rho, 1, 2241).delta(1.0);
  EXPECT_NEAR(g / optdp::pld::gdp_delta(std::sqrt(2241.0) / 200, 1.0), 1.0, 0.01) << g;
}

// The table at noise sd 200 and budget (1, 1e-6): 1,123 geometric
// counts (exact: the binomial) and about 2,241 discrete Gaussian ones.
TEST(Pld, CountsAtNoiseSd200) {
  const double alpha = alpha_at_sd200();
  // Exact: the largest k with delta_k(1) <= 1e-6.
  EXPECT_LE(optdp::pld::geometric_composed_delta(alpha, 1123, 1.0), 1e-6);
  EXPECT_GT(optdp::pld::geometric_composed_delta(alpha, 1124, 1.0), 1e-6);
  // The accountant's grid form (one rounding for the group) agrees.
  EXPECT_LE(Pld::geometric_composed(alpha, 1123).delta(1.0), 1e-6);
  EXPECT_GT(Pld::geometric_composed(alpha, 1124).delta(1.0), 1e-6);
}

// The slow half (tens of seconds, minutes under the sanitizers): thousands of
// releases composed one at a time. Opt-in: OPTDP_LONG_TESTS=1.
TEST(Pld, CountsAtNoiseSd200ComposedOneAtATime) {
  if (!std::getenv("OPTDP_LONG_TESTS")) GTEST_SKIP() << "set OPTDP_LONG_TESTS=1 to run it";
  const double alpha = alpha_at_sd200();
  // Releases composed one at a time on the default grid lose a few to rounding.
  std::printf("geometric, per-release grid 1e-5: delta at 1123 = %.6g, at 1100 = %.6g\n",
              Pld::geometric(alpha).self_compose(1123).delta(1.0), Pld::geometric(alpha).self_compose(1100).delta(1.0));
  // mu-GDP (continuous Gaussian): 2,241.
  EXPECT_LE(optdp::pld::gdp_delta(std::sqrt(2241.0) / 200, 1.0), 1e-6);
  EXPECT_GT(optdp::pld::gdp_delta(std::sqrt(2242.0) / 200, 1.0), 1e-6);
  // The discrete Gaussian's own curve, on the grid 1/80000 where its losses lie exactly.
  const Pld one = Pld::discrete_gaussian(40000, 1, 80000);
  const Pld k2241 = one.self_compose(2241);
  const double d2241 = k2241.delta(1.0), d2242 = k2241.compose(one).delta(1.0);
  std::printf("discrete Gaussian sigma 200: delta at 2241 = %.8g, at 2242 = %.8g (mu-GDP %.8g, %.8g)\n", d2241, d2242,
              optdp::pld::gdp_delta(std::sqrt(2241.0) / 200, 1.0), optdp::pld::gdp_delta(std::sqrt(2242.0) / 200, 1.0));
  EXPECT_LE(d2241, 1e-6);
  EXPECT_GT(d2242, 1e-6);
}

// Groups of pure and (eps, delta) releases, as the ledger composes them: k
// pure and m approximate releases at one eps have the curve
// 1 - (1 - d)^m + (1 - d)^m delta_RR(k + m)(E) (the delta branches make the
// loss infinite; otherwise randomized response k + m times).
TEST(Pld, ApproximateGroupsAddTheirDeltaEvent) {
  const double eps = 0.01, d = 1e-4, N = 1e5;
  const std::uint64_t k = 300, m = 5;
  const Pld grid = Pld::pure_composed(eps, k, N).compose(Pld::approximate_composed(eps, d, m, N));
  const long double keep = std::pow(1 - static_cast<long double>(d), static_cast<long double>(m));
  for (double E : {0.0, 0.2, 0.5}) {
    const long double rr = optdp::pld::rr_composed_delta(eps, k + m, E);
    const long double exact = 1 - keep + keep * rr;
    EXPECT_TRUE(sandwiched(grid, 2 / N, E, exact)) << E << ": " << grid.delta(E) << " vs " << static_cast<double>(exact);
    // Wrong input: without the delta event.
    EXPECT_FALSE(sandwiched(grid, 2 / N, E, rr));
  }
}
