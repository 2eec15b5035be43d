// The range-restricted geometric mechanism G(n, alpha), derivation matrices
// T(alpha, beta) = G(alpha)^-1 G(beta), and the derivability test (docs/math.md,
// "Geometric mechanism" and "Minimax users").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/loss.hpp"
#include "core/mechanism.hpp"

using namespace optdp;

namespace {

Matrix derivation_dense(std::int64_t n, double alpha, double beta) {
  const DerivationMatrix t(n, alpha, beta);
  const auto N = static_cast<std::size_t>(n + 1);
  Matrix m(N, std::vector<double>(N));
  for (std::size_t o = 0; o < N; ++o)
    for (std::size_t z = 0; z < N; ++z) m[o][z] = t(static_cast<std::int64_t>(o), static_cast<std::int64_t>(z));
  return m;
}

double max_abs_diff(const Matrix& a, const Matrix& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a[i].size(); ++j) d = std::max(d, std::fabs(a[i][j] - b[i][j]));
  return d;
}

Matrix identity(std::size_t N) {
  Matrix m(N, std::vector<double>(N, 0.0));
  for (std::size_t i = 0; i < N; ++i) m[i][i] = 1;
  return m;
}

const std::int64_t kSizes[] = {0, 1, 2, 5, 50, 2000};
const double kAlphas[] = {0.01, 0.3, 0.5, 0.9, 0.999};

}  // namespace

// ---- G(n, alpha) -------------------------------------------------------------

TEST(Geometric, RowsSumToOne) {
  for (std::int64_t n : kSizes)
    for (double alpha : kAlphas) {
      const GeometricMechanism g(n, alpha);
      for (std::int64_t i = 0; i <= n; ++i) {
        long double s = 0;
        for (std::int64_t z = 0; z <= n; ++z) {
          ASSERT_GE(g(i, z), 0.0);
          s += g(i, z);
        }
        ASSERT_NEAR(static_cast<double>(s), 1.0, 1e-12) << "n=" << n << " alpha=" << alpha << " row " << i;
      }
    }
}

// G is alpha-DP: neighbouring rows differ by at most a factor 1/alpha in every
// column (exactly alpha or 1/alpha where the entries are normal numbers).
TEST(Geometric, NeighbouringRowsRespectAlpha) {
  for (std::int64_t n : kSizes)
    for (double alpha : kAlphas) {
      const GeometricMechanism g(n, alpha);
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t z = 0; z <= n; ++z) {
          const double a = g(i, z), b = g(i + 1, z);
          // 1e-300 absorbs entries that underflow (alpha^2000).
          ASSERT_GE(a, alpha * b * (1 - 1e-12) - 1e-300) << "n=" << n << " alpha=" << alpha << " " << i << "," << z;
          ASSERT_GE(b, alpha * a * (1 - 1e-12) - 1e-300) << "n=" << n << " alpha=" << alpha << " " << i << "," << z;
        }
    }
}

TEST(Geometric, SinglePointRangeIsTheIdentity) {
  for (double alpha : kAlphas) EXPECT_EQ(GeometricMechanism(0, alpha).dense(), (Matrix{{1.0}})) << alpha;
}

// docs/math.md: alpha^|z-k| / (1+alpha) at z in {0, n}, (1-alpha)/(1+alpha) alpha^|z-k| inside.
TEST(Geometric, EntriesMatchTheFormula) {
  for (std::int64_t n : {1, 2, 3, 9})
    for (double alpha : {0.2, 0.5, 0.95}) {
      const Matrix g = GeometricMechanism(n, alpha).dense();
      for (std::int64_t k = 0; k <= n; ++k)
        for (std::int64_t z = 0; z <= n; ++z) {
          const double p = std::pow(alpha, static_cast<double>(std::abs(z - k)));
          const double expected = (z == 0 || z == n) ? p / (1 + alpha) : (1 - alpha) / (1 + alpha) * p;
          EXPECT_NEAR(g[static_cast<std::size_t>(k)][static_cast<std::size_t>(z)], expected, 1e-15);
        }
    }
}

// G(n, alpha) is two-sided geometric noise added to k, clamped into {0..n}.
TEST(Geometric, IsClampedTwoSidedGeometric) {
  const std::int64_t n = 6;
  for (double alpha : {0.3, 0.7}) {
    const GeometricMechanism g(n, alpha);
    for (std::int64_t k = 0; k <= n; ++k) {
      std::vector<long double> out(static_cast<std::size_t>(n + 1), 0.0L);
      for (std::int64_t z = -400; z <= 400; ++z) {
        const long double p = (1.0L - alpha) / (1.0L + alpha) * std::pow(static_cast<long double>(alpha), std::abs(z));
        out[static_cast<std::size_t>(std::clamp<std::int64_t>(k + z, 0, n))] += p;
      }
      for (std::int64_t z = 0; z <= n; ++z)
        EXPECT_NEAR(g(k, z), static_cast<double>(out[static_cast<std::size_t>(z)]), 1e-15) << k << " " << z;
    }
  }
}

