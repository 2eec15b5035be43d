// private_select through SQL: the frequencies of the chosen candidates match
// selection_probabilities (chi-square), for both methods; the quantities the
// law depends on (eps, sensitivity) are the ones given.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "db.hpp"
#include "stats.hpp"

using optdp::test::Db;

namespace {

// 20000 groups g, each with the candidates 0..7 and the same scores.
constexpr const char* kScores = "[1, 5, 3, 5, 0, 4.5, -2, 5]";

void make_groups(Db& db) {
  db.exec(
      "CREATE TABLE s(k INTEGER, score REAL);"
      "INSERT INTO s SELECT key, value FROM json_each('" + std::string(kScores) + "');"
      "CREATE TABLE c(g, k, score);"
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 19999) "
      "INSERT INTO c SELECT i, k, score FROM n, s;");
}

void check(const std::string& args, const std::string& law_args, std::int64_t seed) {
  Db db;
  db.exec("SELECT dp_seed(" + std::to_string(seed) + ")");
  make_groups(db);
  const auto chosen = db.ints("SELECT private_select(k, score, " + args + ") FROM c GROUP BY g");
  ASSERT_EQ(chosen.size(), 20000u);
  const auto law = db.reals("SELECT probability FROM selection_probabilities('" + std::string(kScores) + "', " +
                            law_args + ") ORDER BY candidate");
  ASSERT_EQ(law.size(), 8u);
  std::vector<std::int64_t> counts(8, 0);
  for (auto k : chosen) ++counts[static_cast<std::size_t>(k)];
  const auto r = optdp::test::chi_square(counts, 0, [&](std::int64_t v) { return law[static_cast<std::size_t>(v)]; }, 0, 0);
  EXPECT_GT(r.p_value, 1e-4) << args << ": chi2 " << r.statistic << " dof " << r.dof;
}

}  // namespace

TEST(SelectSql, PermuteAndFlipMatchesItsLaw) { check("1.0", "1.0", 21); }
TEST(SelectSql, ExponentialMatchesItsLaw) { check("1.0, 1, 'exponential'", "1.0, 1, 'exponential'", 22); }
TEST(SelectSql, SensitivityScalesTheLaw) { check("3.0, 2.5, 'permute_and_flip'", "3.0, 2.5", 23); }

// A wrong law must be told apart: the frequencies of eps = 1 against the law of eps = 2.
TEST(SelectSql, TheTestTellsLawsApart) {
  Db db;
  db.exec("SELECT dp_seed(24)");
  make_groups(db);
  const auto chosen = db.ints("SELECT private_select(k, score, 1.0) FROM c GROUP BY g");
  const auto law = db.reals("SELECT probability FROM selection_probabilities('" + std::string(kScores) +
                            "', 2.0) ORDER BY candidate");
  std::vector<std::int64_t> counts(8, 0);
  for (auto k : chosen) ++counts[static_cast<std::size_t>(k)];
  const auto r = optdp::test::chi_square(counts, 0, [&](std::int64_t v) { return law[static_cast<std::size_t>(v)]; }, 0, 0);
  EXPECT_LT(r.p_value, 1e-6);
}
