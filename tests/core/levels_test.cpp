// Multi-level release (Gupte and Sundararajan): marginals, the chain property,
// and collusion resistance on exact matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/levels.hpp"
#include "core/mechanism.hpp"
#include "stats.hpp"

using namespace optdp;

namespace {

double two_sided(double a, std::int64_t z) {
  return (1 - a) / (1 + a) * std::pow(a, static_cast<double>(std::llabs(z)));
}

}  // namespace

TEST(Levels, Validation) {
  EXPECT_THROW(check_levels({}), std::invalid_argument);
  EXPECT_THROW(check_levels({0.5, 0.5}), std::invalid_argument);
  EXPECT_THROW(check_levels({0.6, 0.5}), std::invalid_argument);
  EXPECT_THROW(check_levels({0.5, 1.0}), std::invalid_argument);
  EXPECT_THROW(check_levels(std::vector<double>(17, 0.5)), std::invalid_argument);
  std::vector<double> sixteen;
  for (int i = 1; i <= 16; ++i) sixteen.push_back(i / 17.0);
  EXPECT_NO_THROW(check_levels(sixteen));
  EXPECT_THROW(parse_levels("[0.1, 0.5"), std::invalid_argument);
  EXPECT_THROW(parse_levels("{}"), std::invalid_argument);
  EXPECT_EQ(parse_levels(" [0.1, 0.5] ").size(), 2u);
  try {
    check_levels({0.6, 0.5});
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "alphas must be strictly increasing (the least private level first), but alpha_2 is 0.5 after 0.6");
  }
}

// The decomposition behind the unbounded chain: Z(b) = Z(a) + W exactly.
TEST(Levels, KeepProbabilityMakesTheConvolutionExact) {
  for (auto [a, b] : {std::pair{0.1, 0.5}, {0.5, 0.9}, {0.3, 0.31}, {0.9, 0.99}}) {
    const double c0 = keep_probability(a, b);
    ASSERT_GT(c0, 0);
    ASSERT_LT(c0, 1);
    for (int z = -30; z <= 30; ++z) {
      // P[Z(a) + W = z] = c0 P[Z(a) = z] + (1 - c0) sum_k P[Z(a) = k] P[Z(b) = z - k]
      long double conv = 0;
      for (int k = -3000; k <= 3000; ++k) conv += two_sided(a, k) * static_cast<long double>(two_sided(b, z - k));
      const long double p = c0 * two_sided(a, z) + (1 - c0) * conv;
      EXPECT_NEAR(static_cast<double>(p), two_sided(b, z), 1e-12) << a << " " << b << " z=" << z;
    }
  }
}

TEST(Levels, UnboundedMarginalsAreSingleReleases) {
  const std::vector<double> alphas{0.2, 0.5, 0.8, 0.95};
  LevelChain chain(alphas);
  SeededRng rng(21);
  const int n = 100000;
  std::vector<std::vector<std::int64_t>> noise(alphas.size());
  for (int s = 0; s < n; ++s) {
    auto r = chain.release(40, rng);
    for (std::size_t i = 0; i < r.size(); ++i) noise[i].push_back(r[i] - 40);
  }
  for (std::size_t i = 0; i < alphas.size(); ++i) {
    auto chi = test::chi_square_samples(noise[i], [&](std::int64_t z) { return two_sided(alphas[i], z); });
    EXPECT_GT(chi.p_value, 1e-4) << "level " << i + 1 << " chi2=" << chi.statistic;
  }
}

TEST(Levels, UnboundedStepIsIndependentOfTheTrueValue) {
  // r_2 - r_1 has the law of W whatever the count: compare two counts, and the exact law of W.
  const double a = 0.3, b = 0.7;
  LevelChain chain({a, b});
  SeededRng rng(22);
  const double c0 = keep_probability(a, b);
  auto w_pmf = [&](std::int64_t w) { return (w == 0 ? c0 : 0.0) + (1 - c0) * two_sided(b, w); };
  for (std::int64_t count : {0, 1000}) {
    std::vector<std::int64_t> steps;
    for (int s = 0; s < 100000; ++s) {
      auto r = chain.release(count, rng);
      steps.push_back(r[1] - r[0]);
    }
    auto chi = test::chi_square_samples(steps, w_pmf);
    EXPECT_GT(chi.p_value, 1e-4) << "count " << count;
  }
}

