// Private mean and variance (core/moments.hpp, docs/moments.md): the grid,
// the sensitivities the noise is calibrated to, checked by brute force over
// the values a row can take, and the estimators.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/moments.hpp"

using namespace optdp;

TEST(MomentsPlan, SplitAndSensitivities) {
  struct B {
    double lo, hi;
  } cases[] = {{0, 10}, {-5, 5}, {100, 101}, {-101, -100}, {1e6, 1e6 + 1}, {0, 1e9}, {-3.3, 7.7}};
  std::mt19937_64 gen(9);
  for (auto kind : {MomentsPlan::Kind::Mean, MomentsPlan::Kind::Variance}) {
    for (const auto& b : cases) {
      const MomentsPlan p(kind, 1.0, b.lo, b.hi);
      SCOPED_TRACE(std::to_string(b.lo) + " " + std::to_string(b.hi));
      // The budget: both kinds of neighbour cost at most eps.
      const double add_remove = p.eps_count + p.eps_s1 + p.eps_s2, replace = 2 * p.eps_s1 + p.eps_s2;
      EXPECT_LE(add_remove, 1.0);
      EXPECT_LE(replace, 1.0);
      // Every row's y lies in [y_lo, y_hi] and |y| <= H; every z in [0, D2].
      std::uniform_real_distribution<double> u(b.lo - (b.hi - b.lo), b.hi + (b.hi - b.lo));
      for (int i = 0; i < 20000; ++i) {
        const double x = i == 0 ? b.lo : i == 1 ? b.hi : i == 2 ? -1e308 : i == 3 ? 1e308 : u(gen);
        const std::int64_t y = p.y(x);
        ASSERT_GE(y, p.y_lo);
        ASSERT_LE(y, p.y_hi);
        ASSERT_LE(std::llabs(y), p.H);
        if (kind == MomentsPlan::Kind::Variance) {
          ASSERT_GE(p.z(y), 0);
          ASSERT_LE(p.z(y), p.D2);
        }
      }
      EXPECT_LE(p.y_hi - p.y_lo, 2 * p.H);  // a replaced row moves S1 by at most 2H
      EXPECT_GE(p.H, 1 << 19) << "the grid resolves the width finely";
      EXPECT_LE(p.D2, std::int64_t{1} << 41);
    }
  }
}

// The sensitivities by brute force: over the values a row can take near
// every rounding boundary of the bounds, of mid and of random points (y is
// monotone, so these are where it changes), the largest move of S1 and S2
// when a row is added or removed (|y|, z) and when one is replaced
// (|y - y'|, |z - z'|), against what the noise is calibrated to.
TEST(MomentsPlan, SensitivitiesByBruteForce) {
  struct B {
    double lo, hi, eps;
  } cases[] = {{0, 10, 1}, {-5, 5, 1}, {100, 200, 1}, {-200, -100, 0.1}, {1e6, 1e6 + 1, 1},
               {0.1, 0.7, 3}, {-3.3, 7.7, 20}, {1e300, 1.5e300, 1}, {-8e307, 8e307, 1e-9}};
  std::mt19937_64 gen(5);
  for (auto kind : {MomentsPlan::Kind::Mean, MomentsPlan::Kind::Variance}) {
    for (const auto& b : cases) {
      const MomentsPlan p(kind, b.eps, b.lo, b.hi);
      SCOPED_TRACE(std::to_string(b.lo) + " " + std::to_string(b.hi) + " eps " + std::to_string(b.eps));
      std::vector<double> xs;
      auto around = [&](double v) {
        double a = v, c = v;
        for (int i = 0; i < 4; ++i) a = std::nextafter(a, -INFINITY), c = std::nextafter(c, INFINITY);
        for (double t = a; t <= c; t = std::nextafter(t, INFINITY)) xs.push_back(t);
      };
      around(b.lo), around(b.hi), around(p.mid);
      std::uniform_real_distribution<double> u(b.lo, b.hi);
      for (int i = 0; i < 200; ++i) {
        // A point where y changes: the grid point's half-way mark, seen from both sides.
        const double x = u(gen);
        around(p.mid + (static_cast<double>(p.y(x)) + 0.5) * p.g);
      }
      std::int64_t add_s1 = 0, add_s2 = 0, rep_s1 = 0, rep_s2 = 0, ymin = INT64_MAX, ymax = INT64_MIN;
      std::int64_t zmin = INT64_MAX, zmax = INT64_MIN;
      for (double x : xs) {
        const std::int64_t y = p.y(x), z = kind == MomentsPlan::Kind::Variance ? p.z(y) : 0;
        ymin = std::min(ymin, y), ymax = std::max(ymax, y), zmin = std::min(zmin, z), zmax = std::max(zmax, z);
        add_s1 = std::max<std::int64_t>(add_s1, std::llabs(y));
        add_s2 = std::max<std::int64_t>(add_s2, std::llabs(z));
      }
      rep_s1 = ymax - ymin, rep_s2 = zmax - zmin;  // the largest |y - y'| and |z - z'| over all pairs
      EXPECT_EQ(ymin, p.y_lo);
      EXPECT_EQ(ymax, p.y_hi);
      EXPECT_EQ(add_s1, p.H) << "S1's noise is calibrated to the largest |y|";
      EXPECT_LE(rep_s1, 2 * p.H) << "a replaced row moves S1 by at most two sensitivities";
      // The losses in units of each part's eps, added over the parts.
      const double add_loss = p.eps_count * 1 + p.eps_s1 * std::ceil(static_cast<double>(add_s1) / p.H);
      const double rep_loss = p.eps_s1 * std::ceil(static_cast<double>(rep_s1) / p.H);
      if (kind == MomentsPlan::Kind::Variance) {
        EXPECT_EQ(zmin, 0);
        EXPECT_EQ(add_s2, p.D2) << "S2's noise is calibrated to the largest z";
        EXPECT_LE(rep_s2, p.D2);
        EXPECT_LE(add_loss + p.eps_s2 * std::ceil(static_cast<double>(add_s2) / p.D2), b.eps);
        EXPECT_LE(rep_loss + p.eps_s2 * std::ceil(static_cast<double>(rep_s2) / p.D2), b.eps);
      } else {
        EXPECT_LE(add_loss, b.eps);
        EXPECT_LE(rep_loss, b.eps);
      }
    }
  }
}