TEST(Geometric, Validation) {
  EXPECT_THROW(GeometricMechanism(-1, 0.5), std::invalid_argument);
  EXPECT_THROW(GeometricMechanism(kMaxMatrixN + 1, 0.5), std::invalid_argument);
  EXPECT_NO_THROW(GeometricMechanism(kMaxMatrixN, 0.5));
  // alpha = 0 (no privacy) and alpha = 1 are outside the library's (0, 1).
  for (double alpha : {0.0, 1.0, -0.1, 2.0, double(NAN)}) EXPECT_THROW(GeometricMechanism(3, alpha), std::invalid_argument);
}

// ---- derivation matrices T(alpha, beta) ----------------------------------------

// G(alpha) T(alpha, beta) = G(beta), and T is stochastic: beta-level releases
// can be derived from an alpha-level release.
TEST(Derivation, GTimesTIsTheLessAccurateMechanism) {
  const double levels[] = {0.05, 0.3, 0.5, 0.8, 0.95};
  for (std::int64_t n : {0, 1, 2, 7, 30})
    for (double alpha : levels)
      for (double beta : levels) {
        if (alpha > beta) continue;
        SCOPED_TRACE("n=" + std::to_string(n) + " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta));
        const Matrix t = derivation_dense(n, alpha, beta);
        for (const auto& row : t) {
          long double s = 0;
          for (double v : row) {
            EXPECT_GE(v, -1e-12);
            s += v;
          }
          EXPECT_NEAR(static_cast<double>(s), 1.0, 1e-12);
        }
        const Matrix gt = multiply(GeometricMechanism(n, alpha).dense(), t);
        EXPECT_LE(max_abs_diff(gt, GeometricMechanism(n, beta).dense()), 1e-12);
      }
}

TEST(Derivation, SameLevelIsTheIdentity) {
  for (std::int64_t n : {0, 1, 2, 7, 30})
    for (double alpha : {0.05, 0.5, 0.95})
      EXPECT_LE(max_abs_diff(derivation_dense(n, alpha, alpha), identity(static_cast<std::size_t>(n + 1))), 1e-12)
          << n << " " << alpha;
}

// The chain of releases: T(a, b) T(b, c) = T(a, c).
TEST(Derivation, Composes) {
  for (std::int64_t n : {1, 4, 12}) {
    const Matrix ab = derivation_dense(n, 0.2, 0.5), bc = derivation_dense(n, 0.5, 0.9);
    EXPECT_LE(max_abs_diff(multiply(ab, bc), derivation_dense(n, 0.2, 0.9)), 1e-12) << n;
  }
}

TEST(Derivation, OnlyMorePrivacyCanBeAdded) {
  EXPECT_THROW(DerivationMatrix(5, 0.6, 0.5), std::invalid_argument);
  EXPECT_THROW(DerivationMatrix(5, 0.5, NAN), std::invalid_argument);
  EXPECT_THROW(DerivationMatrix(5, 0.0, 0.5), std::invalid_argument);
  EXPECT_THROW(DerivationMatrix(-1, 0.3, 0.5), std::invalid_argument);
}

// inverse_times agrees with G^-1 from Gauss-Jordan elimination.
TEST(Derivation, InverseTimesMatchesANumericalInverse) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::int64_t n : {0, 1, 3, 6})
    for (double alpha : {0.1, 0.6, 0.9}) {
      const auto N = static_cast<std::size_t>(n + 1);
      const GeometricMechanism g(n, alpha);
      // [G | I] -> [I | G^-1] in long double.
      std::vector<std::vector<long double>> a(N, std::vector<long double>(2 * N, 0.0L));
      for (std::size_t i = 0; i < N; ++i) {
        for (std::size_t j = 0; j < N; ++j) a[i][j] = g(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j));
        a[i][N + i] = 1;
      }
      for (std::size_t c = 0; c < N; ++c) {
        std::size_t p = c;
        for (std::size_t r = c; r < N; ++r)
          if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
        std::swap(a[c], a[p]);
        const long double d = a[c][c];
        for (auto& v : a[c]) v /= d;
        for (std::size_t r = 0; r < N; ++r)
          if (r != c) {
            const long double f = a[r][c];
            for (std::size_t j = 0; j < 2 * N; ++j) a[r][j] -= f * a[c][j];
          }
      }
      Matrix m(N, std::vector<double>(N));
      for (auto& row : m)
        for (auto& v : row) v = u(rng);
      for (std::size_t o = 0; o < N; ++o)
        for (std::size_t z = 0; z < N; ++z) {
          long double e = 0;
          for (std::size_t k = 0; k < N; ++k) e += a[o][N + k] * m[k][z];
          EXPECT_NEAR(inverse_times(g, m, static_cast<std::int64_t>(o), static_cast<std::int64_t>(z)),
                      static_cast<double>(e), 1e-11)
              << n << " " << alpha;
        }
    }
}

