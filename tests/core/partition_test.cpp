// Private partition selection (Desfontaines, Voss, Gipson, Mandayam): the
// optimal release probabilities against the paper's recursion in 400-bit
// arithmetic, the DP constraints on the 128-bit fractions keep() actually
// uses (exact rationals, e^eps to 2^-390), the certified TV bound, keep()'s
// frequencies, the noisy-threshold baselines, and the parameter checks
// (docs/partition.md).
#include <gtest/gtest.h>

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
#include <quadmath.h>
}

#include "core/partition.hpp"
#include "core/rng.hpp"
#include "exact.hpp"
#include "stats.hpp"
#include "test_rng.hpp"

using namespace optdp;

namespace {

namespace mp = boost::multiprecision;
using Rational = mp::cpp_rational;
using Big = mp::number<mp::cpp_bin_float<400, mp::digit_base_2>>;  // reference arithmetic, 2^-400

using optdp::test::exact;
Rational exact(const Fraction128& f) { return Rational((mp::cpp_int(f.hi) << 64) + f.lo, mp::cpp_int(1) << 128); }
Big to_big(const Rational& r) { return Big(mp::numerator(r)) / Big(mp::denominator(r)); }
Big pow2(int e) { return e >= 0 ? Big(mp::cpp_int(1) << e) : Big(1) / Big(mp::cpp_int(1) << -e); }

// The probability keep(n) uses, as an exact rational (1 at and above the threshold).
Rational realised(const PartitionSelection& s, std::uint64_t n) {
  return n >= s.threshold() ? Rational(1) : exact(s.fraction(n));
}

// The paper's recursion at the real eps/k, delta/k, in 400-bit arithmetic, for n = 0..last.
std::vector<Big> optimal(double eps, double delta, std::int64_t k, std::uint64_t last) {
  const Big e = mp::exp(to_big(exact(eps)) / k), d = to_big(exact(delta)) / k;
  std::vector<Big> p{Big(0)};
  for (std::uint64_t n = 1; n <= last; ++n) {
    const Big& x = p.back();
    Big v = e * x + d;
    const Big b = 1 + (x + d - 1) / e;
    if (b < v) v = b;
    if (v > 1) v = 1;
    p.push_back(v);
  }
  return p;
}

struct Params {
  double eps, delta;
  std::int64_t k;
};

// A grid of (eps, delta, k): small and large eps, delta from the smallest accepted to 0.9, k = 1, 3, 10.
std::vector<Params> grid() {
  std::vector<Params> out;
  for (double eps : {0.05, 0.3, 1.0, 2.0, 5.0, 20.0, 300.0, 1e6})
    for (double delta : {1e-16, 1e-12, 1e-9, 1e-5, 0.01, 0.3, 0.9})
      for (std::int64_t k : {1, 3, 10}) {
        if (delta / static_cast<double>(k) < PartitionSelection::kMinPartitionDelta) continue;
        out.push_back({eps, delta, k});
      }
  return out;
}

std::string label(const Params& p) {
  std::ostringstream o;
  o << "eps " << p.eps << ", delta " << p.delta << ", k " << p.k;
  return o.str();
}

// A binary128 value exactly, as the sum of three doubles (53 + 53 + 53 >= 113 bits).
Big big(__float128 v) {
  const double hi = static_cast<double>(v);
  const double mid = static_cast<double>(v - hi);
  const double lo = static_cast<double>(v - hi - mid);
  return Big(hi) + Big(mid) + Big(lo);
}

}  // namespace

// --- the paper's reference values ------------------------------------------

