// private_count through SQL follows the two-sided geometric law: thousands of
// private counts of a known table, chi-square against the exact pmf.
#include <gtest/gtest.h>

#include <cmath>

#include "db.hpp"
#include "stats.hpp"

using optdp::test::Db;

namespace {

double two_sided_pmf(double alpha, std::int64_t z) {
  return (1 - alpha) / (1 + alpha) * std::pow(alpha, static_cast<double>(std::llabs(z)));
}

void expect_two_sided(const std::vector<std::int64_t>& noise, double alpha, const char* what) {
  auto chi = optdp::test::chi_square_samples(noise, [alpha](std::int64_t z) { return two_sided_pmf(alpha, z); });
  EXPECT_GT(chi.p_value, 1e-4) << what << " alpha=" << alpha << " chi2=" << chi.statistic << " dof=" << chi.dof;
}

}  // namespace

TEST(PrivateCountSql, ManyGroupsFollowTwoSidedGeometric) {
  for (double alpha : {0.5, 0.9}) {
    Db db;
    db.exec("SELECT dp_seed(1)");
    // 20000 groups of 7 rows each.
    db.exec("CREATE TABLE t(g, x); WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s WHERE i < 139999) "
            "INSERT INTO t SELECT i / 7, i FROM s;");
    auto counts = db.ints("SELECT private_count(" + std::to_string(alpha) + ") FROM t GROUP BY g");
    ASSERT_EQ(counts.size(), 20000u);
    for (auto& c : counts) c -= 7;
    expect_two_sided(counts, alpha, "GROUP BY");
  }
}

TEST(PrivateCountSql, RepeatedQueriesFollowTwoSidedGeometric) {
  Db db;
  db.exec("SELECT dp_seed(2)");
  db.exec("CREATE TABLE t(x); INSERT INTO t VALUES (1),(NULL),(3),(4),(NULL);");
  std::vector<std::int64_t> full, nonnull;
  for (int i = 0; i < 5000; ++i) {
    full.push_back(db.one_int("SELECT private_count(0.5) FROM t") - 5);
    nonnull.push_back(db.one_int("SELECT private_count(x, 0.5) FROM t") - 3);
  }
  expect_two_sided(full, 0.5, "private_count(alpha)");
  expect_two_sided(nonnull, 0.5, "private_count(x, alpha)");
}

TEST(PrivateCountSql, EmptyInputIsZeroPlusNoise) {
  Db db;
  db.exec("SELECT dp_seed(3)");
  db.exec("CREATE TABLE t(x)");
  std::vector<std::int64_t> noise;
  for (int i = 0; i < 5000; ++i) noise.push_back(db.one_int("SELECT private_count(0.75) FROM t"));
  expect_two_sided(noise, 0.75, "empty input");
}

TEST(PrivateCountSql, LeftJoinFromPublicKeysCountsNonNull) {
  Db db;
  db.exec("SELECT dp_seed(4)");
  db.exec("CREATE TABLE keys(k); INSERT INTO keys VALUES ('a'),('b'),('c');"
          "CREATE TABLE t(k, v); INSERT INTO t VALUES ('a',1),('a',2),('c',3);");
  // With a tiny alpha the noise is 0 except with probability ~2e-300.
  auto c = db.ints("SELECT private_count(t.v, 1e-300) FROM keys LEFT JOIN t USING (k) GROUP BY keys.k ORDER BY keys.k");
  EXPECT_EQ(c, (std::vector<std::int64_t>{2, 0, 1}));
  std::vector<std::int64_t> noise;  // 'b' has no rows: still 0 + noise
  for (int i = 0; i < 3000; ++i) {
    auto v = db.ints("SELECT private_count(t.v, 0.5) FROM keys LEFT JOIN t USING (k) WHERE keys.k = 'b' GROUP BY keys.k");
    ASSERT_EQ(v.size(), 1u);
    noise.push_back(v[0]);
  }
  expect_two_sided(noise, 0.5, "LEFT JOIN empty key");
}

TEST(PrivateCountSql, SeedMakesResultsReproducible) {
  Db a, b;
  a.exec("SELECT dp_seed(77)");
  b.exec("SELECT dp_seed(77)");
  for (int i = 0; i < 50; ++i)
    ASSERT_EQ(a.one_int("SELECT private_count(0.9) FROM (SELECT 1)"), b.one_int("SELECT private_count(0.9) FROM (SELECT 1)"));
}
