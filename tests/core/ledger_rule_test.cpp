// The ledger's rule for one more charge (core/ledger_rule.hpp), which the
// SQLite and PostgreSQL ledgers both apply: which histories fit, and the
// refusals' words.
#include "core/ledger_rule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/accounting.hpp"
#include "core/budget.hpp"
#include "core/privacy.hpp"

using optdp::LedgerAccount;
using optdp::zcdp::Entry;

namespace {

constexpr const char* kAttach = "dp_ledger_attach(total_epsilon, total_delta)";

LedgerAccount fresh(double eps, double delta) {
  LedgerAccount a;
  a.total_epsilon = eps;
  a.total_delta = delta;
  a.total_units = optdp::total_units(eps);
  a.total_delta_units = optdp::delta_total_units(delta);
  return a;
}

// Charges c to (a, history) when the rule lets it; returns the refusal otherwise.
std::string charge(LedgerAccount& a, std::vector<Entry>& history, const optdp::LedgerCharge& c) {
  const std::string why = optdp::ledger_refusal(a, optdp::ledger_needs_history(a) ? history : std::vector<Entry>{},
                                                c, kAttach);
  if (!why.empty()) return why;
  a.spent_units += c.units;
  a.spent_delta_units += c.delta_units;
  history.push_back(optdp::ledger_entry(c.epsilon, c.delta, c.rho, c.shift));
  return {};
}

}  // namespace

TEST(LedgerRule, ChargesAndEntries) {
  const auto g = optdp::ledger_charge(0, 0, 0.01);
  EXPECT_EQ(g.units, 0);  // a Gaussian release spends no epsilon by basic composition
  EXPECT_EQ(g.delta_units, 0u);
  EXPECT_EQ(optdp::ledger_entry(0, 0, 0.01).kind, Entry::Kind::gaussian);
  EXPECT_EQ(optdp::ledger_entry(0.5, 1e-6, 0).kind, Entry::Kind::approximate);
  EXPECT_EQ(optdp::ledger_entry(0.5, 0, 0).kind, Entry::Kind::pure);
  EXPECT_EQ(optdp::ledger_charge(0.5, 0, 0).units, 500000000000);
  EXPECT_THROW(optdp::ledger_charge(0, 0, -1), std::invalid_argument);
  EXPECT_THROW(optdp::ledger_charge(0, 0, NAN), std::invalid_argument);
  EXPECT_THROW(optdp::ledger_charge(2e6, 0, 0), std::invalid_argument);
  EXPECT_THROW(optdp::ledger_charge(1, 2, 0), std::invalid_argument);
}

TEST(LedgerRule, PureLedgerIsBasicCompositionInExactUnits) {
  LedgerAccount a = fresh(1.0, 0);
  std::vector<Entry> h;
  // without a delta budget, no release with a rho or a delta
  EXPECT_EQ(charge(a, h, optdp::ledger_charge(0, 0, 0.001)),
            std::string("privacy budget exhausted: this ledger has no delta budget (give one as ") + kAttach +
                "), and a Gaussian release needs one (this one costs rho 0.001)");
  EXPECT_EQ(charge(a, h, optdp::ledger_charge(1e-3, 1e-9, 0)),
            std::string("privacy budget exhausted: this ledger has no delta budget (give one as ") + kAttach +
                "), and this release costs delta 1e-09");
  // 0.125 is exact in units: eight fill the budget exactly (epsilon is checked first)
  for (int i = 0; i < 8; ++i) EXPECT_EQ(charge(a, h, optdp::ledger_charge(0.125, 0, 0)), "") << i;
  EXPECT_EQ(charge(a, h, optdp::ledger_charge(0.125, 0, 0)),
            "privacy budget exhausted: 1 of 1 spent, and this release costs 0.125");
  EXPECT_EQ(charge(a, h, optdp::ledger_charge(1e-3, 1e-9, 0)),
            "privacy budget exhausted: 1 of 1 spent, and this release costs 0.001");
  EXPECT_EQ(h.size(), 8u);
}

TEST(LedgerRule, WithADeltaBudgetZcdpFitsPastBasicComposition) {
  // eps 2^-7 each: 128 by basic composition, many more by zCDP; the rule stops
  // exactly where the accountant does
  LedgerAccount a = fresh(1.0, 1e-6);
  std::vector<Entry> h;
  const auto c = optdp::ledger_charge(0.0078125, 0, 0);
  const auto n = optdp::zcdp::further_releases(optdp::zcdp::History{}, Entry::pure(0.0078125), {1.0, 1e-6});
  ASSERT_GT(n, 128u);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(charge(a, h, c), "") << i;
  const std::string why = charge(a, h, c);
  EXPECT_EQ(why.rfind("privacy budget exhausted: ", 0), 0u) << why;
  EXPECT_NE(why.find(" of 1 spent, and this release costs 0.007813; nor does zCDP fit: rho "), std::string::npos)
      << why;
  EXPECT_EQ(h.size(), n);
}

