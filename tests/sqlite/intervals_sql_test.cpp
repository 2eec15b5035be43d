// The intervals through SQL: seeded releases of each randomised function fall
// within the interval its SQL function gives at least as often as the
// confidence (a one-sided binomial test, Boost.Math), around the clamped
// statistic; private_groups' columns likewise, the mean's included.
#include <gtest/gtest.h>

#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <cstdio>
#include <string>

#include "db.hpp"

using optdp::test::Db;
using optdp::test::TempFile;

namespace {

double coverage_p(int inside, int n, double confidence) {
  return boost::math::cdf(boost::math::binomial(n, confidence), inside);
}

constexpr int kN = 3000;

}  // namespace

TEST(IntervalsSql, CountsAndLevelsCoverTheirCount) {
  Db db;
  db.exec("SELECT dp_seed(31); CREATE TABLE t(x); INSERT INTO t VALUES (1),(2),(NULL),(4),(5),(6);");
  for (double c : {0.8, 0.95}) {
    const auto h = db.one_int("SELECT count_interval(0.7, " + std::to_string(c) + ")");
    const auto h2 = db.one_int("SELECT count_interval(0.9, " + std::to_string(c) + ")");
    int inside = 0, inside_level = 0;
    for (int i = 0; i < kN; ++i) {
      inside += std::llabs(db.one_int("SELECT private_count(0.7) FROM t") - 6) <= h;
      // The second level of a levels release has the law of private_count(0.9).
      inside_level +=
          std::llabs(db.one_int("SELECT json_extract(private_count_levels_of(x, 0.7, 0.9), '$[1]') FROM t") - 5) <= h2;
    }
    EXPECT_GT(coverage_p(inside, kN, c), 1e-6) << c << ": " << inside;
    EXPECT_GT(coverage_p(inside_level, kN, c), 1e-6) << c << ": " << inside_level;
  }
}

TEST(IntervalsSql, SumsCoverTheClampedSum) {
  Db db;
  db.exec("SELECT dp_seed(32); CREATE TABLE t(x); INSERT INTO t VALUES (1),(2.5),(40),(-3),(7);");  // 40 -> 10, -3 -> 0
  const double clamped = 1 + 2.5 + 10 + 0 + 7;
  for (const char* mech : {"staircase", "laplace"}) {
    for (double c : {0.8, 0.95}) {
      const double h = db.one_real(std::string("SELECT sum_interval('") + mech + "', 0.5, 0, 10, " +
                                   std::to_string(c) + ")");
      int inside = 0;
      for (int i = 0; i < kN; ++i)
        inside += std::fabs(db.one_real(std::string("SELECT ") + mech + "_sum(x, 0.5, 0, 10) FROM t") - clamped) <= h;
      EXPECT_GT(coverage_p(inside, kN, c), 1e-6) << mech << " " << c << ": " << inside;
    }
  }
}

TEST(IntervalsSql, PrivateGroupsColumnsCoverCountSumAndMean) {
  TempFile file;
  Db db(file.path());
  // Units 1..40, each one row in key u % 2 with value u % 7: known per-key count, sum and mean.
  db.exec("SELECT dp_seed(33); CREATE TABLE r(u, k, v);"
          "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 40) "
          "INSERT INTO r SELECT i, i % 2, i % 7 FROM s;");
  double count[2] = {}, sum[2] = {};
  for (int u = 1; u <= 40; ++u) count[u % 2] += 1, sum[u % 2] += u % 7;
  const std::string q = "SELECT key, count, sum, count_halfwidth, sum_halfwidth, mean_low, mean_high FROM "
                        "private_groups('SELECT u, k, v FROM r ORDER BY 1', 2.0, 'lower=0, upper=6, confidence=0.9', "
                        "'VALUES (0), (1)')";
  int in_count = 0, in_sum = 0, in_mean = 0, n = 0;
  for (int i = 0; i < 1000; ++i) {
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db.get(), q.c_str(), -1, &st, nullptr), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
      const int k = sqlite3_column_int(st, 0);
      ++n;
      in_count += std::llabs(sqlite3_column_int64(st, 1) - static_cast<std::int64_t>(count[k])) <= sqlite3_column_int64(st, 3);
      in_sum += std::fabs(sqlite3_column_double(st, 2) - sum[k]) <= sqlite3_column_double(st, 4);
      const double mean = sum[k] / count[k];
      in_mean += sqlite3_column_double(st, 5) <= mean && mean <= sqlite3_column_double(st, 6);
    }
    sqlite3_finalize(st);
  }
  EXPECT_EQ(n, 2000);
  EXPECT_GT(coverage_p(in_count, n, 0.9), 1e-6) << in_count;
  EXPECT_GT(coverage_p(in_sum, n, 0.9), 1e-6) << in_sum;
  EXPECT_GT(coverage_p(in_mean, n, 0.9), 1e-6) << in_mean;
}