TEST(PartitionSelection, ReferenceValuesAtEpsilonOneDeltaOneInHundredThousand) {
  const PartitionSelection s(1.0, 1e-5, 1);
  const std::pair<std::uint64_t, double> ref[] = {{1, 1e-5},        {2, 3.71828e-5}, {5, 8.5791e-4},
                                                  {10, 0.128183},   {12, 0.760311},  {15, 0.988072},
                                                  {20, 0.999925},   {25, 1.0}};
  for (const auto& [n, v] : ref) EXPECT_NEAR(static_cast<double>(s.probability(n)), v, 1e-6 * v) << "n = " << n;
  EXPECT_EQ(s.probability(0), 0.0L);
  EXPECT_EQ(s.threshold(), 23u);  // pi(22) = 1 - 5.06e-6, and 1 - pi(22) <= delta
  EXPECT_LT(s.probability(22), 1.0L);
  EXPECT_EQ(s.probability(23), 1.0L);
}

TEST(PartitionSelection, KPartitionsUseEpsilonAndDeltaOverK) {
  // Basic composition: k = 4 at (4, 2^-15) is the k = 1 mechanism at (1, 2^-17), fraction for fraction.
  const PartitionSelection one(1.0, std::ldexp(1.0, -17), 1), four(4.0, std::ldexp(1.0, -15), 4);
  ASSERT_EQ(one.threshold(), four.threshold());
  for (std::uint64_t n = 0; n < one.threshold(); ++n) {
    EXPECT_EQ(one.fraction(n).hi, four.fraction(n).hi) << n;
    EXPECT_EQ(one.fraction(n).lo, four.fraction(n).lo) << n;
  }
  const PartitionSelection k10(1.0, 1e-5, 10);  // eps/k = 0.1, delta/k = 1e-6: a much later threshold
  EXPECT_GT(k10.threshold(), 5 * one.threshold());
}

// --- accuracy: 0 <= pi(n) - q(n) <= tv_bound() <= 2^-64 ---------------------

TEST(PartitionSelection, RealisedProbabilitiesAreBelowTheOptimalOnesWithinTheCertifiedBound) {
  const Big two64 = pow2(-64), slack = pow2(-300);
  Big worst_bound = 0;
  for (const Params& g : grid()) {
    SCOPED_TRACE(label(g));
    const PartitionSelection s(g.eps, g.delta, g.k);
    const auto p = optimal(g.eps, g.delta, g.k, s.threshold() + 2);
    const Big bound(s.tv_bound());
    EXPECT_LE(bound, two64);
    if (bound > worst_bound) worst_bound = bound;
    // The exact pi reaches 1 at the realised threshold or one step before it.
    EXPECT_EQ(p[s.threshold()], 1);
    EXPECT_LT(p[s.threshold() - 2], 1);
    Big worst = 0;
    for (std::uint64_t n = 0; n <= s.threshold() + 2; ++n) {
      const Big gap = p[n] - to_big(realised(s, n));
      EXPECT_GE(gap, -slack) << "n = " << n;  // q(n) <= pi(n): never more likely than the optimal mechanism
      if (gap > worst) worst = gap;
    }
    EXPECT_LE(worst, bound);
  }
  // For the record (docs/partition.md): the largest certified bound on the grid.
  std::cout << "largest tv_bound on the grid: 2^" << static_cast<double>(mp::log2(worst_bound)) << "\n";
  EXPECT_LT(worst_bound, pow2(-70));
}

TEST(PartitionSelection, CertifiedBoundAtTheEdgeOfTheDomain) {
  // Next to the largest bound over the accepted parameters (the smallest delta/k with eps/k near the table
  // cap: 2^-71.7; docs/partition.md), checked against the exact recursion over all 186911 entries.
  const PartitionSelection s(3e-4, 1e-16, 1);
  EXPECT_EQ(s.threshold(), 186911u);
  EXPECT_LT(s.tv_bound(), std::ldexp(1.0, -71));
  const auto p = optimal(3e-4, 1e-16, 1, s.threshold());
  Big worst = 0;
  for (std::uint64_t n = 0; n <= s.threshold(); ++n) {
    const Big gap = p[n] - to_big(realised(s, n));
    ASSERT_GE(gap, -pow2(-300)) << n;
    if (gap > worst) worst = gap;
  }
  EXPECT_LE(worst, Big(s.tv_bound()));
  std::cout << "largest pi(n) - q(n): 2^" << static_cast<double>(mp::log2(worst)) << ", certified bound 2^"
            << std::log2(s.tv_bound()) << "\n";
}