TEST(Levels, TransitionRowsAreTheDerivationMatrix) {
  RangeLevelChain chain(6, {0.3, 0.6});
  DerivationMatrix t(6, 0.3, 0.6);
  for (std::int64_t o = 0; o <= 6; ++o) {
    const auto row = chain.transition_row(1, o);
    double sum = 0;
    for (std::int64_t z = 0; z <= 6; ++z) {
      EXPECT_GE(row[static_cast<std::size_t>(z)], 0);
      EXPECT_NEAR(row[static_cast<std::size_t>(z)], t(o, z), 1e-12);
      sum += row[static_cast<std::size_t>(z)];
    }
    EXPECT_NEAR(sum, 1, 1e-12);
  }
}

TEST(Levels, RangeRestrictedMarginalsAndKernel) {
  const std::int64_t n = 8;
  const std::vector<double> alphas{0.2, 0.5, 0.85};
  RangeLevelChain chain(n, alphas);
  SeededRng rng(23);
  for (std::int64_t value : {0, 3, 8}) {
    std::vector<std::vector<std::int64_t>> levels(alphas.size());
    std::map<std::int64_t, std::vector<std::int64_t>> next_given_first;  // r_2 given r_1
    for (int s = 0; s < 60000; ++s) {
      auto r = chain.release(value, rng);
      for (std::size_t i = 0; i < r.size(); ++i) levels[i].push_back(r[i]);
      next_given_first[r[0]].push_back(r[1]);
    }
    for (std::size_t i = 0; i < alphas.size(); ++i) {
      GeometricMechanism g(n, alphas[i]);
      auto chi = test::chi_square_samples(levels[i], [&](std::int64_t z) { return z < 0 || z > n ? 0.0 : g(value, z); });
      EXPECT_GT(chi.p_value, 1e-4) << "value " << value << " level " << i + 1;
    }
    // The kernel from level 1 to level 2 is T(alpha_1, alpha_2), whatever the true value.
    DerivationMatrix t(n, alphas[0], alphas[1]);
    for (const auto& [first, nexts] : next_given_first) {
      if (nexts.size() < 2000) continue;
      const std::int64_t r1 = first;  // (clang 14 cannot capture a structured binding)
      auto chi = test::chi_square_samples(nexts, [&](std::int64_t z) { return z < 0 || z > n ? 0.0 : t(r1, z); });
      EXPECT_GT(chi.p_value, 1e-4) << "value " << value << " r1 " << r1;
    }
  }
}

// Collusion resistance on exact matrices: the posterior of the true value
// given all levels equals the posterior given level 1 alone.
TEST(Levels, PosteriorGivenAllLevelsEqualsPosteriorGivenTheFirst) {
  const std::int64_t n = 5;
  const std::vector<double> alphas{0.25, 0.5, 0.7};
  const std::vector<double> prior{0.1, 0.3, 0.05, 0.25, 0.2, 0.1};
  GeometricMechanism g(n, alphas[0]);
  DerivationMatrix t12(n, alphas[0], alphas[1]), t23(n, alphas[1], alphas[2]);
  for (std::int64_t r1 = 0; r1 <= n; ++r1)
    for (std::int64_t r2 = 0; r2 <= n; ++r2)
      for (std::int64_t r3 = 0; r3 <= n; ++r3) {
        std::vector<double> all(n + 1), first(n + 1);
        double za = 0, zf = 0;
        for (std::int64_t v = 0; v <= n; ++v) {
          all[v] = prior[v] * g(v, r1) * t12(r1, r2) * t23(r2, r3);
          first[v] = prior[v] * g(v, r1);
          za += all[v];
          zf += first[v];
        }
        if (za < 1e-300) continue;
        for (std::int64_t v = 0; v <= n; ++v) EXPECT_NEAR(all[v] / za, first[v] / zf, 1e-12);
      }
  // And the joint law's level-3 marginal is G(n, alpha_3): G T12 T23 = G3.
  GeometricMechanism g3(n, alphas[2]);
  for (std::int64_t v = 0; v <= n; ++v)
    for (std::int64_t r3 = 0; r3 <= n; ++r3) {
      double p = 0;
      for (std::int64_t r1 = 0; r1 <= n; ++r1)
        for (std::int64_t r2 = 0; r2 <= n; ++r2) p += g(v, r1) * t12(r1, r2) * t23(r2, r3);
      EXPECT_NEAR(p, g3(v, r3), 1e-12);
    }
}
