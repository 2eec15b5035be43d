// The Gaussian releases through SQL (gaussian_count, gaussian_sum) and the
// ledger's zCDP accounting: their laws against the exact discrete Gaussian
// (chi-square), the paired-neighbour audit with delta (P1 <= e^eps P0 + delta,
// docs/audit.md), and a ledger at its limit refusing before anything is
// released, under every accounting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "audit.hpp"
#include "core/accounting.hpp"
#include "db.hpp"
#include "stats.hpp"

using optdp::test::Db;
using optdp::test::TempFile;

namespace {

// The exact discrete Gaussian pmf with sigma^2 = s2, normalised over |z| <= 40 sigma + 10.
struct DiscreteGaussianPmf {
  double s2, norm = 0;
  explicit DiscreteGaussianPmf(double s2_) : s2(s2_) {
    const auto m = static_cast<std::int64_t>(40 * std::sqrt(s2) + 10);
    for (std::int64_t z = -m; z <= m; ++z) norm += std::exp(-static_cast<double>(z * z) / (2 * s2));
  }
  double operator()(std::int64_t z) const { return std::exp(-static_cast<double>(z * z) / (2 * s2)) / norm; }
};

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

}  // namespace

TEST(GaussianSql, CountFollowsTheDiscreteGaussian) {
  for (double rho : {0.5, 0.02, 0.0005}) {  // sigma = 1, 5, 31.6
    Db db;
    db.exec("SELECT dp_seed(11)");
    db.exec("CREATE TABLE t(x); INSERT INTO t VALUES (1),(NULL),(3),(4),(NULL);");
    std::vector<std::int64_t> full, nonnull, empty;
    for (int i = 0; i < 4000; ++i) {
      full.push_back(db.one_int("SELECT gaussian_count(" + num(rho) + ") FROM t") - 5);
      nonnull.push_back(db.one_int("SELECT gaussian_count(x, " + num(rho) + ") FROM t") - 3);
      empty.push_back(db.one_int("SELECT gaussian_count(" + num(rho) + ") FROM t WHERE x > 100"));
    }
    const DiscreteGaussianPmf pmf(1 / (2 * rho));
    for (const auto* s : {&full, &nonnull, &empty}) {
      auto chi = optdp::test::chi_square_samples(*s, pmf);
      EXPECT_GT(chi.p_value, 1e-4) << "rho=" << rho << " chi2=" << chi.statistic << " dof=" << chi.dof;
    }
    // The test can fail: the same samples against a sigma 20% larger.
    auto wrong = optdp::test::chi_square_samples(full, DiscreteGaussianPmf(1.44 / (2 * rho)));
    EXPECT_LT(wrong.p_value, 1e-4) << "rho=" << rho;
  }
}

TEST(GaussianSql, SumLiesOnTheGridWithTheDiscreteGaussiansSpread) {
  Db db;
  db.exec("SELECT dp_seed(12)");
  db.exec("CREATE TABLE t(x); INSERT INTO t VALUES (0.1),(2.5),(7),(NULL),(12);");  // 12 clamps to 10
  const double rho = 0.125, lower = 0, upper = 10;
  // The grid: dp_sum_grid at eps = sqrt(2 rho) (gaussian.cpp).
  const double g = db.one_real("SELECT dp_sum_grid(" + num(std::sqrt(2 * rho)) + ", 0, 10)");
  const double exact = std::nearbyint(0.1 / g) * g + 2.5 + 7 + 10;
  const double D = std::nearbyint((upper - lower) / g);
  const double sigma2 = D * D / (2 * rho);
  std::vector<double> z;
  for (int i = 0; i < 4000; ++i) {
    const double v = db.one_real("SELECT gaussian_sum(x, 0.125, 0, 10) FROM t");
    ASSERT_EQ(v / g, std::nearbyint(v / g)) << v << " is not on the grid " << g;
    z.push_back((v - exact) / g);
  }
  // Mean 0 and variance sigma^2 (the discrete Gaussian's variance is within
  // 1e-300 relative of sigma^2 at this sigma): z-test and chi-square test.
  double s = 0, ss = 0;
  for (double v : z) s += v, ss += v * v;
  const double n = static_cast<double>(z.size());
  EXPECT_LT(std::fabs(s / n) / std::sqrt(sigma2 / n), 4.5);
  const double chi2 = ss / sigma2;  // ~ chi-square with n dof: mean n, sd sqrt(2n)
  EXPECT_LT(std::fabs(chi2 - n) / std::sqrt(2 * n), 4.5) << "variance " << ss / n << " vs " << sigma2;
}