// --- the DP constraints, on the fractions keep() uses --------------------------

TEST(PartitionSelection, RealisedProbabilitiesMeetAllFourConstraintsExactly) {
  // For n >= 1, with e = e^(eps/k) to 2^-390 and d = delta/k: q(n) <= e q(n-1) + d, 1 - q(n-1) <= e (1 - q(n)) + d,
  // and the mirrored pair. Each right-hand side is shrunk by 2^-350 (relative) so that the 400-bit evaluation
  // cannot make a violated inequality look satisfied.
  const Big shrink = 1 - pow2(-350);
  for (const Params& g : grid()) {
    SCOPED_TRACE(label(g));
    const PartitionSelection s(g.eps, g.delta, g.k);
    const Big e = mp::exp(to_big(exact(g.eps)) / g.k), d = to_big(exact(g.delta)) / g.k;
    EXPECT_TRUE(s.fraction(0).is_zero());
    Big prev = 0;
    for (std::uint64_t n = 1; n <= s.threshold() + 1; ++n) {
      const Big q = to_big(realised(s, n));
      ASSERT_LE(q, (e * prev + d) * shrink) << "kept, n = " << n;
      ASSERT_LE(1 - prev, (e * (1 - q) + d) * shrink) << "dropped, n = " << n;
      ASSERT_LE(prev, (e * q + d) * shrink) << "kept, mirrored, n = " << n;
      ASSERT_LE(1 - q, (e * (1 - prev) + d) * shrink) << "dropped, mirrored, n = " << n;
      ASSERT_GE(q, prev) << "non-decreasing, n = " << n;
      prev = q;
    }
    EXPECT_EQ(prev, 1);
  }
}

TEST(PartitionSelection, FlooringTheExactProbabilitiesWouldBreakTheKeptConstraint) {
  // Why the table is the recursion on the realised values and not floor(pi(n) 2^128) / 2^128: flooring
  // loses up to 2^-128 at n - 1, which e^eps magnifies, so floor(pi(n)) can exceed e^eps floor(pi(n-1)) + delta.
  int violations = 0;
  for (double eps : {1.0, 2.0, 5.0}) {
    const auto p = optimal(eps, 1e-5, 1, 40);
    const Big e = mp::exp(Big(eps)), d = to_big(exact(1e-5));
    const Big scale = pow2(128);
    for (std::size_t n = 1; n < p.size(); ++n) {
      const Big fn = mp::floor(p[n] * scale) / scale, fp = mp::floor(p[n - 1] * scale) / scale;
      if (p[n] < 1 && fn > e * fp + d) ++violations;
    }
  }
  EXPECT_GT(violations, 0);
}

// --- shape ------------------------------------------------------------------

TEST(PartitionSelection, StartsAtZeroIsNonDecreasingAndReachesOne) {
  for (const Params& g : grid()) {
    SCOPED_TRACE(label(g));
    const PartitionSelection s(g.eps, g.delta, g.k);
    EXPECT_EQ(s.probability(0), 0.0L);
    EXPECT_GE(s.threshold(), 2u);  // q(1) <= delta/k < 1
    for (std::uint64_t n = 1; n < s.threshold(); ++n) {
      EXPECT_GE(s.probability(n), s.probability(n - 1));
      EXPECT_LE(s.probability(n), 1.0L);  // q(n) < 1 exactly; near 1 it may round to 1 in long double
    }
    EXPECT_EQ(s.probability(s.threshold()), 1.0L);
    EXPECT_EQ(s.probability(std::numeric_limits<std::uint64_t>::max()), 1.0L);
    EXPECT_THROW(s.fraction(s.threshold()), std::out_of_range);
  }
}