TEST(MomentsPlan, ParameterRules) {
  using K = MomentsPlan::Kind;
  auto message = [](K k, double eps, double lo, double hi) -> std::string {
    try {
      MomentsPlan(k, eps, lo, hi);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  for (K k : {K::Mean, K::Variance}) {
    // The same rules for both kinds; the parts' shares of eps never show.
    EXPECT_EQ(message(k, 0x1p-30, 0, 1), "");
    EXPECT_EQ(message(k, 1e-9, 0, 1), "");
    EXPECT_EQ(message(k, 0x1p-31, 0, 1), "eps must be at least 2^-30 (9.3e-10) for sums, but is 4.656612873077393e-10");
    EXPECT_EQ(message(k, 0, 0, 1), "eps must be a finite number > 0, but is 0");
    EXPECT_EQ(message(k, 1, 1, 0), "lower must be less than upper, but lower is 1 and upper is 0");
    EXPECT_EQ(message(k, 1, -1e308, 1e308), "upper - lower must be finite, but is inf");
    // Only the width matters: narrow bounds far from 0 are fine, a width below 2^-960 is not.
    EXPECT_EQ(message(k, 1, 1e-280, 2e-280), "");
    EXPECT_EQ(message(k, 1, 1e300, 1.0000000000001e300), "");
    EXPECT_EQ(message(k, 1, 1e-280, 1e-280 + 1e-292),
              "upper - lower must be at least 2^-960 (1.1e-289), but is 1.0000046596114107e-292");
  }
}

// Bounds so wide that the variance bound ((upper - lower) / 2)^2 is near or
// beyond the largest double: the standard deviation stays finite and within
// (upper - lower) / 2, the variance within its bound, never NaN.
TEST(MomentsPlan, WideBoundsNeverOverflowTheStandardDeviation) {
  for (double hi : {1e150, 2e154, 1e200, 1.7e308}) {
    const MomentsPlan v(MomentsPlan::Kind::Variance, 1.0, 0, hi);
    const std::int64_t y0 = v.y(0), y1 = v.y(hi);
    const __int128 s2 = static_cast<__int128>(v.z(y0)) + v.z(y1);
    const double half = hi / 2;
    for (auto [n, s1, q] : {std::tuple<std::int64_t, __int128, __int128>{2, y0 + y1, s2}, {1, 0, s2 * 1000},
                            {3, y1, 0}, {1, 0, 0}}) {
      const double sd = v.stddev(n, s1, q), var = v.variance(n, s1, q);
      EXPECT_TRUE(std::isfinite(sd)) << hi;
      EXPECT_GE(sd, 0);
      EXPECT_LE(sd, half);
      EXPECT_FALSE(std::isnan(var));
      EXPECT_GE(var, 0);
      EXPECT_LE(var, half * half);  // +inf only where half * half is
    }
    EXPECT_NEAR(v.stddev(2, y0 + y1, s2) / half, 1.0, 1e-5) << "rows 0 and hi: the largest spread (grid 2^-20)";
  }
}

TEST(MomentsPlan, EstimatorsAndClamping) {
  const MomentsPlan m(MomentsPlan::Kind::Mean, 1.0, 0, 10);
  EXPECT_EQ(m.mean(0, 123), m.mid);
  EXPECT_EQ(m.mean(-3, 123), m.mid);
  EXPECT_EQ(m.mean(1, static_cast<__int128>(1) << 100), 10.0);
  EXPECT_NEAR(m.mean(4, m.y(8) * 4), 8.0, m.g);
  const MomentsPlan v(MomentsPlan::Kind::Variance, 1.0, 0, 10);
  // Rows 0, 10: mean 5, variance 25.
  const std::int64_t y0 = v.y(0), y1 = v.y(10);
  EXPECT_NEAR(v.variance(2, y0 + y1, static_cast<__int128>(v.z(y0)) + v.z(y1)), 25.0, 1e-3);
  EXPECT_EQ(v.variance(0, 0, 0), 0.0);
  EXPECT_EQ(v.variance(1, 0, static_cast<__int128>(1) << 100), 25.0);  // clamped to ((upper - lower) / 2)^2
  EXPECT_EQ(v.variance(5, 0, -100), 0.0);
  EXPECT_NEAR(v.stddev(2, y0 + y1, static_cast<__int128>(v.z(y0)) + v.z(y1)), 5.0, 1e-4);
  EXPECT_EQ(v.stddev(1, 0, static_cast<__int128>(1) << 100), 5.0);  // clamped to (upper - lower) / 2
  EXPECT_EQ(v.stddev(0, 0, 0), 0.0);
  EXPECT_THROW(MomentsPlan(MomentsPlan::Kind::Mean, 0, 0, 1), std::invalid_argument);
  EXPECT_THROW(MomentsPlan(MomentsPlan::Kind::Mean, 1, 1, 0), std::invalid_argument);
}
