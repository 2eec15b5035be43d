// Multi-level release (Gupte and Sundararajan): marginals, the chain property,
// collusion resistance on exact matrices, and the accuracy of the sampled
// transition rows and keep probability against exact or 400-bit references
// (docs/levels.md).
#include <gtest/gtest.h>

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <limits>
#include <map>

#include "core/levels.hpp"
#include "core/loss.hpp"
#include "core/mechanism.hpp"
#include "exact.hpp"
#include "stats.hpp"

using namespace optdp;

namespace {

double two_sided(double a, std::int64_t z) {
  return (1 - a) / (1 + a) * std::pow(a, static_cast<double>(std::llabs(z)));
}

namespace mp = boost::multiprecision;
using Rational = mp::cpp_rational;
using Big = mp::number<mp::cpp_bin_float<400, mp::digit_base_2>>;  // reference arithmetic, 2^-400

using optdp::test::exact;

Rational exact(const Fraction128& f) {
  return Rational((mp::cpp_int(f.hi) << 64) + f.lo, mp::cpp_int(1) << 128);
}

Big to_big(const Rational& r) { return Big(mp::numerator(r)) / Big(mp::denominator(r)); }

// gamma_m = m u / (1 - m u), u = 2^-113: the relative error bound of m roundings in binary128.
Rational gamma(int m) {
  const Rational mu(mp::cpp_int(m), mp::cpp_int(1) << 113);
  return mu / (1 - mu);
}

const Rational kUlp128(mp::cpp_int(1), mp::cpp_int(1) << 128);  // 2^-128

// T(a, b) = G(n, a)^-1 G(n, b) exactly, by Gauss-Jordan elimination on G(n, a) as defined:
// G[i][r] = P[clamp(i + Z(a), 0, n) = r]. Small n only.
std::vector<std::vector<Rational>> exact_derivation(std::int64_t n, double a, double b) {
  const auto N = static_cast<std::size_t>(n + 1);
  auto mechanism = [&](const Rational& x) {
    std::vector<std::vector<Rational>> g(N, std::vector<Rational>(N));
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t r = 0; r < N; ++r) {
        const std::size_t d = i > r ? i - r : r - i;
        Rational p = 1;
        for (std::size_t k = 0; k < d; ++k) p *= x;
        if (n == 0) g[i][r] = 1;
        else if (r == 0 || r == N - 1) g[i][r] = p / (1 + x);
        else g[i][r] = p * (1 - x) / (1 + x);
      }
    return g;
  };
  auto ga = mechanism(exact(a)), t = mechanism(exact(b));  // solve ga t' = gb in place
  for (std::size_t c = 0; c < N; ++c) {
    std::size_t piv = c;
    while (ga[piv][c] == 0) ++piv;
    std::swap(ga[piv], ga[c]);
    std::swap(t[piv], t[c]);
    const Rational inv = 1 / ga[c][c];
    for (std::size_t k = 0; k < N; ++k) ga[c][k] *= inv, t[c][k] *= inv;
    for (std::size_t r = 0; r < N; ++r) {
      if (r == c || ga[r][c] == 0) continue;
      const Rational f = ga[r][c];
      for (std::size_t k = 0; k < N; ++k) ga[r][k] -= f * ga[c][k], t[r][k] -= f * t[c][k];
    }
  }
  return t;
}

// Row o of T(a, b) in 400-bit arithmetic from T = C_a^-1 A_a^-1 A_b C_b with A_x[i][j] = x^|i-j|,
// C_x = diag(1/(1+x) at 0 and n, (1-x)/(1+x) inside), A_a^-1 tridiagonal (the formula the closed
// forms replace; its cancellation costs at most ~2^110 of the 2^-400 here).
std::vector<Big> reference_row(std::int64_t n, double a_, double b_, std::int64_t o) {
  const Big a = a_, b = b_;
  std::vector<Big> row(static_cast<std::size_t>(n + 1));
  if (n == 0) {
    row[0] = 1;
    return row;
  }
  std::vector<Big> pw(static_cast<std::size_t>(n + 2));
  pw[0] = 1;
  for (std::size_t k = 1; k < pw.size(); ++k) pw[k] = pw[k - 1] * b;
  auto A = [&](std::int64_t i, std::int64_t j) { return pw[static_cast<std::size_t>(i > j ? i - j : j - i)]; };
  auto col = [n](const Big& x, std::int64_t z) { return (z == 0 || z == n) ? 1 / (1 + x) : (1 - x) / (1 + x); };
  const Big d = (o == 0 || o == n) ? Big(1) : 1 + a * a;
  for (std::int64_t z = 0; z <= n; ++z) {
    Big s = d * A(o, z);
    if (o > 0) s -= a * A(o - 1, z);
    if (o < n) s -= a * A(o + 1, z);
    row[static_cast<std::size_t>(z)] = s / (1 - a * a) / col(a, o) * col(b, z);
  }
  return row;
}