TEST(PartitionSelection, ThresholdGrowsLikeLogOfOneOverDeltaOverEpsilon) {
  // Two phases of about ln(eps / (2 delta)) / eps steps each for small eps (docs/partition.md).
  for (double eps : {0.01, 0.1, 0.5})
    for (double delta : {1e-5, 1e-9}) {
      const PartitionSelection s(eps, delta, 1);
      const double approx = 2 * std::log(eps / (2 * delta)) / eps;
      EXPECT_GT(static_cast<double>(s.threshold()), 0.9 * approx) << eps << " " << delta;
      EXPECT_LT(static_cast<double>(s.threshold()), 1.3 * approx) << eps << " " << delta;
    }
}

// --- the binary128 functions the table relies on -------------------------------

TEST(PartitionSelection, QuadmathExponentialsAreWithinFourUlp) {
  // The rounding analysis (docs/partition.md) assumes expq and expm1q within 4 ulp (relative 2^-110).
  const Big tol = pow2(-110);
  for (double eps : {1e-12, 1e-6, 0.001, 0.05, 0.3, 1.0, 2.0, 5.0, 20.0, 100.0, 256.0})
    for (int k : {1, 3, 7, 10, 1000}) {
      const __float128 x = static_cast<__float128>(eps) / k;
      const Big bx = big(x);
      auto rel = [](const Big& got, const Big& want) { return mp::abs(got - want) / want; };
      EXPECT_LE(rel(big(expq(x)), mp::exp(bx)), tol) << eps << "/" << k;
      EXPECT_LE(rel(big(expq(-x)), mp::exp(-bx)), tol) << eps << "/" << k;
      EXPECT_LE(rel(big(-expm1q(-x)), 1 - mp::exp(-bx)), tol) << eps << "/" << k;
    }
}

// --- keep(): exact use of the fraction, and frequencies -------------------------

TEST(PartitionSelection, KeepComparesRandomBitsWithTheFraction) {
  const PartitionSelection s(1.0, 1e-5, 1);
  const Fraction128& f = s.fraction(10);
  auto bytes_of = [](std::uint64_t hi, std::uint64_t lo) {
    std::vector<unsigned char> b;
    for (std::uint64_t w : {hi, lo})
      for (int shift = 56; shift >= 0; shift -= 8) b.push_back(static_cast<unsigned char>(w >> shift));
    return b;
  };
  {
    test::ScriptedRng r(bytes_of(f.hi, f.lo));  // U = q(10) exactly: not below it
    EXPECT_FALSE(s.keep(10, r));
  }
  {
    const std::uint64_t lo = f.lo - 1, hi = f.lo == 0 ? f.hi - 1 : f.hi;  // U = q(10) - 2^-128
    test::ScriptedRng r(bytes_of(hi, lo));
    EXPECT_TRUE(s.keep(10, r));
  }
  // 0 units: never; at or above the threshold: always; neither draws a byte.
  for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{23}, std::uint64_t{24},
                          std::numeric_limits<std::uint64_t>::max()}) {
    test::ScriptedRng r({0x00, 0x00});
    EXPECT_EQ(s.keep(n, r), n != 0) << n;
    EXPECT_EQ(r.consumed_script(), 0u) << n;
  }
}