// ---- derivability ------------------------------------------------------------

TEST(Derivable, GeometricAtAnyLowerAccuracy) {
  const double levels[] = {0.05, 0.3, 0.5, 0.8, 0.95};
  for (std::int64_t n : {0, 1, 2, 7, 30})
    for (double alpha : levels)
      for (double beta : levels) {
        const Matrix gb = GeometricMechanism(n, beta).dense();
        if (alpha <= beta) {
          EXPECT_TRUE(derivable(gb, alpha)) << n << " " << alpha << " " << beta;
        } else if (n >= 1) {
          EXPECT_FALSE(derivable(gb, alpha)) << n << " " << alpha << " " << beta;
        }
      }
  // A little more accuracy than alpha allows is already not derivable.
  EXPECT_FALSE(derivable(GeometricMechanism(10, 0.49).dense(), 0.5));
}

// G(n, alpha) is derivable from itself (T = I) at every alpha, including
// strong privacy (alpha near 1, epsilon ~ 1e-4). G^-1 amplifies rounding by
// about 1/((1 - alpha^2)(1 - alpha)/(1 + alpha)) (1e8 at alpha = 0.9999), so
// a fixed absolute tolerance on the entries of G^-1 M cannot tell rounding
// from a genuinely negative entry there.
// KNOWN BUG (core/mechanism.cpp, derivable): fails for alpha >= ~0.9997.
TEST(Derivable, GeometricIsDerivableFromItselfNearAlphaOne) {
  for (double alpha : {0.99, 0.999, 0.9997, 0.9999, 0.99999})
    for (std::int64_t n : {1, 2, 3, 10, 30}) {
      EXPECT_TRUE(derivable(GeometricMechanism(n, alpha).dense(), alpha)) << "n=" << n << " alpha=" << alpha;
      // and still not derivable from slightly less privacy
      const double beta = 1 - (1 - alpha) * 1.01;
      EXPECT_FALSE(derivable(GeometricMechanism(n, beta).dense(), alpha)) << n << " " << alpha;
    }
}

TEST(Derivable, RemapsOfGeometricAreDerivableTheIdentityIsNot) {
  for (std::int64_t n : {1, 4, 9}) {
    const auto N = static_cast<std::size_t>(n + 1);
    EXPECT_FALSE(derivable(identity(N), 0.5)) << n;
    // G T for a random stochastic T.
    std::mt19937_64 rng(static_cast<std::uint64_t>(n));
    std::uniform_real_distribution<double> u(0, 1);
    Matrix t(N, std::vector<double>(N));
    for (auto& row : t) {
      double s = 0;
      for (auto& v : row) s += (v = u(rng) < 0.5 ? 0.0 : u(rng));
      if (s == 0) row[0] = s = 1;
      for (auto& v : row) v /= s;
    }
    EXPECT_TRUE(derivable(multiply(GeometricMechanism(n, 0.5).dense(), t), 0.5)) << n;
  }
  EXPECT_TRUE(derivable(Matrix{{1.0}}, 0.5));
}

TEST(Derivable, RejectsMalformedMatrices) {
  EXPECT_THROW(derivable(Matrix{}, 0.5), std::invalid_argument);
  EXPECT_THROW(derivable(Matrix{{1, 0, 0}, {0, 1, 0}}, 0.5), std::invalid_argument);   // 2 x 3
  EXPECT_THROW(derivable(Matrix{{1, 0}, {0, 1, 0}}, 0.5), std::invalid_argument);      // ragged
  EXPECT_THROW(derivable(Matrix{{1.5, -0.5}, {0, 1}}, 0.5), std::invalid_argument);   // negative
  EXPECT_THROW(derivable(Matrix{{0.5, 0.4}, {0.5, 0.5}}, 0.5), std::invalid_argument);  // row sum 0.9
  EXPECT_THROW(derivable(Matrix{{NAN, 1}, {0.5, 0.5}}, 0.5), std::invalid_argument);
  EXPECT_THROW(derivable(Matrix{{0.5, 0.5}, {0.5, 0.5}}, 1.5), std::invalid_argument);  // alpha
  try {
    derivable(Matrix{{1, 0, 0}, {0, 1, 0}}, 0.5);
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "matrix must be square, but row 0 has 3 entries and there are 2 rows");
  }
  try {
    derivable(Matrix{{0.5, 0.4}, {0.5, 0.5}}, 0.5);
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "matrix rows must sum to 1, but row 0 sums to 0.9");
  }
}

TEST(Multiply, SmallProduct) {
  EXPECT_EQ(multiply(Matrix{{1, 2}, {3, 4}}, Matrix{{5, 6}, {7, 8}}), (Matrix{{19, 22}, {43, 50}}));
  EXPECT_EQ(multiply(Matrix{{1, 2, 3}}, Matrix{{1}, {1}, {1}}), (Matrix{{6}}));
}