TEST(LedgerRule, GaussianHistoriesNameBothAccountings) {
  LedgerAccount a = fresh(1.0, 1e-6);
  std::vector<Entry> h;
  const double rho = optdp::zcdp::rho_for_epsilon_delta(1.0, 1e-6);
  EXPECT_EQ(charge(a, h, optdp::ledger_charge(0, 0, rho)), "");  // fills the zCDP budget alone
  const std::string why = charge(a, h, optdp::ledger_charge(0, 0, 1e-9));
  EXPECT_EQ(why.rfind("privacy budget exhausted: with this release (rho 1e-09) basic composition gives (", 0), 0u)
      << why;
  EXPECT_NE(why.find("), over (1, 1e-06); nor does zCDP fit: rho "), std::string::npos) << why;
  // a pure release after a Gaussian one is decided by the accountant too (no exact-units shortcut)
  const std::string pure = charge(a, h, optdp::ledger_charge(1e-6, 0, 0));
  EXPECT_EQ(pure.rfind("privacy budget exhausted: with this release (epsilon 1e-06) basic composition gives (", 0),
            0u) << pure;
  EXPECT_EQ(h.size(), 1u);
}

// The privacy curve (core/pld.hpp): pure releases past what zCDP allows. The
// geometric counts at noise sd 200 (eps 0.0070711): 973 by zCDP, 1,123 by
// their exact curve (the binomial of randomized response); the ledger takes
// exactly what further_releases plans, and refuses the next one with the
// zCDP wording unchanged.
TEST(LedgerRule, PrivacyCurveFitsPastZcdp) {
  const double y = (-2 + std::sqrt(4.0 + 320000.0)) / 80000.0;  // 40000 y^2 + 2y - 2 = 0, y = 1 - alpha
  const double eps = optdp::epsilon_of_alpha(1 - y);
  const optdp::zcdp::Budget b{1.0, 1e-6};
  const auto n = optdp::zcdp::further_releases(optdp::zcdp::History{}, Entry::pure(eps), b);
  EXPECT_GE(n, 1100u);
  EXPECT_LE(n, 1123u);  // never above the exact curve's count
  // zCDP alone stops far earlier.
  std::uint64_t z = 0;
  while (optdp::zcdp::account(optdp::zcdp::History{}, Entry::pure(eps), z + 1, b).zcdp_fits) ++z;
  EXPECT_LT(z, 1000u);
  // The accountant's figures: the PLD fits at n and not at n + 1.
  const auto at_n = optdp::zcdp::account(optdp::zcdp::History{}, Entry::pure(eps), n, b);
  EXPECT_TRUE(at_n.pld_evaluated && at_n.pld_fits && !at_n.zcdp_fits);
  EXPECT_LE(at_n.pld_delta, 1e-6);
  const auto past = optdp::zcdp::account(optdp::zcdp::History{}, Entry::pure(eps), n + 1, b);
  EXPECT_TRUE(past.pld_evaluated && !past.fits());
  EXPECT_GT(past.pld_delta, 1e-6);
  // The ledger: exactly n.
  LedgerAccount a = fresh(1.0, 1e-6);
  std::vector<Entry> h;
  const auto c = optdp::ledger_charge(eps, 0, 0);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(charge(a, h, c), "") << i;
  const std::string why = charge(a, h, c);
  EXPECT_NE(why.find("; nor does zCDP fit: rho "), std::string::npos) << why;
  EXPECT_EQ(h.size(), n);
  // Without a delta budget the curve cannot help (as zCDP cannot).
  EXPECT_FALSE(optdp::zcdp::account(optdp::zcdp::History{}, Entry::pure(eps), 200, {1.0, 0.0}).fits());
  // With a Gaussian entry the PLD is not evaluated (its sigma^2 is not recorded).
  const auto g = optdp::zcdp::account({Entry::gaussian(1e-5)}, Entry::pure(eps), 1100, b);
  EXPECT_FALSE(g.pld_evaluated);
}

