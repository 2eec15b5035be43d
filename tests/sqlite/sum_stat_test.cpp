// staircase_sum and laplace_sum through SQL: the noise has the expected cost
// (noise_cost), outputs lie on the grid, clamping, exact integer sums, empty input.
#include <gtest/gtest.h>

#include <cmath>

#include "db.hpp"
#include "stats.hpp"

using optdp::test::Db;

namespace {

// 20000 groups of 3 rows whose values are 0, 0.5, 1 (all on every grid used
// here): the true sum of each group is 1.5.
void make_groups(Db& db) {
  db.exec("CREATE TABLE t(g, x); WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s WHERE i < 59999) "
          "INSERT INTO t SELECT i / 3, (i % 3) * 0.5 FROM s;");
}

struct Moments {
  double mean, se;
};
Moments moments(const std::vector<double>& v) {
  double s = 0, q = 0;
  for (double x : v) s += x, q += x * x;
  const double n = static_cast<double>(v.size()), mean = s / n;
  return {mean, std::sqrt((q / n - mean * mean) / n)};
}

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

}  // namespace

TEST(SumSql, StaircaseNoiseHasTheExpectedCost) {
  Db db;
  db.exec("SELECT dp_seed(11)");
  make_groups(db);
  for (double eps : {0.5, 1.0, 3.0, 6.0}) {
    for (const char* cost : {"l1", "l2"}) {
      const auto sums = db.reals("SELECT staircase_sum(x, " + num(eps) + ", 0, 1, '" + cost + "') FROM t GROUP BY g");
      ASSERT_EQ(sums.size(), 20000u);
      std::vector<double> c;
      for (double s : sums) c.push_back(std::string(cost) == "l1" ? std::abs(s - 1.5) : (s - 1.5) * (s - 1.5));
      const double expected = db.reals("SELECT noise_cost('staircase', " + num(eps) + ", 1, '" + cost + "')")[0];
      const auto m = moments(c);
      EXPECT_NEAR(m.mean, expected, 5 * m.se) << "eps=" << eps << " cost=" << cost;
    }
  }
}

TEST(SumSql, LaplaceNoiseHasTheExpectedCostAndStaircaseBeatsIt) {
  Db db;
  db.exec("SELECT dp_seed(12)");
  make_groups(db);
  for (double eps : {1.0, 3.0}) {
    const auto lap = db.reals("SELECT laplace_sum(x, " + num(eps) + ", 0, 1) FROM t GROUP BY g");
    std::vector<double> c;
    for (double s : lap) c.push_back(std::abs(s - 1.5));
    const auto m = moments(c);
    EXPECT_NEAR(m.mean, 1 / eps, 5 * m.se) << eps;  // Laplace E|X| = delta / eps
    const auto st = db.reals("SELECT staircase_sum(x, " + num(eps) + ", 1) FROM t GROUP BY g");
    std::vector<double> cs;
    for (double s : st) cs.push_back(std::abs(s - 1.5));
    EXPECT_LT(moments(cs).mean, m.mean) << eps;
  }
}

TEST(SumSql, OutputsLieOnTheGrid) {
  Db db;
  db.exec("SELECT dp_seed(13)");
  db.exec("CREATE TABLE v(x); INSERT INTO v VALUES (0.1), (0.2), (0.30000000000000004), (1e-300), (3.14159);");
  for (auto [eps, lo, hi] : {std::tuple{1.0, 0.0, 1.0}, {0.3, -2.0, 7.5}, {8.0, 0.0, 100.0}}) {
    const double g = db.reals("SELECT dp_sum_grid(" + num(eps) + ", " + num(lo) + ", " + num(hi) + ")")[0];
    int e;
    ASSERT_EQ(std::frexp(g, &e), 0.5);
    for (int i = 0; i < 200; ++i) {
      for (const char* f : {"staircase_sum", "laplace_sum"}) {
        const double s =
            db.reals(std::string("SELECT ") + f + "(x, " + num(eps) + ", " + num(lo) + ", " + num(hi) + ") FROM v")[0];
        ASSERT_EQ(std::fmod(s, g), 0.0) << f << " " << s << " grid " << g;
      }
    }
  }
}

TEST(SumSql, ClampsEveryRowAndSumsIntegersExactly) {
  Db db;
  db.exec("CREATE TABLE v(x); INSERT INTO v VALUES (-5), (3), (20), (NULL), (7);");
  // At eps = 60 the staircase noise is 0 except with probability ~1e-14.
  EXPECT_EQ(db.reals("SELECT staircase_sum(x, 60, 0, 10) FROM v")[0], 0 + 3 + 10 + 7);
  EXPECT_EQ(db.reals("SELECT staircase_sum(x, 60, 10) FROM v")[0], 0 + 3 + 10 + 7);
  EXPECT_EQ(db.reals("SELECT staircase_sum(x, 60, 4, 6) FROM v")[0], 4 + 4 + 6 + 6);
  EXPECT_EQ(db.reals("SELECT staircase_sum(x, 60, -100, 100) FROM v")[0], -5 + 3 + 20 + 7);
  // Large integers with integer bounds (width <= 2^21) stay exact.
  db.exec("CREATE TABLE big(x); INSERT INTO big VALUES (1000000), (999999), (1048576);");
  EXPECT_EQ(db.reals("SELECT staircase_sum(x, 60, 0, 2000000) FROM big")[0], 1000000.0 + 999999 + 1048576);
}

TEST(SumSql, EmptyInputIsZeroPlusNoise) {
  Db db;
  db.exec("SELECT dp_seed(14); CREATE TABLE e(x);");
  std::vector<double> c;
  for (int i = 0; i < 4000; ++i) c.push_back(std::abs(db.reals("SELECT staircase_sum(x, 1.0, 2.0) FROM e")[0]));
  const auto m = moments(c);
  EXPECT_NEAR(m.mean, 2 * 0.959517375667472, 5 * m.se);
}

// Bounds that exclude 0: adding or removing a row moves the sum by up to
// max(|lower|, |upper|), so the noise is that of sensitivity
// Delta = max(upper - lower, |lower|, |upper|) = 3 for [2, 3], and
// noise_cost(..., Delta, ...) predicts it (docs/sums.md).
TEST(SumSql, BoundsExcludingZeroUseTheirSensitivity) {
  Db db;
  db.exec("SELECT dp_seed(13)");
  db.exec("CREATE TABLE one(g INTEGER, x REAL)");
  db.exec("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 19999) "
          "INSERT INTO one SELECT i, 2.5 FROM s");
  for (double eps : {1.0, 3.0}) {
    for (const char* f : {"staircase_sum", "laplace_sum"}) {
      const auto sums = db.reals(std::string("SELECT ") + f + "(x, " + num(eps) + ", 2, 3) FROM one GROUP BY g");
      ASSERT_EQ(sums.size(), 20000u);
      std::vector<double> c;
      for (double s : sums) c.push_back(std::abs(s - 2.5));
      const double expected = db.reals(std::string("SELECT noise_cost('") +
                                       (std::string(f) == "laplace_sum" ? "laplace" : "staircase") + "', " +
                                       num(eps) + ", 3, 'l1')")[0];
      const auto m = moments(c);
      EXPECT_NEAR(m.mean, expected, 5 * m.se) << f << " eps=" << eps;
    }
  }
}