// ---- the audit with delta ------------------------------------------------------

namespace {

optdp::test::AuditResult audit_gaussian(const std::string& query, double delta, const std::string& label) {
  using namespace optdp::test;
  const std::string a = "(1),(1),(1)", b = "(1),(1),(1),(1)";  // neighbours: one row (a unit) more
  const std::int64_t seed = seed_of(query + label);
  const Releases pa = draw_releases(a, query, seed, n_pilot(), 1), pb = draw_releases(b, query, seed + 1, n_pilot(), 1);
  const auto events = threshold_events(pa, pb);
  const Releases ma = draw_releases(a, query, seed + 2, n_main(), 1), mb = draw_releases(b, query, seed + 3, n_main(), 1);
  auto r = audit_eps(ma, mb, events, kPairBeta, delta);
  std::printf("[audit] %s: %s | delta %g | %s\n", label.c_str(), query.c_str(), delta, r.summary().c_str());
  return r;
}

}  // namespace

TEST(GaussianAudit, CountIsEpsDeltaAsTheLedgerCountsIt) {
  for (double rho : {0.5, 0.125}) {
    for (double delta : {1e-2, 1e-3}) {
      const double claim = optdp::zcdp::epsilon_of_rho(rho, delta);
      const auto r = audit_gaussian("SELECT gaussian_count(" + num(rho) + ") FROM t", delta, "count");
      EXPECT_LE(r.eps_lb, claim) << "rho " << rho << " delta " << delta << "\n" << r.summary();
    }
  }
}

TEST(GaussianAudit, SelfCheckCatchesRhoClaimedAtAQuarter) {
  // gaussian_count(2.0) (sigma = 0.5) claimed as rho 0.125 (sigma 2): caught.
  const double delta = 1e-2, claim = optdp::zcdp::epsilon_of_rho(0.125, delta);
  const auto r = audit_gaussian("SELECT gaussian_count(2.0) FROM t", delta, "self-check");
  EXPECT_GT(r.eps_lb, claim) << r.summary();
}

// ---- the ledger ------------------------------------------------------------------