TEST(LedgerRule, NoSigmaWhenTheHistoryFitsOnlyByItsPrivacyCurve) {
  // Pure releases of eps 0.01 on (1, 1e-6) as far as the ledger takes them: past
  // basic composition (100) and zCDP, by the privacy curve alone.
  const optdp::zcdp::Budget b{1.0, 1e-6};
  const auto n = optdp::zcdp::further_releases(optdp::zcdp::History{}, Entry::pure(0.01), b);
  EXPECT_EQ(n, 562u);
  LedgerAccount a = fresh(1.0, 1e-6);
  std::vector<Entry> h;
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(charge(a, h, optdp::ledger_charge(0.01, 0, 0)), "") << i;
  const auto alone = optdp::zcdp::account(h, b);
  EXPECT_TRUE(alone.pld_fits && !alone.zcdp_fits && !alone.basic_fits);
  // A Gaussian entry without a shift (here: a sensitivity that is not an
  // integer) turns the curve off, and the history alone already fails basic
  // composition and zCDP: no sigma fits, so planning gives none (NULL in SQL) ...
  for (std::uint64_t k : {1ull, 1000ull})
    EXPECT_TRUE(std::isinf(optdp::zcdp::sigma2_for_further(h, k, 1.5, b))) << k;
  EXPECT_EQ(optdp::zcdp::further_releases(h, Entry::gaussian(optdp::zcdp::rho_of_gaussian(1, 4e4)), b), 0u);
  // ... and the ledger refuses a Gaussian release however small its rho.
  EXPECT_NE(charge(a, h, optdp::ledger_charge(0, 0, 1e-300)), "");
  EXPECT_EQ(h.size(), n);
  // A pure release still fits by the curve up to the planned count (here none).
  EXPECT_EQ(optdp::zcdp::further_releases(h, Entry::pure(0.01), b), 0u);
}

// The refusal's figures have 4 significant digits: spent and costs rounded up,
// the budget rounded down, so the words add up to "does not fit" (issue 30's
// demo printed "4.45888308336 of 4.5 spent, and this release costs
// 0.6931471805599454"). The exact figures are the ledger's own.
TEST(LedgerRule, RefusalFiguresHaveFourDigits) {
  LedgerAccount a = fresh(4.5, 0);
  std::vector<Entry> h;
  const auto c = optdp::ledger_charge(0.6931471805599454, 0, 0);
  for (int i = 0; i < 6; ++i) ASSERT_EQ(charge(a, h, c), "") << i;
  EXPECT_EQ(charge(a, h, c), "privacy budget exhausted: 4.159 of 4.5 spent, and this release costs 0.6932");
  // with a delta budget: zCDP's figures too, rounded the same way
  LedgerAccount d = fresh(4.5, 1e-6);
  std::vector<Entry> hd;
  std::string why;
  for (int i = 0; i < 1000 && why.empty(); ++i) why = charge(d, hd, c);
  EXPECT_EQ(why.rfind("privacy budget exhausted: ", 0), 0u) << why;
  const auto at = why.find("; nor does zCDP fit: rho ");
  ASSERT_NE(at, std::string::npos) << why;
  // every figure after the words has at most 4 significant digits
  const std::string tail = why.substr(at);
  std::size_t i = 0;
  while ((i = tail.find_first_of("0123456789", i)) != std::string::npos) {
    const std::size_t j = tail.find_first_not_of("0123456789.e-", i);
    std::string figure = tail.substr(i, j == std::string::npos ? std::string::npos : j - i);
    const std::size_t e = figure.find('e');
    std::string digits = figure.substr(0, e);
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    digits.erase(0, digits.find_first_not_of('0'));
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    EXPECT_LE(digits.size(), 4u) << figure << " in " << why;
    if (j == std::string::npos) break;
    i = j;
  }
}