TEST(PartitionSelection, KeepFrequenciesMatchTheProbabilities) {
  struct Case {
    double eps, delta;
    std::int64_t k;
    std::vector<std::uint64_t> ns;
  };
  const Case cases[] = {{1.0, 1e-5, 1, {8, 9, 10, 11, 12, 13, 15, 18}},
                        {0.5, 0.05, 2, {1, 2, 3, 5, 8, 12}},
                        {3.0, 1e-3, 3, {3, 6, 9}}};
  std::uint64_t seed = 2022;
  for (const Case& c : cases) {
    const PartitionSelection s(c.eps, c.delta, c.k);
    for (std::uint64_t n : c.ns) {
      ASSERT_LT(n, s.threshold());
      SeededRng rng(seed++);
      const std::int64_t draws = 200000;
      std::vector<std::int64_t> counts(2, 0);
      for (std::int64_t i = 0; i < draws; ++i) ++counts[s.keep(n, rng) ? 1 : 0];
      const double p = static_cast<double>(s.probability(n));
      auto pmf = [p](std::int64_t v) { return v == 1 ? p : 1 - p; };
      const auto chi = test::chi_square(counts, 0, pmf, 0, 0);
      EXPECT_GT(chi.p_value, 1e-4) << "eps " << c.eps << " n " << n << " kept " << counts[1] << " of " << draws
                                   << ", p = " << p;
      // Power: the same draws reject the probability of one unit more (or less, near the top).
      const double other = static_cast<double>(s.probability(n + 1 < s.threshold() ? n + 1 : n - 1));
      if (std::abs(other - p) * std::sqrt(static_cast<double>(draws)) > 10 * std::sqrt(p * (1 - p) + 1e-12)) {
        auto wrong = [other](std::int64_t v) { return v == 1 ? other : 1 - other; };
        EXPECT_LT(test::chi_square(counts, 0, wrong, 0, 0).p_value, 1e-6) << "n " << n;
      }
    }
  }
}

// --- the noisy-threshold baselines -------------------------------------------

TEST(PartitionSelection, BaselinesReleaseOneUnitWithAtMostDeltaAndNeverBeatTheOptimalMechanism) {
  for (const Params& g : grid()) {
    if (g.eps > 50) continue;  // the baselines' tails underflow long double there
    SCOPED_TRACE(label(g));
    const PartitionSelection s(g.eps, g.delta, g.k);
    const long double d = static_cast<long double>(g.delta) / g.k;
    if (d <= 0.5L) {
      EXPECT_NEAR(static_cast<double>(s.laplace_threshold_probability(1) / d), 1.0, 1e-12);
    }
    EXPECT_LE(s.geometric_threshold_probability(1), d * (1 + 1e-15L));
    EXPECT_EQ(s.laplace_threshold_probability(0), 0.0L);
    EXPECT_EQ(s.geometric_threshold_probability(0), 0.0L);
    // Optimality (the paper's theorem): both are (eps/k, delta/k)-DP tests on the count, so neither can release
    // any n with a higher probability than pi(n) >= q(n).
    for (std::uint64_t n = 1; n <= s.threshold() + 5; ++n) {
      const long double q = s.probability(n) + s.tv_bound();
      EXPECT_LE(s.laplace_threshold_probability(n), q * (1 + 1e-15L)) << n;
      EXPECT_LE(s.geometric_threshold_probability(n), q * (1 + 1e-15L)) << n;
    }
  }
}

TEST(PartitionSelection, BaselineThresholdsAtEpsilonOneDeltaOneInHundredThousand) {
  const PartitionSelection s(1.0, 1e-5, 1);
  EXPECT_NEAR(s.laplace_threshold(), 1 - std::log(2e-5), 1e-12);  // 11.8198
  EXPECT_EQ(s.geometric_threshold(), 13);  // alpha^12 / (1 + alpha) = 4.49e-6 <= 1e-5 < alpha^11 / (1 + alpha)
  EXPECT_NEAR(static_cast<double>(s.geometric_threshold_probability(1)), std::exp(-12.0) / (1 + std::exp(-1.0)),
              1e-15);
  EXPECT_NEAR(static_cast<double>(s.laplace_threshold_probability(12)), 1 - 0.5 * std::exp(-(12 - 11.819778284410283)),
              1e-6);
}

// --- parameters -------------------------------------------------------------------

