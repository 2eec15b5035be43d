// private_quantile and private_median through SQL: outputs against the exact
// law of the exponential mechanism (chi-square over unit bins), the utility
// bound, outputs on the grid and inside the bounds.
#include <gtest/gtest.h>

#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "core/quantile.hpp"
#include "db.hpp"
#include "stats.hpp"

using optdp::test::Db;

namespace {

// 2000 groups of the same 200 values in [0, 10): 0.05, 0.1, ... (with repeats).
void make_groups(Db& db, int groups) {
  db.exec("CREATE TABLE v(x REAL); WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 199) "
          "INSERT INTO v SELECT ((i * 37) % 200) * 0.05 FROM s;"
          "CREATE TABLE t(g, x); WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < " +
          std::to_string(groups - 1) + ") INSERT INTO t SELECT i, x FROM s, v;");
}

std::vector<std::int64_t> buckets_of(Db& db, const optdp::QuantileGrid& grid) {
  std::vector<std::int64_t> b(static_cast<std::size_t>(grid.candidates()) + 1, 0);
  for (double x : db.reals("SELECT x FROM v")) ++b[static_cast<std::size_t>(grid.bucket(x))];
  return b;
}

}  // namespace

TEST(QuantileSql, MatchesTheExactLaw) {
  Db db;
  db.exec("SELECT dp_seed(31)");
  make_groups(db, 2000);
  for (double q : {0.5, 0.8}) {
    const std::string sql = q == 0.5 ? "SELECT private_median(x, 0.5, 0, 10) FROM t GROUP BY g"
                                     : "SELECT private_quantile(x, 0.8, 0.5, 0, 10) FROM t GROUP BY g";
    const auto out = db.reals(sql);
    ASSERT_EQ(out.size(), 2000u);
    const optdp::QuantileGrid grid(0, 10);
    const auto law = optdp::quantile_probabilities(buckets_of(db, grid), q, 0.5);  // p_j / sum p
    // Unit bins [k, k + 1), k = 0..9, and the point 10.
    std::vector<double> p(11, 0.0);
    for (std::int64_t j = 0; j < grid.candidates(); ++j)
      p[static_cast<std::size_t>(std::floor(grid.candidate(j)))] += law[static_cast<std::size_t>(j)];
    std::vector<std::int64_t> counts(11, 0);
    for (double c : out) {
      ASSERT_GE(c, 0);
      ASSERT_LE(c, 10);
      ASSERT_EQ(std::fmod(c, grid.g()), 0.0) << c << " is not on the grid";
      ++counts[static_cast<std::size_t>(std::floor(c))];
    }
    const auto r = optdp::test::chi_square(counts, 0, [&](std::int64_t k) { return p[static_cast<std::size_t>(k)]; }, 0, 0);
    EXPECT_GT(r.p_value, 1e-4) << "q " << q << " chi2 " << r.statistic << " dof " << r.dof;
  }
}

// The mean rank error |#{x < out} - q n| of the releases is the law's.
TEST(QuantileSql, MeanRankErrorIsTheLaws) {
  Db db;
  db.exec("SELECT dp_seed(34)");
  make_groups(db, 2000);
  const optdp::QuantileGrid grid(0, 10);
  const auto buckets = buckets_of(db, grid);
  const double q = 0.7, n = 200;
  std::vector<double> err(static_cast<std::size_t>(grid.candidates()));
  double s = 0;
  for (std::size_t j = 0; j < err.size(); ++j) s += static_cast<double>(buckets[j]), err[j] = std::fabs(s - q * n);
  const auto law = optdp::quantile_probabilities(buckets, q, 0.25);
  double mean = 0, second = 0;
  for (std::size_t j = 0; j < err.size(); ++j) mean += law[j] * err[j], second += law[j] * err[j] * err[j];
  const double se = std::sqrt((second - mean * mean) / 2000);
  const auto out = db.reals("SELECT private_quantile(x, 0.7, 0.25, 0, 10) FROM t GROUP BY g");
  double got = 0;
  for (double c : out) got += err[static_cast<std::size_t>(std::llround((c - grid.candidate(0)) / grid.g()))];
  got /= static_cast<double>(out.size());
  std::printf("[quantile] mean rank error %.3f, law %.3f (se %.3f)\n", got, mean, se);
  EXPECT_NEAR(got, mean, 5 * se);
}

// The exponential mechanism's utility: with probability >= 1 - beta the rank
// error |#{x < out} - q n| is at most OPT + (2 / eps)(ln m + ln(1 / beta)),
// m the number of candidates.
TEST(QuantileSql, RankErrorWithinTheBound) {
  Db db;
  db.exec("SELECT dp_seed(32)");
  make_groups(db, 2000);
  const double eps = 1.0, q = 0.3, beta = 0.05;
  const optdp::QuantileGrid grid(0, 10);
  std::vector<double> xs = db.reals("SELECT x FROM v");
  auto rank_error = [&](double c) {
    double below = 0;
    for (double x : xs) below += x < c;
    return std::fabs(below - q * static_cast<double>(xs.size()));
  };
  double opt = 1e300;
  for (std::int64_t j = 0; j < grid.candidates(); ++j) opt = std::fmin(opt, rank_error(grid.candidate(j)));
  const double bound = opt + 2 / eps * (std::log(static_cast<double>(grid.candidates())) + std::log(1 / beta));
  const auto out = db.reals("SELECT private_quantile(x, 0.3, 1.0, 0, 10) FROM t GROUP BY g");
  std::int64_t over = 0;
  for (double c : out) over += rank_error(c) > bound;
  const boost::math::binomial_distribution<> b(static_cast<double>(out.size()), beta);
  const double p = over == 0 ? 1.0 : boost::math::cdf(boost::math::complement(b, static_cast<double>(over - 1)));
  std::printf("[quantile] OPT %g, bound %g, %lld of %zu releases beyond it\n", opt, bound,
              static_cast<long long>(over), out.size());
  EXPECT_GT(p, 1e-4) << over << " of " << out.size() << " releases beyond the bound " << bound;
}

TEST(QuantileSql, EmptyInputIsUniformOverTheGrid) {
  Db db;
  db.exec("SELECT dp_seed(33); CREATE TABLE e(x);");
  std::vector<std::int64_t> counts(4, 0);
  for (int i = 0; i < 2000; ++i) {
    const double c = db.reals("SELECT private_median(x, 1.0, 0, 4) FROM e")[0];
    ASSERT_GE(c, 0);
    ASSERT_LE(c, 4);
    ++counts[std::min<std::size_t>(3, static_cast<std::size_t>(c))];
  }
  const optdp::QuantileGrid grid(0, 4);
  std::vector<double> p(4, 0.0);
  for (std::int64_t j = 0; j < grid.candidates(); ++j)
    p[std::min<std::size_t>(3, static_cast<std::size_t>(grid.candidate(j)))] += 1.0 / static_cast<double>(grid.candidates());
  const auto r = optdp::test::chi_square(counts, 0, [&](std::int64_t k) { return p[static_cast<std::size_t>(k)]; }, 0, 0);
  EXPECT_GT(r.p_value, 1e-4);
}