// A mixed history decided by the privacy curve: Gaussian counts at sigma 50
// (recorded with their shift, 1) and geometric counts at sd about 50 on (1, 1e-6) (small
// groups: the test stays cheap).
// The ledger takes exactly what further_releases plans, past zCDP; the same
// history without the shifts (an old ledger's entries) is decided by zCDP
// alone and takes fewer (fails if the Gaussian entries' shift is ignored).
TEST(LedgerRule, MixedGaussianHistoryByPrivacyCurve) {
  const optdp::zcdp::Budget b{1.0, 1e-6};
  const double rho = optdp::zcdp::rho_of_gaussian(1, 2500);
  const double alpha = 0.9721, eps = -std::log(alpha);
  std::vector<Entry> h(60, Entry::gaussian(rho, 1));
  for (int i = 0; i < 15; ++i) h.push_back(Entry::pure(eps));
  const auto n = optdp::zcdp::further_releases(h, Entry::gaussian(rho, 1), b);
  std::vector<Entry> old(60, Entry::gaussian(rho));
  for (int i = 0; i < 15; ++i) old.push_back(Entry::pure(eps));
  const auto n_old = optdp::zcdp::further_releases(old, Entry::gaussian(rho), b);
  EXPECT_GT(n, n_old + 5) << n << " " << n_old;
  const auto at_n = optdp::zcdp::account(h, Entry::gaussian(rho, 1), n, b);
  EXPECT_TRUE(at_n.pld_evaluated && at_n.pld_fits && !at_n.zcdp_fits);
  EXPECT_FALSE(optdp::zcdp::account(h, Entry::gaussian(rho, 1), n + 1, b).fits());
  // The rule: the ledger with this history accepts n more and refuses the next.
  LedgerAccount a = fresh(1.0, 1e-6);
  std::vector<Entry> lh;
  for (int i = 0; i < 60; ++i) ASSERT_EQ(charge(a, lh, optdp::ledger_charge(0, 0, rho, 1)), "") << i;
  for (int i = 0; i < 15; ++i) ASSERT_EQ(charge(a, lh, optdp::ledger_charge(eps, 0, 0)), "") << i;
  // Charging one at a time is n evaluations; check the boundary only.
  for (std::uint64_t i = 0; i + 1 < n; ++i) lh.push_back(Entry::gaussian(rho, 1));
  ASSERT_EQ(charge(a, lh, optdp::ledger_charge(0, 0, rho, 1)), "");
  EXPECT_NE(charge(a, lh, optdp::ledger_charge(0, 0, rho, 1)), "");
  // A shift without a rho, or out of range, is refused as an argument.
  EXPECT_THROW(optdp::ledger_charge(0.1, 0, 0, 1), std::invalid_argument);
  EXPECT_THROW(optdp::ledger_charge(0, 0, rho, -1), std::invalid_argument);
}

// The summary a ledger keeps (encode_history, decode_history): it round-trips
// exactly, and any text that is not the one written for these entries is
// refused, so the binding summarises the entries again.
TEST(LedgerRule, KeptSummaryRoundTripsAndRefusesAnythingElse) {
  optdp::zcdp::History h;
  h.add(Entry::pure(0.1), 3);
  h.add(Entry::pure(-std::log(0.99295)), 1121);
  h.add(Entry::approximate(0.1, 1e-8), 2);
  h.add(Entry::gaussian(optdp::zcdp::rho_of_gaussian(1, 40000), 1), 7);
  h.add(Entry::gaussian(optdp::zcdp::rho_of_gaussian(3, 90000), 3), 2);
  h.add(Entry::gaussian(1e-4), 5);  // no shift
  const std::string text = optdp::encode_history(h, 1140);
  const auto back = optdp::decode_history(text, 1140);
  ASSERT_TRUE(back);
  EXPECT_TRUE(*back == h);
  EXPECT_EQ(back->entries, 1140u);
  EXPECT_EQ(optdp::encode_history(*back, 1140), text);
  EXPECT_TRUE(optdp::decode_history(optdp::encode_history({}, 0), 0));
  // Stale: written for another last entry.
  EXPECT_FALSE(optdp::decode_history(text, 1141));
  EXPECT_FALSE(optdp::decode_history(text, 1139));
  EXPECT_FALSE(optdp::decode_history("", 1140));
  // Altered: every single character changed, dropped or doubled.
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::string t = text;
    t[i] = t[i] == '1' ? '2' : '1';
    EXPECT_FALSE(optdp::decode_history(t, 1140)) << i;
    EXPECT_FALSE(optdp::decode_history(text.substr(0, i) + text.substr(i + 1), 1140)) << i;
    EXPECT_FALSE(optdp::decode_history(text.substr(0, i + 1) + text.substr(i), 1140)) << i;
  }
  // A count moved from one group to another, with the digest recomputed as
  // encode_history computes it, still changes the history: only a text that
  // is exactly some history's encoding is read, and this one is that of a
  // different history (the binding's triggers and last id guard the rest).
  optdp::zcdp::History moved = h;
  moved.pures[0.1] -= 1;
  moved.approximates[{0.1, 1e-8}] += 1;
  const auto other = optdp::decode_history(optdp::encode_history(moved, 1140), 1140);
  ASSERT_TRUE(other);
  EXPECT_FALSE(*other == h);
  // Counts that do not add up to the entries; a shift out of range.
  auto replace = [&](std::string from, std::string to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_FALSE(optdp::decode_history(replace("entries 1140", "entries 1141"), 1140));
  optdp::zcdp::History far = h;
  far.add(Entry::gaussian(1e-4, (1 << 20) + 1));
  EXPECT_FALSE(optdp::decode_history(optdp::encode_history(far, 1141), 1141));
}