namespace {

std::string message(double eps, double delta, std::int64_t k) {
  try {
    PartitionSelection s(eps, delta, k);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(PartitionSelection, BadParametersThrowWithTheirNameAndValue) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(message(0, 1e-5, 1), "epsilon must be a finite number > 0, but is 0");
  EXPECT_EQ(message(-1, 1e-5, 1), "epsilon must be a finite number > 0, but is -1");
  EXPECT_EQ(message(nan, 1e-5, 1), "epsilon must be a finite number > 0, but is NaN");
  EXPECT_EQ(message(inf, 1e-5, 1), "epsilon must be a finite number > 0, but is inf");
  EXPECT_EQ(message(1, 0, 1), "delta must be in (0, 1), but is 0");
  EXPECT_EQ(message(1, 1, 1), "delta must be in (0, 1), but is 1");
  EXPECT_EQ(message(1, -0.5, 1), "delta must be in (0, 1), but is -0.5");
  EXPECT_EQ(message(1, nan, 1), "delta must be in (0, 1), but is NaN");
  EXPECT_EQ(message(1, 1e-5, 0), "max_partitions must be an integer in [1, 1000000], but is 0");
  EXPECT_EQ(message(1, 1e-5, -3), "max_partitions must be an integer in [1, 1000000], but is -3");
  EXPECT_EQ(message(1, 1e-5, 1000001), "max_partitions must be an integer in [1, 1000000], but is 1000001");
  EXPECT_EQ(message(1, 1e-17, 1), "delta / max_partitions must be at least 1e-16, but is 1e-17");
  EXPECT_EQ(message(1e-4, 1e-10, 1),
            "epsilon / max_partitions must be large enough that a key with at most 262144 units is always released "
            "(with delta / max_partitions = 1e-10), but is 1e-04");
  EXPECT_EQ(message(1, 1e-10, 100000),
            "epsilon / max_partitions must be large enough that a key with at most 262144 units is always released "
            "(with delta / max_partitions = 1e-15), but is 1e-05");
  // The edges that are accepted: a tiny delta/k, a huge eps, delta next to 1.
  EXPECT_EQ(message(1, 1e-16, 1), "(no error)");
  EXPECT_EQ(message(1e300, 1e-5, 1), "(no error)");
  EXPECT_EQ(message(1, 0.999999, 1), "(no error)");
  EXPECT_EQ(message(4e-4, 1e-5, 1), "(no error)");
  EXPECT_EQ(message(1e-300, 0.01, 1), "(no error)");  // n* about 1/delta: the cap binds only below delta/k ~ 4e-6
}

TEST(PartitionSelection, TinyEpsilonWithLargeDeltaHasAShortTableAndAnAstronomicalGeometricThreshold) {
  const PartitionSelection s(1e-300, 0.01, 1);
  EXPECT_EQ(s.threshold(), 100u);  // each step adds delta: q(n) = n delta (up to eps), 1 - q(99) <= delta
  EXPECT_NEAR(static_cast<double>(s.probability(50)), 0.5, 1e-12);
  // alpha^m <= delta (1 + alpha) needs m >= ln(1/(2 delta)) / eps = 3.9e300.
  EXPECT_NEAR(s.geometric_threshold() / (std::log(50.0) / 1e-300), 1.0, 1e-12);
  EXPECT_NEAR(static_cast<double>(s.geometric_threshold_probability(1)), 0.01, 1e-15);
}

TEST(PartitionSelection, HugeEpsilonReleasesTwoUnitsAlmostSurely) {
  // eps/k above 256 is lowered to 256: pi = (0, delta, 1 - e^-eps (1 - 2 delta), 1, ...), within 2^-369.
  const PartitionSelection s(1e300, 1e-5, 1);
  EXPECT_EQ(s.threshold(), 3u);
  EXPECT_NEAR(static_cast<double>(s.probability(1)), 1e-5, 1e-20);
  EXPECT_GT(s.probability(2), 1 - 1e-18L);
}