TEST(GaussianLedger, AtItsLimitEveryAccountingRefusesBeforeAnyRelease) {
  TempFile ledger;
  Db db;
  db.exec("CREATE TABLE t(x); INSERT INTO t VALUES (1),(2);");
  db.exec("SELECT dp_ledger_attach('" + std::string(ledger.path()) + "', 1.0, 1e-6)");
  // The count with the least noise the ledger takes: it alone fills the
  // budget by its privacy curve (more than dp_rho, zCDP's largest rho, which
  // the curve no longer refuses).
  const double sigma = db.one_real("SELECT dp_gaussian_sigma(1)");
  const double rho = 1 / (2 * sigma * sigma);
  EXPECT_GT(rho, db.one_real("SELECT dp_rho(1.0, 1e-6)"));
  db.exec("SELECT gaussian_count(" + num(rho) + ") FROM t");
  // Everything further is refused, before any row (a value in the select list
  // would run per row: none does), and nothing is recorded.
  for (const char* q : {"SELECT gaussian_count(1e-5) FROM t", "SELECT private_count(0.999) FROM t",
                        "SELECT gaussian_sum(x, 1e-5, 0, 1) FROM t", "SELECT staircase_sum(x, 1e-3, 1) FROM t"}) {
    try {
      db.exec(q);
      ADD_FAILURE() << q << " was released";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("privacy budget exhausted"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(db.one_int("SELECT count(*) FROM dp_ledger_entries"), 1);
  EXPECT_EQ(db.one_int("SELECT dp_further_releases('gaussian', 1000)"), 0);
  EXPECT_EQ(db.one_int("SELECT fits FROM dp_ledger_accounts WHERE accounting = 'pld'"), 1);
  EXPECT_EQ(db.one_int("SELECT fits FROM dp_ledger_accounts WHERE accounting = 'zcdp'"), 0);
}

TEST(GaussianLedger, PlanningAgreesWithWhatTheLedgerThenAccepts) {
  TempFile ledger;
  Db db;
  db.exec("CREATE TABLE t(x); INSERT INTO t VALUES (1);");
  db.exec("SELECT dp_ledger_attach('" + std::string(ledger.path()) + "', 1.0, 1e-6)");
  // Counts with noise standard deviation 20: 19 by zCDP, more by the privacy
  // curve (each charge past zCDP evaluates it: at sd 200 the 2,241 counts,
  // Pld.ComposedDiscreteGaussianCountsAtSigma200, would make this test slow).
  const std::int64_t k = db.one_int("SELECT dp_further_releases('gaussian', 20)");
  EXPECT_GT(k, 19);
  const double rho = 1.0 / (2 * 20.0 * 20.0);
  // Spend all but 3 of them; then exactly 3 more are accepted and the next refused.
  for (std::int64_t i = 0; i < k - 3; ++i) db.exec("SELECT gaussian_count(" + num(rho) + ") FROM t");
  EXPECT_EQ(db.one_int("SELECT dp_further_releases('gaussian', 20)"), 3);
  for (int i = 0; i < 3; ++i) db.exec("SELECT gaussian_count(" + num(rho) + ") FROM t");
  EXPECT_THROW(db.exec("SELECT gaussian_count(" + num(rho) + ") FROM t"), std::runtime_error);
  EXPECT_EQ(db.one_int("SELECT count(*) FROM dp_ledger_entries"), k);
  // One more fits only with more noise than 20, and with it the ledger accepts it.
  const double sigma = db.one_real("SELECT dp_gaussian_sigma(1)");
  EXPECT_GT(sigma, 20);
  db.exec("SELECT gaussian_count(" + num(1 / (2 * sigma * sigma)) + ") FROM t");
}

// Gaussian entries without a shift (a ledger file written before the column:
// its default, 0) leave the history to zCDP and basic composition: the
// counts the privacy curve allows past zCDP are refused then (this test fails
// if an entry without a shift were given one).
TEST(GaussianLedger, EntriesWithoutAShiftAreAccountedByZcdpAlone) {
  TempFile ledger;
  Db db;
  db.exec("CREATE TABLE t(x); INSERT INTO t VALUES (1);");
  db.exec("SELECT dp_ledger_attach('" + std::string(ledger.path()) + "', 1.0, 1e-6)");
  const double rho = 1.0 / (2 * 20.0 * 20.0);
  for (int i = 0; i < 19; ++i) db.exec("SELECT gaussian_count(" + num(rho) + ") FROM t");  // zCDP's 19
  EXPECT_GT(db.one_int("SELECT dp_further_releases('gaussian', 20)"), 0);  // by the curve
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(ledger.path(), &raw), SQLITE_OK);
    sqlite3_busy_timeout(raw, 10000);
    EXPECT_EQ(sqlite3_exec(raw, "UPDATE optdp_charges SET shift = 0", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
  }
  EXPECT_EQ(db.one_int("SELECT dp_further_releases('gaussian', 20)"), 0);
  EXPECT_THROW(db.exec("SELECT gaussian_count(" + num(rho) + ") FROM t"), std::runtime_error);
  EXPECT_EQ(db.one_int("SELECT count(*) FROM dp_ledger_entries"), 19);
}

TEST(GaussianLedger, PureLedgerRefusesGaussianReleases) {
  TempFile ledger;
  Db db;
  db.exec("CREATE TABLE t(x)");
  db.exec("SELECT dp_ledger_attach('" + std::string(ledger.path()) + "', 10.0)");
  try {
    db.exec("SELECT gaussian_count(0.01) FROM t");
    ADD_FAILURE() << "released";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("has no delta budget"), std::string::npos) << e.what();
  }
  EXPECT_EQ(db.one_int("SELECT count(*) FROM dp_ledger_entries"), 0);
}
