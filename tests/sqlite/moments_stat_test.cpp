// private_avg and private_var through SQL: unbiased within statistical error
// on data inside the bounds (many seeded releases; the data are large enough
// that the ratio estimators' bias is far below the tolerance).
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

// Two-sided p-value of the mean of xs against truth.
double p_value(const std::vector<double>& xs, double truth) {
  double s = 0, q = 0;
  for (double x : xs) s += x, q += x * x;
  const double n = static_cast<double>(xs.size()), mean = s / n, se = std::sqrt((q / n - mean * mean) / n);
  const double z = std::fabs(mean - truth) / se;
  return 2 * boost::math::cdf(boost::math::complement(boost::math::normal(), z));
}

}  // namespace

TEST(MomentsSql, MeanAndVarianceAreUnbiased) {
  Db db;
  db.exec("SELECT dp_seed(41)");
  make_groups(db);
  const double mean = db.reals("SELECT avg(x) FROM v")[0];
  const double var = db.reals("SELECT avg(x * x) - avg(x) * avg(x) FROM v")[0];
  const auto avgs = db.reals("SELECT private_avg(x, 0.5, 0, 100) FROM t GROUP BY g");
  const auto vars = db.reals("SELECT private_var(x, 0.5, 0, 100) FROM t GROUP BY g");
  const auto sds = db.reals("SELECT private_stddev(x, 0.5, 0, 100) FROM t GROUP BY g");
  ASSERT_EQ(avgs.size(), 2000u);
  EXPECT_GT(p_value(avgs, mean), 1e-4) << "mean " << mean;
  EXPECT_GT(p_value(vars, var), 1e-4) << "variance " << var;
  for (double s : sds) {
    ASSERT_GE(s, 0);
    ASSERT_LE(s, 50);
  }
  // A biased estimator must be caught: the mean against a truth off by 0.1.
  EXPECT_LT(p_value(avgs, mean + 0.1), 1e-4);
}
