// Private mean and variance (core/moments.hpp, docs/moments.md): the grid,
// the sensitivities the noise is calibrated to, checked by brute force over
// the values a row can take, and the estimators.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

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
  EXPECT_THROW(MomentsPlan(MomentsPlan::Kind::Mean, 0, 0, 1), std::invalid_argument);
  EXPECT_THROW(MomentsPlan(MomentsPlan::Kind::Mean, 1, 1, 0), std::invalid_argument);
}