// The sampled row mu against the reference p: every entry within gamma_m p_z + 2^-128, and
// sum |mu_z - p_z| (which bounds the total variation of the draw, docs/levels.md) and |sum mu - 1|
// within gamma_m + (n + 1) 2^-128. Returns sum |mu_z - p_z|.
Big check_row(const RangeLevelChain& chain, int i, std::int64_t n, std::int64_t o, const std::vector<Big>& p,
              const std::string& what) {
  const auto mu = chain.transition_masses(i, o);
  const int m = RangeLevelChain::transition_roundings(n);
  const Big g = to_big(gamma(m)), ulp = to_big(kUlp128);
  const Big bound = g + (n + 1) * ulp;
  Big l1 = 0, total = 0;
  int bad = 0;
  for (std::int64_t z = 0; z <= n; ++z) {
    const Big mz = to_big(exact(mu[static_cast<std::size_t>(z)]));
    const Big pz = p[static_cast<std::size_t>(z)];
    const Big err = mp::abs(mz - pz);
    if (!(err <= g * pz + ulp) && bad++ < 3)
      ADD_FAILURE() << what << " o=" << o << " z=" << z << ": |mu - p| = " << err.str(6) << " > gamma_" << m
                    << " p + 2^-128 = " << (g * pz + ulp).str(6) << " (p = " << pz.str(20) << ")";
    l1 += err;
    total += mz;
  }
  EXPECT_LE(l1, bound) << what << " o=" << o << ": sum |mu - p| = " << l1.str(6) << ", bound " << bound.str(6);
  EXPECT_LE(mp::abs(total - 1), bound) << what << " o=" << o << ": sum mu = 1 + " << (total - 1).str(6);
  return l1;
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

// The claimed per-level bound gamma_m(n) + (n + 1) 2^-128 is below the project's 2^-64 for every n the
// function accepts (it grows with n): below 2^-100 at kMaxMatrixN.
TEST(Levels, TransitionBoundIsBelowTwoToTheMinus64) {
  const std::int64_t n = kMaxMatrixN;
  EXPECT_EQ(RangeLevelChain::transition_roundings(n), n + 9);
  EXPECT_EQ(RangeLevelChain::transition_roundings(0), 13);
  const Rational bound = gamma(RangeLevelChain::transition_roundings(n)) + (n + 1) * kUlp128;
  EXPECT_LT(bound, Rational(mp::cpp_int(1), mp::cpp_int(1) << 100));
  EXPECT_LT(bound, Rational(mp::cpp_int(1), mp::cpp_int(1) << 64));
}

// Closed forms against the exact rational G(n, a)^-1 G(n, b), small n, every row, including a next
// to b (adjacent doubles), b next to 1 and tiny alphas.
TEST(Levels, TransitionRowsMatchExactRationalsWithinTheBound) {
  const double one_minus = std::nextafter(1.0, 0.0);  // 1 - 2^-53
  const std::vector<std::pair<double, double>> pairs{
      {0.3, 0.6},
      {0.5, std::nextafter(0.5, 1.0)},
      {0.1, one_minus},
      {std::nextafter(one_minus, 0.0), one_minus},
      {0.9, 1 - std::ldexp(1.0, -30)},
      {1e-300, 3e-300},
      {0.2, 0.21}};
  for (std::int64_t n : {0, 1, 2, 3, 4, 7}) {
    for (auto [a, b] : pairs) {
      RangeLevelChain chain(n, {a, b});
      const auto t = exact_derivation(n, a, b);
      const std::string what = "n=" + std::to_string(n) + " a=" + std::to_string(a) + " b=" + std::to_string(b);
      for (std::int64_t o = 0; o <= n; ++o) {
        std::vector<Big> p;
        for (const auto& x : t[static_cast<std::size_t>(o)]) p.push_back(to_big(x));
        check_row(chain, 1, n, o, p, what);
        // The 400-bit reference agrees with the exact rationals (so it can stand in for larger n).
        const auto ref = reference_row(n, a, b, o);
        for (std::size_t z = 0; z < p.size(); ++z)
          EXPECT_LE(mp::abs(ref[z] - p[z]), ldexp(Big(1), -250) * p[z]) << what << " o=" << o << " z=" << z;
      }
    }
  }
}

// Larger n, up to kMaxMatrixN, against the 400-bit reference; boundary rows, rows next to them and the middle.
TEST(Levels, TransitionRowsMatchTheReferenceUpToTheLargestN) {
  const double one_minus = std::nextafter(1.0, 0.0);
  const std::vector<std::pair<double, double>> pairs{{0.3, 0.6},
                                                     {0.7, std::nextafter(0.7, 1.0)},
                                                     {0.05, one_minus},
                                                     {std::nextafter(one_minus, 0.0), one_minus},
                                                     {0.999, 0.9999},
                                                     {1e-300, 3e-300}};
  for (std::int64_t n : {std::int64_t{12}, std::int64_t{100}, kMaxMatrixN}) {
    for (auto [a, b] : pairs) {
      RangeLevelChain chain(n, {a / 2, a, b});  // level 2 -> 3
      const std::string what = "n=" + std::to_string(n) + " a=" + std::to_string(a) + " b=" + std::to_string(b);
      for (std::int64_t o : {std::int64_t{0}, std::int64_t{1}, n / 2, n - 1, n})
        check_row(chain, 2, n, o, reference_row(n, a, b, o), what);
    }
  }
}

// The double view agrees with the reference too (fuzz_levels checks its sums).
TEST(Levels, TransitionRowDoubleView) {
  RangeLevelChain chain(50, {0.4, 0.8});
  for (std::int64_t o : {0, 17, 50}) {
    const auto row = chain.transition_row(1, o);
    const auto ref = reference_row(50, 0.4, 0.8, o);
    for (std::size_t z = 0; z < row.size(); ++z) EXPECT_NEAR(row[z], static_cast<double>(ref[z]), 1e-15 * row[z] + 1e-300);
  }
  EXPECT_THROW(chain.transition_row(0, 0), std::out_of_range);
  EXPECT_THROW(chain.transition_row(2, 0), std::out_of_range);
  EXPECT_THROW(chain.transition_masses(1, 51), std::out_of_range);
  SeededRng rng(1);
  EXPECT_THROW(chain.transition(1, -1, rng), std::out_of_range);
}

// Draws from single rows against the reference row (chi-square, fixed seeds).
TEST(Levels, SampledTransitionsFollowTheRow) {
  struct Case {
    std::int64_t n;
    double a, b;
    std::int64_t o;
  };
  const std::vector<Case> cases{{8, 0.2, 0.5, 0},  {8, 0.2, 0.5, 3},         {8, 0.2, 0.5, 8},
                                {30, 0.6, 0.9, 29}, {40, 0.3, 1 - 1e-6, 20}, {20, 0.5, 0.502, 10},
                                {1, 0.4, 0.7, 1}};
  std::uint64_t seed = 31;
  for (const auto& c : cases) {
    RangeLevelChain chain(c.n, {c.a, c.b});
    const auto ref = reference_row(c.n, c.a, c.b, c.o);
    SeededRng rng(seed++);
    std::vector<std::int64_t> draws;
    for (int s = 0; s < 100000; ++s) draws.push_back(chain.transition(1, c.o, rng));
    auto chi = test::chi_square_samples(draws, [&](std::int64_t z) {
      return z < 0 || z > c.n ? 0.0 : static_cast<double>(ref[static_cast<std::size_t>(z)]);
    });
    EXPECT_GT(chi.p_value, 1e-4) << "n=" << c.n << " a=" << c.a << " b=" << c.b << " o=" << c.o
                                 << " chi2=" << chi.statistic << " dof=" << chi.dof;
  }
}

// The unbounded chain's keep probability: |c~ - c0| <= gamma_9 c0 + 2^-128 < 2^-109, against exact rationals.
TEST(Levels, KeepFractionWithinItsBound) {
  const double one_minus = std::nextafter(1.0, 0.0);
  for (auto [a, b] : std::vector<std::pair<double, double>>{{0.1, 0.5},
                                                           {0.5, std::nextafter(0.5, 1.0)},
                                                           {0.3, one_minus},
                                                           {std::nextafter(one_minus, 0.0), one_minus},
                                                           {1e-300, 0.5},
                                                           {1e-300, 2e-300}}) {
    const Rational ra = exact(a), rb = exact(b);
    const Rational c0 = (1 - rb) * (1 - rb) * ra / ((1 - ra) * (1 - ra) * rb);
    const Rational got = exact(keep_fraction(a, b));
    EXPECT_LE(mp::abs(got - c0), gamma(9) * c0 + kUlp128) << a << " " << b;
  }
  EXPECT_LT(gamma(9) + kUlp128, Rational(mp::cpp_int(1), mp::cpp_int(1) << 109));
}

// A count at the end of INTEGER's range: the levels saturate, never fail (a
// failure would depend on the count).
TEST(Levels, ExtremeCountsSaturateInsteadOfFailing) {
  SeededRng rng(5);
  const LevelChain chain({0.5, 0.9});
  for (int i = 0; i < 200; ++i) {
    for (std::int64_t count : {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()}) {
      std::vector<std::int64_t> r;
      ASSERT_NO_THROW(r = chain.release(count, rng));
      ASSERT_EQ(r.size(), 2u);
      for (std::int64_t v : r) EXPECT_LE(std::abs(static_cast<double>(v) - static_cast<double>(count)), 1e6);
    }
  }
}