// The ledger's decisions on its kept summary, updated by each charge and read
// back from its text before the next, are the decisions on the whole
// history, entry by entry, in recorded order or any other: on random mixed
// histories of geometric and Laplace/staircase counts (pure), partition
// selections (eps, delta), Gaussian counts and sums with their shift, and
// Gaussian entries without one, until each budget is spent. The histories
// reach every accounting: basic composition, zCDP and the privacy curve.
TEST(LedgerRule, KeptSummaryDecidesAsTheWholeHistory) {
  const double geometric = -std::log(0.99295), sd200 = optdp::zcdp::rho_of_gaussian(1, 40000);
  const std::vector<optdp::LedgerCharge> kinds = {
      optdp::ledger_charge(geometric * 4, 0, 0),                         // geometric count, alpha^4
      optdp::ledger_charge(0.05, 0, 0),                                  // laplace_sum / staircase_sum
      optdp::ledger_charge(0.02, 0, 0),
      optdp::ledger_charge(0.05, 1e-8, 0),                               // private_groups' partition selection
      optdp::ledger_charge(0, 0, sd200 * 16, 1),                         // gaussian_count, sigma 50
      optdp::ledger_charge(0, 0, optdp::zcdp::rho_of_gaussian(3, 22500), 3),  // gaussian_sum, 3 grid steps
      optdp::ledger_charge(0, 0, sd200 * 16),                            // an old Gaussian entry: no shift
  };
  std::uint64_t state = 12345;
  auto next = [&](std::uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % n;
  };
  int pld_decided = 0, refusals = 0, accepted = 0;
  for (int run = 0; run < 12; ++run) {
    // Some runs leave out the unshifted Gaussian (it turns the curve off) or
    // the Gaussians altogether (then the curve composes only binomials).
    const std::size_t n_kinds = run % 3 == 0 ? 4 : run % 3 == 1 ? 6 : 7;
    LedgerAccount a = fresh(run % 2 ? 1.0 : 0.5, 1e-6);
    std::vector<Entry> entries;
    std::string kept = optdp::encode_history({}, 0);
    std::int64_t last_id = 0;
    for (int attempt = 0; attempt < 400; ++attempt) {
      // Runs of equal releases, as analysts make them, so groups grow.
      const optdp::LedgerCharge c = kinds[next(n_kinds)];
      const std::uint64_t repeat = 1 + next(12);
      bool refused = false;
      for (std::uint64_t r = 0; r < repeat && !refused; ++r) {
        const auto history = optdp::decode_history(kept, last_id);
        ASSERT_TRUE(history) << run << " " << attempt;
        const std::string on_kept = optdp::ledger_refusal(a, *history, c, kAttach);
        const std::string on_entries = optdp::ledger_refusal(a, entries, c, kAttach);
        ASSERT_EQ(on_kept, on_entries) << run << " " << attempt;
        std::vector<Entry> reversed(entries.rbegin(), entries.rend());
        ASSERT_EQ(optdp::ledger_refusal(a, reversed, c, kAttach), on_entries) << run << " " << attempt;
        if (!on_kept.empty()) {
          refused = true;
          ++refusals;
          continue;
        }
        ++accepted;
        std::vector<Entry> with = entries;
        with.push_back(optdp::ledger_entry(c.epsilon, c.delta, c.rho, c.shift));
        const auto acc = optdp::zcdp::account(entries, with.back(), 1, {a.total_epsilon, a.total_delta});
        if (acc.pld_fits && !acc.zcdp_fits && !acc.basic_fits) ++pld_decided;
        a.spent_units += c.units;
        a.spent_delta_units += c.delta_units;
        entries = std::move(with);
        optdp::zcdp::History h = *history;
        h.add(entries.back());
        kept = optdp::encode_history(h, ++last_id);
      }
      if (refused && next(4) == 0) break;  // a spent budget: the next run
    }
  }
  std::printf("accepted %d, refused %d, decided by the privacy curve %d\n", accepted, refusals, pld_decided);
  EXPECT_GT(accepted, 300);
  EXPECT_GT(refusals, 30);
  EXPECT_GT(pld_decided, 10);
}
