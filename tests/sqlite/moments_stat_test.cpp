// private_avg and private_var through SQL: unbiased within statistical error
// on data inside the bounds (2000 seeded releases, one per group, each over
// the same 2000 values in [0, 100]; a z-test of their average against the
// true mean or variance, p-values from Boost.Math).
//
// Two sets of bounds: [0, 100], where the data are centred on mid = 50, and
// [-100, 100], where they lie 50 above mid, so that an error in the count's
// role or in the centring term (which centred data hide) shows.
//
// The estimators are ratios of noisy sums (docs/moments.md), so they are not
// exactly unbiased; with n = 2000 rows per release the bias is far below the
// test's standard error. At eps = 1 on [-100, 100]: the mean's standard error
// is about 0.003 and its bias about |mean - mid| Var(noise of n) / n^2 =
// 50 * 7.8 / 4e6 = 1e-4; the variance's standard error is about 0.5 and its
// bias below 0.1 (the S1 noise's square, 0.05, and the count's ratio terms,
// 0.05). A bias of 1/n of the centred mean (25 standard errors' worth of a
// count off by one row) fails the test.
#include <gtest/gtest.h>

#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "db.hpp"

using optdp::test::Db;

namespace {

// 2000 groups of the same 2000 values in [0, 100].
void make_groups(Db& db) {
  db.exec("CREATE TABLE v(x REAL); WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 1999) "
          "INSERT INTO v SELECT ((i * 7919) % 2000) * 0.05 FROM s;"
          "CREATE TABLE t(g, x); WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 1999) "
          "INSERT INTO t SELECT i, x FROM s, v;");
}

// Two-sided p-value of the mean of xs against truth (normal approximation).
double p_value(const std::vector<double>& xs, double truth) {
  double s = 0, q = 0;
  for (double x : xs) s += x, q += x * x;
  const double n = static_cast<double>(xs.size()), mean = s / n, se = std::sqrt((q / n - mean * mean) / n);
  const double z = std::fabs(mean - truth) / se;
  return 2 * boost::math::cdf(boost::math::complement(boost::math::normal(), z));
}

class MomentsSql : public ::testing::Test {
 protected:
  void SetUp() override {
    db.exec("SELECT dp_seed(41)");
    make_groups(db);
    mean = db.reals("SELECT avg(x) FROM v")[0];
    var = db.reals("SELECT avg((x - m) * (x - m)) FROM v, (SELECT avg(x) AS m FROM v)")[0];
  }
  std::vector<double> releases(const std::string& fn, const char* bounds) {
    return db.reals("SELECT " + fn + "(x, 1.0, " + bounds + ") FROM t GROUP BY g");
  }
  Db db;
  double mean = 0, var = 0;
};

}  // namespace

TEST_F(MomentsSql, MeanAndVarianceAreUnbiasedOnCentredData) {
  const auto avgs = releases("private_avg", "0, 100");
  const auto vars = releases("private_var", "0, 100");
  ASSERT_EQ(avgs.size(), 2000u);
  ASSERT_EQ(vars.size(), 2000u);
  EXPECT_GT(p_value(avgs, mean), 1e-4) << "mean " << mean;
  EXPECT_GT(p_value(vars, var), 1e-4) << "variance " << var;
  // The test has power: the mean against a truth off by 0.05 (about 15 standard errors).
  EXPECT_LT(p_value(avgs, mean + 0.05), 1e-4);
}

TEST_F(MomentsSql, MeanAndVarianceAreUnbiasedAwayFromMid) {
  const auto avgs = releases("private_avg", "-100, 100");
  const auto vars = releases("private_var", "-100, 100");
  EXPECT_GT(p_value(avgs, mean), 1e-4) << "mean " << mean;
  EXPECT_GT(p_value(vars, var), 1e-4) << "variance " << var;
  // A count off by one row would move the mean by (mean - mid) / n = 0.025.
  EXPECT_LT(p_value(avgs, mean + 0.025), 1e-4);
}

TEST_F(MomentsSql, StandardDeviationInRange) {
  const auto sds = releases("private_stddev", "-100, 100");
  ASSERT_EQ(sds.size(), 2000u);
  double s = 0;
  for (double x : sds) {
    ASSERT_GE(x, 0);
    ASSERT_LE(x, 100);
    s += x;
  }
  // sqrt of an unbiased variance is biased low (Jensen), by about Var(var) / (8 sd^3) = 0.001 here.
  EXPECT_NEAR(s / 2000, std::sqrt(var), 0.05);
}
