// The exact discrete Gaussian: the law of its output (chi-square against the
// exactly normalised pmf), its parameters, and the lattice form.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

extern "C" {
#include <quadmath.h>
}

#include "core/gaussian.hpp"
#include "core/rng.hpp"
#include "stats.hpp"
#include "test_rng.hpp"

using namespace optdp;

namespace {

// P[Z = z] for N_Z(0, sigma^2), normalised by summing |y| <= 40 sigma + 10.
struct DiscreteGaussianPmf {
  explicit DiscreteGaussianPmf(long double sigma2) : s2(sigma2) {
    const auto bound = static_cast<std::int64_t>(40 * std::sqrt(sigma2) + 10);
    long double n = 0;
    for (std::int64_t y = -bound; y <= bound; ++y) n += weight(y);
    norm = n;
  }
  long double weight(std::int64_t z) const {
    const long double zz = static_cast<long double>(z);
    return std::exp(-zz * zz / (2 * s2));
  }
  double operator()(std::int64_t z) const { return static_cast<double>(weight(z) / norm); }
  long double s2, norm = 1;
};

}  // namespace

TEST(DiscreteGaussian, ChiSquareAgainstTheExactPmf) {
  const double sigmas[] = {0.5, 1, 2.5, 10, 100, 1e4};
  std::uint64_t seed = 11;
  for (double sigma : sigmas) {
    SeededRng r(seed++);
    const double s2 = sigma * sigma;
    const DiscreteGaussian g(s2);
    const int n = sigma >= 100 ? 400000 : 200000;
    std::vector<std::int64_t> samples(n);
    for (auto& v : samples) v = g(r);
    const DiscreteGaussianPmf pmf(s2);
    const auto chi = test::chi_square_samples(samples, pmf);
    EXPECT_GT(chi.p_value, 1e-4) << "sigma=" << sigma << " chi2=" << chi.statistic << " dof=" << chi.dof;
  }
}

TEST(DiscreteGaussian, ANonIntegerVarianceHasTheExactLaw) {
  // sigma^2 = 2.7 (not a square): t = floor(1.643) + 1 = 2.
  SeededRng r(5);
  const DiscreteGaussian g(2.7);
  EXPECT_EQ(g.t(), 2u);
  std::vector<std::int64_t> samples(200000);
  for (auto& v : samples) v = g(r);
  const auto chi = test::chi_square_samples(samples, DiscreteGaussianPmf(2.7));
  EXPECT_GT(chi.p_value, 1e-4) << chi.statistic;
}

TEST(DiscreteGaussian, ScaleIsFloorOfSigmaPlusOneExactly) {
  EXPECT_EQ(DiscreteGaussian(0.25).t(), 1u);
  EXPECT_EQ(DiscreteGaussian(1.0).t(), 2u);                       // sigma = 1 exactly
  EXPECT_EQ(DiscreteGaussian(std::nextafter(1.0, 0.0)).t(), 1u);  // just below 1
  EXPECT_EQ(DiscreteGaussian(4.0).t(), 3u);
  EXPECT_EQ(DiscreteGaussian(1e8).t(), 10001u);
  EXPECT_EQ(DiscreteGaussian(std::nextafter(1e8, 0.0)).t(), 10000u);
}

TEST(DiscreteGaussian, AcceptanceIsAProbability) {
  for (double s2 : {0.01, 0.7, 9.0, 1e6, 1e20}) {
    const DiscreteGaussian g(s2);
    for (std::uint64_t m : {0ull, 1ull, 2ull, 1000ull, 1ull << 40}) {
      const __float128 a = g.acceptance(m);
      EXPECT_TRUE(a >= 0 && a <= 1) << static_cast<double>(a);
    }
  }
}

TEST(DiscreteGaussian, RefusesBadVariances) {
  for (double s2 : {0.0, -1.0, double(NAN), double(INFINITY), 1e30}) EXPECT_THROW(DiscreteGaussian{s2}, std::invalid_argument);
  try {
    DiscreteGaussian g(-2.0);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "sigma^2 must be a finite number in (0, 2^80], but is -2");
  }
}

TEST(DiscreteGaussian, DrawsDependOnlyOnItsOwnBits) {
  // The same seed and sigma give the same sequence and consume the same bytes:
  // there is no other input the sampler could depend on.
  SeededRng a(3), b(3);
  const DiscreteGaussian g(30.0);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(g(a), g(b));
  EXPECT_EQ(a.u64(), b.u64());
}

TEST(LatticeDiscreteGaussian, OutputsMultiplesOfGWithTheScaledLaw) {
  SeededRng r(17);
  const double g = 0.25, sigma = 3.0;  // k ~ N_Z(0, 12^2)
  const LatticeDiscreteGaussian lat(sigma * sigma, g);
  std::vector<std::int64_t> ks(200000);
  for (auto& k : ks) {
    const double v = lat(r);
    const double q = v / g;
    ASSERT_EQ(q, std::nearbyint(q));
    k = static_cast<std::int64_t>(q);
  }
  const auto chi = test::chi_square_samples(ks, DiscreteGaussianPmf(144.0));
  EXPECT_GT(chi.p_value, 1e-4) << chi.statistic;
  EXPECT_THROW(LatticeDiscreteGaussian(1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(LatticeDiscreteGaussian(1.0, -1.0), std::invalid_argument);
}

namespace {

// Bytes that Rng::u64 reads back as v (it copies 8 bytes in memory order).
void push_u64(std::vector<unsigned char>& b, std::uint64_t v) {
  unsigned char c[8];
  std::memcpy(c, &v, 8);
  b.insert(b.end(), c, c + 8);
}

bool accept_with(const DiscreteGaussian& g, std::uint64_t m, std::uint64_t hi, std::uint64_t lo) {
  std::vector<unsigned char> b;
  push_u64(b, hi);
  push_u64(b, lo);
  test::ScriptedRng r(b);
  return g.accept(r, m);
}

}  // namespace

TEST(DiscreteGaussian, FastAcceptanceDecidesExactlyAsThe128BitFraction) {
  // Uniforms right at the 128-bit fraction F (inside the fast path's band,
  // so the exact comparison decides) and far from it (the double decides).
  for (double s2 : {0.3, 2.7, 100.0, 1e8}) {
    const DiscreteGaussian g(s2);
    for (std::uint64_t m : {0ull, 1ull, 3ull, 17ull, 12345ull}) {
      const Fraction128 f = to_fraction128(g.acceptance(m));
      if (f.hi > 0 && f.lo > 0) {
        EXPECT_TRUE(accept_with(g, m, f.hi, f.lo - 1)) << s2 << " " << m;
        EXPECT_TRUE(accept_with(g, m, f.hi - 1, UINT64_MAX));
      }
      if (f.hi < UINT64_MAX) {
        EXPECT_FALSE(accept_with(g, m, f.hi, f.lo)) << s2 << " " << m;  // U = F is not < F
        EXPECT_FALSE(accept_with(g, m, f.hi + 1, 0));
      }
      if (f.hi > (1ull << 30)) {
        EXPECT_TRUE(accept_with(g, m, f.hi - (1ull << 30), 0));
      }
      if (f.hi < UINT64_MAX - (1ull << 30)) {
        EXPECT_FALSE(accept_with(g, m, f.hi + (1ull << 30), UINT64_MAX));
      }
    }
  }
}
